"""Connections: did the session count climb to `max_connections` and stay there?

Exhaustion is a climb that ends flat against a ceiling: the limit the alert states, or (when nobody says)
a flat top at or near what RDS's default formula allows (`LEAST(memory / 9531392, 5000)`; freeable memory
is a lower bound of the instance's memory, so it gives a lower bound of that limit). A count that swings
with a periodic workload, or that rises but stays far below the limit, is not exhaustion. Performance
Insights says how: sessions idle in transaction waiting on their client (`Client:ClientRead`, often holding
row locks) leak from a pool; a flood of new backends (`LWLock:ProcArray`, health-check queries) means the
application opens connections instead of reusing a pool.
"""

from __future__ import annotations

import re
from datetime import datetime

from sredrill.agents.reference.catalog import DEFAULT_MAX_CONNECTIONS_CAP, MEMORY_PER_CONNECTION_BYTES
from sredrill.agents.reference.findings import Case, Fact, Finding, Verdict, when
from sredrill.agents.reference.observations import AlertView
from sredrill.agents.reference.workload import WaitGroup
from sredrill.diagnosis import FactKind

__all__ = ["assess_connections", "connection_limit", "session_mechanism"]

_MODE = "connection_exhaustion"
_STATED = (
    re.compile(r"max_connections[^\d%]{0,12}([\d][\d,]*)", re.I),
    re.compile(r"connection (?:limit|slots?)[^\d%]{0,12}([\d][\d,]*)", re.I),
    re.compile(r"\(\s*[\d,.]+\s+of\s+([\d][\d,]*)\s*\)", re.I),
)
_PERCENT_OF = re.compile(r"([\d.]+)\s*%\s*of\s*max[_ ]connections", re.I)


def connection_limit(alert: AlertView) -> float | None:
    """`max_connections` when the alert states it (`max_connections (1700)`, `(1870 of 3400)`, `55% of …`)."""
    text = alert.text
    if "connection" not in text.lower():
        return None
    for pattern in _STATED:
        if m := pattern.search(text):
            number = float(m.group(1).replace(",", ""))
            if number >= 10:
                return number
    if (m := _PERCENT_OF.search(text)) and alert.threshold:
        return alert.threshold / (float(m.group(1)) / 100)
    return None


def _default_limit(case: Case) -> float | None:
    """A lower bound of the default `max_connections`, from freeable memory (a lower bound of memory)."""
    mem = case.file.profile("FreeableMemory")
    if mem is None:
        return None
    return min(float(DEFAULT_MAX_CONNECTIONS_CAP), mem.high / MEMORY_PER_CONNECTION_BYTES)


def _cpu_saturated_first(case: Case, onset: datetime | None) -> Finding | None:
    """Sessions that pile up because CPU saturated minutes earlier and every query got slower: a symptom."""
    cpu, w = case.file.profile("CPUUtilization"), case.workload
    if cpu is None or w is None or onset is None or cpu.onset_at is None or cpu.direction <= 0:
        return None
    early = (onset - cpu.onset_at).total_seconds() >= 2 * case.file.period_s
    busy = cpu.end >= 88 and w.share(WaitGroup.CPU) >= 0.5
    idle = w.share(WaitGroup.CLIENT, WaitGroup.LOCK, WaitGroup.PROCARRAY) >= 0.2
    if early and busy and not idle:
        return Finding(
            _MODE,
            Verdict.SYMPTOM,
            "the session count reaches its limit only after CPU saturated: queries slowed down and sessions piled "
            "up, a consequence of the CPU saturation, not a separate fault",
            onset=onset,
            follows="cpu_saturation",
            against=(
                *case.trend("CPUUtilization", FactKind.RISING, since=cpu.onset_at),
                *case.present(w.top_wait(WaitGroup.CPU)),
            ),
        )
    return None


def assess_connections(case: Case) -> Finding:
    """Is connection exhaustion a root cause?"""
    p = case.file.profile("DatabaseConnections")
    if p is None:
        w = case.workload
        if w is not None and w.share(WaitGroup.CLIENT) >= 0.5:
            return Finding(
                _MODE,
                Verdict.UNASSESSED,
                "DatabaseConnections is missing; most sessions idle on their client, but the count against the "
                "limit cannot be checked",
            )
        return Finding(
            _MODE, Verdict.UNASSESSED, "the session count cannot be checked (DatabaseConnections is missing)"
        )
    stated = connection_limit(case.file.alert)
    default = _default_limit(case)
    peak = p.extreme if p.direction > 0 else p.high
    grew = p.direction > 0 and p.ratio >= 1.5
    if stated is not None:
        limit_text = f"the max_connections limit of {stated:,.0f}"
        at_limit = peak >= 0.93 * stated and (p.flat_top or p.steady_end or p.end >= 0.93 * stated)
        far = peak < 0.7 * stated
    elif default is not None and peak < 0.5 * default:
        limit_text = f"the at least {default:,.0f} sessions the instance's memory allows"
        at_limit, far = False, True
    else:
        cap = (
            default is not None
            and default >= DEFAULT_MAX_CONNECTIONS_CAP
            and abs(p.end - DEFAULT_MAX_CONNECTIONS_CAP) <= 0.05 * DEFAULT_MAX_CONNECTIONS_CAP
        )
        limit_text = (
            f"the {DEFAULT_MAX_CONNECTIONS_CAP:,} ceiling of RDS's default max_connections formula"
            if cap
            else "a hard ceiling"
        )
        # A flat top after a climb is a hard ceiling; without a visible climb, only RDS's own cap identifies one.
        at_limit, far = p.flat_top or cap, False
    if grew and p.recovered and (stated is None or peak >= 0.93 * stated):
        return Finding(
            _MODE,
            Verdict.RECOVERED,
            f"sessions climbed to {peak:,.0f} {when(case, p.extreme_at)} and have fallen back to {p.end:,.0f}",
            onset=p.onset_at,
            against=(
                *case.level("DatabaseConnections", FactKind.BELOW, within=1.02 * peak),
                *case.trend("DatabaseConnections", FactKind.FALLING, since=p.extreme_at),
                *case.level("DatabaseConnections", FactKind.BELOW, since=case.back_since("DatabaseConnections")),
            ),
        )
    pinned = at_limit and p.steady_end
    if not ((grew or pinned) and at_limit):
        if p.swings:
            shape = "swing with the workload's cycle" if p.high - p.low >= 0.3 * p.median else "fluctuate"
            reason = (
                f"sessions {shape} between {p.low:,.0f} and {p.high:,.0f} with no upward trend, "
                f"{'far below' if far else 'below'} {limit_text}"
            )
        elif grew:
            reason = (
                f"sessions rise from {p.baseline:,.0f} to {peak:,.0f} but stay {'far ' if far else ''}below "
                f"{limit_text}: more sessions pile up because queries are slower, a consequence rather than a cause"
            )
        elif p.direction < 0 and p.recovered:
            reason = (
                f"sessions dip from {p.baseline:,.0f} to {p.extreme:,.0f} and come back: clients briefly lost the "
                "database, the opposite of exhaustion"
            )
        elif p.direction < 0:
            reason = (
                f"sessions drop from {p.baseline:,.0f} to {p.end:,.0f}: clients lost the database, the opposite of "
                "exhaustion"
            )
        else:
            reason = f"sessions stay around {p.median:,.0f}, {'far ' if far else ''}below {limit_text}"
        return Finding(_MODE, Verdict.ABSENT, reason, against=case.quiet("DatabaseConnections"))

    cpu_first = _cpu_saturated_first(case, p.onset_at)
    if cpu_first is not None:
        return cpu_first
    src = case.src
    metric = "DatabaseConnections"
    if grew:
        climb = f"climb from {p.baseline:,.0f} {when(case, p.onset_at)} to {peak:,.0f} and flatten against {limit_text}"
        cites = (
            *case.trend(metric, FactKind.RISING, since=p.onset_at),
            *case.level(metric, FactKind.ABOVE, since=case.held_since(metric)),
        )
    else:
        climb = f"sit at {peak:,.0f}, pinned against {limit_text}, for the whole window"
        cites = (*case.level(metric, FactKind.ABOVE), *case.trend(metric, FactKind.FLAT))
    facts = [Fact(f"Open sessions (DatabaseConnections) {climb}.", (src.metrics,), cites)]
    # Who holds the sessions (the cause) before what they cost (memory).
    mechanism, pi_facts = session_mechanism(case, p.onset_at, p.extreme_at)
    facts.extend(pi_facts)
    mem = case.file.profile("FreeableMemory")
    if mem is not None and mem.direction < 0 and mem.baseline - mem.end >= 0.5e9:
        facts.append(
            Fact(
                f"Freeable memory falls by {(mem.baseline - mem.end) / 1e9:.1f} GB as backends accumulate.",
                (src.metrics,),
                case.trend("FreeableMemory", FactKind.FALLING, since=mem.onset_at),
            )
        )
    summary = f"connection exhaustion: {mechanism}, so {case.instance} runs out of connection slots ({limit_text})"
    chain = (mechanism, "the connection count reaches max_connections", "new connections are refused")
    return Finding(_MODE, Verdict.CAUSE, summary, chain, tuple(facts), p.onset_at, location=case.resource(metric))


def session_mechanism(case: Case, onset: datetime | None, peak_at: datetime | None) -> tuple[str, list[Fact]]:
    """How the sessions pile up (leak or storm), from Performance Insights."""
    w = case.workload
    if w is None:
        return "sessions accumulate until none are left", []
    facts = []
    src = case.src.insights
    idle = w.top_by(WaitGroup.CLIENT)
    client_share = w.share(WaitGroup.CLIENT)
    procarray = w.share(WaitGroup.PROCARRAY)
    checks = [s for s in w.statements if s.is_health_check]
    lock = w.top_by(WaitGroup.LOCK)
    # A heavy steady reader dilutes the instance-wide shares: a statement's own waits say what it does.
    storm = w.top_by(WaitGroup.PROCARRAY)
    storming = storm is not None and storm.share(WaitGroup.PROCARRAY) >= 0.1
    idling = idle is not None and idle.share(WaitGroup.CLIENT) >= 0.5
    fast = onset is not None and peak_at is not None and (peak_at - onset).total_seconds() <= 6 * case.file.period_s
    if procarray >= 0.1 or storming or checks or (fast and client_share < 0.4 and not idling):
        parts = []
        if procarray > 0:
            parts.append(
                f"LWLock:ProcArray contention ({procarray:.0%} of the load), which grows with the number of backends"
            )
        if checks:
            rate = checks[0].calls_per_sec
            parts.append(
                f"{rate:,.0f} connection health-check queries per second"
                if rate is not None
                else "connection health-check queries among the top statements"
            )
        if idle is not None and client_share >= 0.1:
            parts.append(f"sessions idle on their client (Client:ClientRead, {client_share:.0%})")
        user = w.top_user()
        flooding = user[0] if user and user[1] >= 0.8 * w.total else None
        if flooding is None and storming and storm is not None:
            flooding = w.owner_of(storm)
        who = f" Nearly all sessions belong to user {flooding}." if flooding else ""
        # The user who opens the sessions is the cause; the waits and health checks show how.
        cited = case.present(
            w.user(flooding),
            w.top_wait(WaitGroup.PROCARRAY) if procarray > 0 else None,
            checks[0].statement if checks else None,
            storm.statement if storming and storm is not None else None,
            w.top_wait(WaitGroup.CLIENT) if idle is not None and client_share >= 0.1 else None,
        )
        facts.append(Fact("Performance Insights shows " + ", ".join(parts) + "." + who, (src,), cited))
        who_app = f"the {flooding} application" if flooding else "the application"
        return (
            f"{who_app} floods the database with new connections instead of reusing a connection pool",
            facts,
        )
    if lock is not None and w.share(WaitGroup.LOCK) >= 0.3 and client_share < 0.2:
        facts.append(
            Fact(
                f"Performance Insights: {w.share(WaitGroup.LOCK):.0%} of the database load waits on row locks "
                f"({lock.label}), so sessions pile up behind the lock holders.",
                (src,),
                case.present(w.top_wait(WaitGroup.LOCK), lock.statement),
            )
        )
        return "sessions pile up blocked on row locks, each holding a connection", facts
    if idle is not None and (client_share >= 0.2 or idling):
        owner = w.owner_of(idle)
        by = f" of user {owner}" if owner else ""
        facts.append(
            Fact(
                f"Performance Insights: {idle.label}{by} spends {idle.share(WaitGroup.CLIENT):.0%} of its load idle "
                f"in transaction, waiting on its client (Client:ClientRead, {client_share:.0%} of all load).",
                (src,),
                case.present(idle.statement, w.user(owner), w.top_wait(WaitGroup.CLIENT)),
            )
        )
        if lock is not None and w.share(WaitGroup.LOCK) >= 0.1:
            facts.append(
                Fact(
                    f"Other sessions wait on the row locks those idle transactions hold ({lock.label}, "
                    f"Lock waits {w.share(WaitGroup.LOCK):.0%} of the load).",
                    (src,),
                    case.present(w.top_wait(WaitGroup.LOCK), lock.statement),
                )
            )
        app = f"the {owner} client" if owner else "the application"
        return (
            f"{app} leaks sessions that stay idle in transaction instead of returning them to its connection pool",
            facts,
        )
    return "sessions accumulate until none are left", facts
