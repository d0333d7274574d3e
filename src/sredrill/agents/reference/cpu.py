"""CPU: is it saturated, and is that the root cause or a symptom of something else?

Saturation is CPU pinned near 100% for minutes, not a high but steady level. It is a root cause when the
sessions really spend their time on CPU (the `CPU` wait dominates Performance Insights) in an expensive
statement: an analytical query or a lookup whose predicate defeats the index and scans the table on every
call. It is a symptom when it starts with something else and the waits say so: with a connection flood
(thousands of cheap calls, `LWLock:ProcArray`), or with a write storm (the sessions wait on WAL, data file
writes and buffer mapping, and CPU is a minority of the load). High CPU that was already there before the
incident, from a read-only workload, is a red herring.
"""

from __future__ import annotations

from datetime import datetime
from statistics import median

from sredrill.agents.reference.checkpoints import WriteStorm
from sredrill.agents.reference.findings import Case, Fact, Finding, Verdict, clock, when
from sredrill.agents.reference.statistics import Profile
from sredrill.agents.reference.workload import StatementView, WaitGroup
from sredrill.diagnosis import Citation, FactKind

__all__ = ["assess_cpu"]

_MODE = "cpu_saturation"
_SATURATED = 88.0
# CPU at or above this is a CPU incident (the level CPU alarms use): a peak short of it never saturated.
_INCIDENT = 90.0
# A statement is CPU-bound when this much of its own load is on CPU, and it is the CPU's consumer when it holds
# this much of the CPU load: then it is a cause of its own, whatever else runs beside it.
_CPU_BOUND = 0.7
_CONSUMER = 0.4
# Below this many ms of CPU per call a statement is a cheap call (a flood's), not an expensive plan.
_CHEAP_MS = 3.0


def _tail(case: Case, p: Profile) -> list[float]:
    values = case.file.values("CPUUtilization")
    return list(values[p.onset :] if p.onset is not None and p.direction > 0 else values[len(values) // 2 :])


def _statement_facts(case: Case, stmt: StatementView) -> tuple[str, str, list[Fact]]:
    """Why the top CPU statement burns CPU: the root-cause clause, a short chain step, and the facts."""
    w = case.workload
    owner = w.owner_of(stmt) if w is not None else None
    by = f" from user {owner}" if owner else ""
    cpu = stmt.load_in(WaitGroup.CPU)
    per_call = stmt.cpu_ms_per_call
    rate = (
        f" at {stmt.calls_per_sec:,.0f} calls per second, about {per_call:.0f} ms of CPU per call"
        if per_call is not None and stmt.calls_per_sec and stmt.calls_per_sec >= 1
        else ""
    )
    total = w.total if w is not None else 0.0
    facts = [
        Fact(
            f"Performance Insights: {stmt.label}{by} is the top statement, {cpu:.1f} of the "
            f"{total:.1f} active sessions on CPU{rate}.",
            (case.src.insights,),
            case.present(stmt.statement, w.top_wait(WaitGroup.CPU) if w is not None else None),
        )
    ]
    table = f" of {stmt.table}" if stmt.table else ""
    query = f"a CPU-bound query ({stmt.label}{by})"
    if stmt.index_defeat:
        why = f"{stmt.index_defeat}, so each call runs a sequential scan{table}"
        facts.append(Fact(f"The query is CPU-bound because {why}.", (case.src.insights,), case.present(stmt.statement)))
        return f"{query}", f"because {why}", facts
    if stmt.is_analytical:
        facts.append(
            Fact(
                "The query aggregates and joins large tables: hash joins, sorts and sequential scans all run on CPU.",
                (case.src.insights,),
                case.present(stmt.statement),
            )
        )
        return f"a CPU-heavy analytical query ({stmt.label}{by})", "as it aggregates and joins large tables", facts
    if per_call is not None and per_call >= 10:
        facts.append(
            Fact(
                f"{per_call:.0f} ms of CPU per call is far too much for a lookup: the signature of a sequential scan "
                "or an inefficient plan.",
                (case.src.insights,),
                case.present(stmt.statement),
            )
        )
        return query, "as its plan scans far more rows than it returns (a sequential scan)", facts
    return query, "", facts


def _own_consumer(case: Case, stmt: StatementView | None) -> bool:
    """The statement burns the CPU itself: CPU-bound, not cheap, and the largest share of the CPU load. A busy
    neighbour (a report reading from disk, a second fault's writes) then dilutes the instance's CPU share without
    making the CPU a symptom of anything."""
    w = case.workload
    if stmt is None or w is None:
        return False
    cpu = stmt.load_in(WaitGroup.CPU)
    total_cpu = sum(s.load_in(WaitGroup.CPU) for s in w.statements)
    cost = stmt.cpu_ms_per_call
    return (
        stmt.share(WaitGroup.CPU) >= _CPU_BOUND
        and (cost is None or cost >= _CHEAP_MS)
        and total_cpu > 0
        and cpu / total_cpu >= _CONSUMER
    )


def _together(a: datetime | None, b: datetime | None, period_s: float) -> bool:
    """Two onsets within one period of each other; unknown onsets (a window that starts mid-incident) count."""
    return a is None or b is None or abs((a - b).total_seconds()) <= period_s


def _not_after(cause: datetime | None, effect: datetime | None, period_s: float) -> bool:
    """The cause did not start after the effect (give or take a period); unknown onsets count."""
    return cause is None or effect is None or (cause - effect).total_seconds() <= period_s


def assess_cpu(case: Case, storm: WriteStorm, connections: Finding) -> Finding:
    """Is CPU saturation a root cause, a symptom, a red herring, or absent?"""
    p = case.file.profile("CPUUtilization")
    w = case.workload
    if p is None:
        load = case.file.profile("DBLoadCPU")
        load_share = w.share(WaitGroup.CPU) if w is not None else 0.0
        top = w.top_by(WaitGroup.CPU) if w is not None else None
        if load is not None and load.rose(4) and top is not None and (load_share >= 0.7 or _own_consumer(case, top)):
            phrase, why, facts = _statement_facts(case, top)
            facts.insert(
                0,
                Fact(
                    f"CPUUtilization is missing; the database load on CPU (DBLoadCPU) rises from {load.baseline:.1f} "
                    f"to {load.end:.1f} active sessions {when(case, load.onset_at)}.",
                    (case.src.metrics,),
                    (
                        *case.trend("DBLoadCPU", FactKind.RISING, since=load.onset_at),
                        *case.level("DBLoadCPU", FactKind.ABOVE, since=case.held_since("DBLoadCPU")),
                    ),
                ),
            )
            summary = (
                f"CPU saturation (inferred; CPUUtilization is missing): {phrase} keeps the CPUs busy {why}".rstrip()
            )
            chain: tuple[str, ...] = (phrase, "CPU saturated", "every query slows down")
            return Finding(
                _MODE, Verdict.CAUSE, summary, chain, tuple(facts), load.onset_at, location=case.resource("DBLoadCPU")
            )
        return Finding(_MODE, Verdict.UNASSESSED, "CPU utilisation cannot be checked (CPUUtilization is missing)")

    if p.recovered and p.direction > 0 and p.extreme >= _SATURATED:
        back = case.back_since("CPUUtilization")
        return Finding(
            _MODE,
            Verdict.RECOVERED,
            f"CPU was pinned at {p.extreme:.0f}% {when(case, p.extreme_at)} and is back to {p.end:.0f}%"
            if p.extreme >= _INCIDENT
            else f"CPU rose to {p.extreme:.0f}% {when(case, p.extreme_at)}, short of saturation, and is back to "
            f"{p.end:.0f}%",
            onset=p.onset_at,
            against=(
                *case.level("CPUUtilization", FactKind.BELOW, within=_INCIDENT),
                *case.trend("CPUUtilization", FactKind.FALLING, since=p.extreme_at),
                *case.level("CPUUtilization", FactKind.BELOW, since=back),
            ),
        )
    tail = _tail(case, p)
    level = median(tail)
    saturated = level >= _SATURATED
    cpu_share = w.share(WaitGroup.CPU) if w is not None else None
    top = w.top_by(WaitGroup.CPU) if w is not None else None
    if not saturated:
        if level >= 65 and (p.onset is None or p.direction <= 0):
            who = (
                f"; the CPU time belongs to {top.label}, a read-only query"
                if top is not None and not top.is_write
                else ""
            )
            return Finding(
                _MODE,
                Verdict.ABSENT,
                f"CPU sits at {p.low:.0f}-{p.high:.0f}% from the start of the window, before anything else changes, "
                f"and never saturates{who}: a red herring that produces no WAL and does not explain the incident",
                against=case.quiet("CPUUtilization"),
            )
        if p.swings:
            reason = (
                f"CPU swings between {p.low:.0f}% and {p.high:.0f}% and every peak comes back down: never saturated"
            )
        else:
            reason = f"CPU stays between {p.low:.0f}% and {p.high:.0f}%, far from saturation"
        # A rise short of saturation whose CPU time is a read-only query's (a report): the busy CPU is accounted
        # for, and harmless.
        reader = p.direction > 0 and top is not None and not top.is_write and not top.is_maintenance
        if reader and top is not None:
            reason += f"; the extra CPU time belongs to {top.label}, a read-only query"
        return Finding(
            _MODE,
            Verdict.ABSENT,
            reason,
            against=(*case.quiet("CPUUtilization"), *(case.present(top.statement) if reader and top else ())),
            accounts_for=("CPUUtilization",) if reader else (),
        )

    rise = f"from {p.baseline:.0f}% {when(case, p.onset_at)} " if p.direction > 0 else ""
    held = case.level("CPUUtilization", FactKind.ABOVE, since=case.held_since("CPUUtilization"))
    pinned = Fact(
        f"CPU utilisation climbs {rise}to about {level:.0f}% and stays pinned.",
        (case.src.metrics,),
        (*case.trend("CPUUtilization", FactKind.RISING, since=p.onset_at), *held),
    )
    cpu_onset = p.onset_at
    period = case.file.period_s
    own = _own_consumer(case, top)
    if connections.is_cause and not own and _together(connections.onset, cpu_onset, period):
        # Unknown call cost (no call rate) is not evidence of cheap calls; without PI the timing alone decides.
        cost = top.cpu_ms_per_call if top is not None else None
        cheap = cost is not None and cost < 10
        procarray = w is not None and w.share(WaitGroup.PROCARRAY) > 0
        if cheap or procarray or w is None:
            together = (
                f"from the same minute ({clock(cpu_onset)})" if cpu_onset is not None else "throughout the window"
            )
            return Finding(
                _MODE,
                Verdict.SYMPTOM,
                "CPU saturation is a consequence of the connection flood, not a second problem: CPU is pinned "
                "together with the session count, and the load is many cheap calls plus backend contention "
                "rather than one expensive query",
                facts=(
                    Fact(
                        f"CPU utilisation sits at about {level:.0f}% together with the session count, {together}.",
                        (case.src.metrics,),
                        (*held, *case.trend("DatabaseConnections", FactKind.RISING, since=connections.onset)),
                    ),
                ),
                onset=cpu_onset,
                follows=connections.mode,
                against=(
                    *case.trend("DatabaseConnections", FactKind.RISING, since=connections.onset),
                    *case.present(
                        w.top_wait(WaitGroup.PROCARRAY) if w is not None else None,
                        top.statement if cheap and top is not None else None,
                    ),
                ),
            )
    storming = storm.heavy or storm.saturated
    io_bound = (cpu_share < 0.5 if cpu_share is not None else storm.saturated) and not own
    if storming and io_bound and _not_after(storm.onset, cpu_onset, period):
        share = f"CPU is just {cpu_share:.0%} of the database load, and " if cpu_share is not None else ""
        return Finding(
            _MODE,
            Verdict.SYMPTOM,
            f"CPU at {level:.0f}% is a symptom of the write storm, not its root cause: it comes with the WAL and "
            f"write I/O surge, {share}the sessions wait on I/O and buffer contention",
            facts=(
                Fact(
                    f"CPU utilisation sits at about {level:.0f}% {when(case, cpu_onset) or 'throughout'}, with the "
                    "write surge"
                    + (f"; CPU is {cpu_share:.0%} of the database load." if cpu_share is not None else "."),
                    (case.src.metrics, case.src.insights) if cpu_share is not None else (case.src.metrics,),
                    (*held, *case.present(w.top_wait_outside(WaitGroup.CPU) if w is not None else None)),
                ),
            ),
            onset=cpu_onset,
            follows="checkpoint_io_storm",
            # What the sessions do instead of computing: the writes, and the statement that issues them.
            against=(
                *case.present(
                    w.top_wait(WaitGroup.WAL, WaitGroup.WRITE) if w is not None else None,
                    writer.statement if w is not None and (writer := w.top_writer()) is not None else None,
                ),
                *_storm_rise(case, storm),
            )[:3],
        )
    if top is None or (cpu_share is not None and cpu_share < 0.5 and not own):
        if w is None:
            summary = "CPU saturation: the CPUs stay pinned (no Performance Insights to name the query)"
            chain0 = ("CPU-heavy workload", "CPU saturated")
            return Finding(
                _MODE, Verdict.CAUSE, summary, chain0, (pinned,), cpu_onset, location=case.resource("CPUUtilization")
            )
        # Pinned, yet the sessions mostly wait elsewhere: CPU is probably a consequence, but of nothing the
        # evidence names, so the question stays open rather than being explained away.
        waits = w.describe_waits() if w is not None else ""
        return Finding(
            _MODE,
            Verdict.UNASSESSED,
            f"CPU is pinned near {level:.0f}% but is only {cpu_share:.0%} of the database load (top waits: {waits}): "
            "likely a consequence of something else, which the evidence does not identify",
            onset=cpu_onset,
        )
    phrase, why, facts = _statement_facts(case, top)
    summary = f"CPU saturation: {phrase} keeps the CPUs of {case.instance} pinned near {level:.0f}%"
    summary += f", {why}" if why else ""
    step = "sequential scan on every call" if "sequential scan" in why else "expensive plan on every call"
    chain = (phrase, step, "CPU saturated", "every query on the instance slows down")
    return Finding(
        _MODE, Verdict.CAUSE, summary, chain, (pinned, *facts), cpu_onset, location=case.resource("CPUUtilization")
    )


def _storm_rise(case: Case, storm: WriteStorm) -> tuple[Citation, ...]:
    """The write surge's own rise (WAL generation, else write IOPS), as a citation."""
    for metric in ("TransactionLogsGeneration", "WriteIOPS"):
        cites = case.trend(metric, FactKind.RISING, since=storm.onset)
        if cites:
            return cites
    return ()
