"""Storage: is the volume running out, did it already, or did it dip and recover?

`FreeStorageSpace` falling steadily toward zero (minutes left at the current burn rate, or a few percent of
the provisioned size) is storage exhaustion; RDS's own "low storage" and "no free storage left … shut
down" events confirm it, and they are the evidence to reason from when the metric is missing. A dip that
ends with the volume growing (storage autoscaling, a storage modification) and free space back well above
the trough is a transient: the alert that fired on the dip is stale.
"""

from __future__ import annotations

import re

from sredrill.agents.reference.catalog import GB
from sredrill.agents.reference.checkpoints import WriteStorm
from sredrill.agents.reference.findings import Case, Fact, Finding, Verdict, value, when
from sredrill.agents.reference.timeline import EventKind, TimedEvent, describe_delta
from sredrill.agents.reference.workload import StatementView, WaitGroup
from sredrill.diagnosis import FactKind

__all__ = ["assess_storage"]

_MODE = "storage_full"
_PROVISIONED = re.compile(r"provisioned storage:\s*([\d.,]+)\s*(gib|gb|tib|tb)", re.I)
# Minutes of free space left at the current burn rate below which the volume is running out.
_RUNWAY_S = 3600.0


_ADDS_ROWS = frozenset({"insert", "copy"})


def _percent(fraction: float) -> str:
    return f"{fraction:.1%}" if fraction < 0.01 else f"{fraction:.0%}"


def _provisioned(events: tuple[TimedEvent, ...]) -> float | None:
    size = None
    for e in events:
        if m := _PROVISIONED.search(e.event.message):
            number = float(m.group(1).replace(",", ""))
            size = number * (1e12 if m.group(2).lower().startswith("t") else GB)
    return size


def _consumer(case: Case) -> StatementView | None:
    """The statement consuming space: the most load on WAL, data-file writes, extension and temp files."""
    w = case.workload
    if w is None:
        return None
    groups = (WaitGroup.WAL, WaitGroup.WRITE, WaitGroup.EXTEND, WaitGroup.TEMP)
    free = [s for s in w.statements if s.text not in case.claimed and s.load_in(*groups) > 0]
    # Space goes to rows added (INSERT, COPY) before rows rewritten in place (UPDATE), whatever the WAL.
    return max(free, key=lambda s: (s.verb in _ADDS_ROWS, s.load_in(*groups))) if free else w.top_by(*groups)


def _retained_wal(case: Case) -> Fact | None:
    """WAL kept on disk for an unconsumed replication slot, when it accounts for most of the lost space."""
    free, wal = case.file.profile("FreeStorageSpace"), case.file.profile("TransactionLogsDiskUsage")
    if free is None or wal is None or wal.direction <= 0:
        return None
    lost, kept = free.baseline - free.end, wal.end - wal.baseline
    if lost <= 0 or kept < 0.5 * lost:
        return None
    return Fact(
        f"Disk used by transaction logs (TransactionLogsDiskUsage) grows by {value('TransactionLogsDiskUsage', kept)} "
        f"while free storage loses {value('FreeStorageSpace', lost)}: the space goes to WAL retained for a "
        "replication slot that is not being consumed.",
        (case.src.metrics,),
        (
            *case.trend("TransactionLogsDiskUsage", FactKind.RISING, since=wal.onset_at),
            *case.trend("FreeStorageSpace", FactKind.FALLING, since=free.onset_at),
        ),
    )


def _consumer_facts(case: Case, storm: WriteStorm) -> tuple[str, list[Fact]]:
    """How the space is being consumed (a phrase for the summary) and the facts behind it."""
    retained = _retained_wal(case)
    if retained is not None:
        return "write-ahead log retained on disk for a lagging replication slot", [retained]
    stmt = _consumer(case)
    facts: list[Fact] = []
    if stmt is None:
        if storm.heavy:
            return "a burst of writes", facts
        return "writes", facts
    owner = case.workload.owner_of(stmt) if case.workload else None
    temp = stmt.share(WaitGroup.TEMP)
    if temp >= 0.3:
        wal_flat = storm.wal is None or storm.wal_ratio < 2
        why = "; WAL generation stays flat, as temporary files are not WAL-logged" if wal_flat else ""
        facts.append(
            Fact(
                f"Performance Insights: {stmt.label} spills sorts and hashes to temporary files "
                f"(IO:BufFileWrite and IO:BufFileRead are {temp:.0%} of its waits){why}.",
                (case.src.insights,),
                case.present(
                    stmt.statement, case.workload.top_wait(WaitGroup.TEMP) if case.workload is not None else None
                ),
            )
        )
        return f"temporary files spilled by {stmt.label}", facts
    extend = stmt.share(WaitGroup.EXTEND)
    detail = " and waits on extending data files (IO:DataFileExtend)" if extend >= 0.1 else ""
    by = f" (user {owner})" if owner else ""
    facts.append(
        Fact(
            f"Performance Insights: {stmt.label}{by} is the top writing statement at {stmt.load:.1f} active "
            f"sessions{detail}.",
            (case.src.insights,),
            case.present(
                stmt.statement,
                case.workload.user(owner) if case.workload is not None else None,
                case.workload.top_wait(WaitGroup.EXTEND) if extend >= 0.1 and case.workload is not None else None,
            ),
        )
    )
    return f"{stmt.label}", facts


def _event_facts(case: Case, events: tuple[TimedEvent, ...]) -> list[Fact]:
    if not events:
        return []
    parts = []
    for e in events:
        rel = f" ({describe_delta(e.offset_s)})" if e.offset_s is not None else ""
        parts.append(f"“{e.event.message.split('. ')[0].rstrip('.')}”{rel}")
    return [Fact("RDS events: " + "; ".join(parts) + ".", (case.src.events,), case.present(*_telling(events)))]


def _telling(events: tuple[TimedEvent, ...]) -> list[object]:
    """The events to cite (at most three): a shutdown first, then low-storage warnings, then the rest."""
    order = (EventKind.STORAGE_FULL, EventKind.LOW_STORAGE, EventKind.STORAGE_GROWN)
    ranked = sorted(events, key=lambda e: order.index(e.kind) if e.kind in order else len(order))
    return [e.event for e in ranked[:3]]


def assess_storage(case: Case, storm: WriteStorm) -> Finding:
    """Is running out of storage a root cause (or a transient that already recovered)?"""
    tl = case.timeline
    storage_events = tl.recent(EventKind.LOW_STORAGE, EventKind.STORAGE_FULL, EventKind.STORAGE_GROWN)
    size = _provisioned(tl.of(EventKind.LOW_STORAGE, EventKind.STORAGE_FULL, EventKind.STORAGE_GROWN))
    full = tl.recent(EventKind.STORAGE_FULL)
    grown = [e for e in tl.recent(EventKind.STORAGE_GROWN) if e.completed] or list(tl.recent(EventKind.STORAGE_GROWN))
    free = case.file.values("FreeStorageSpace")
    p = case.file.profile("FreeStorageSpace")
    src = case.src.metrics
    if p is None:
        low = tl.recent(EventKind.LOW_STORAGE, EventKind.STORAGE_FULL)
        if not low or (grown and not full and grown[-1].at > low[-1].at):
            verdict = Verdict.UNASSESSED if not low else Verdict.RECOVERED
            reason = (
                "free storage cannot be measured (FreeStorageSpace is missing) and RDS reports no low-storage event"
                if not low
                else "RDS warned about low storage, then grew the volume"
            )
            against = case.present(*_telling(tuple(grown)), *_telling(low)) if low else ()
            return Finding(_MODE, verdict, reason, against=against[:3])
        how, facts = _consumer_facts(case, storm)
        facts = [
            Fact(
                "FreeStorageSpace is missing from the evidence, so the fill level comes from RDS's own "
                "storage events and the write path.",
                (src,),
            ),
            *facts,  # what consumes the space (the cause) before what RDS says of it
            *_event_facts(case, storage_events),
        ]
        ending = "it has run out of space and RDS shut the database down" if full else "it is running out of space"
        summary = (
            f"storage full: the volume of {case.instance} is filled by {how}; {ending} (inferred from RDS's "
            "storage events, as the free storage metric is missing)"
        )
        chain: tuple[str, ...] = (
            how,
            "the volume fills",
            "writes stall extending data files",
            "RDS stops the database" if full else "free storage nears zero",
        )
        place = next((e.event.source for e in low if e.event.source), None) or case.resource()
        return Finding(_MODE, Verdict.CAUSE, summary, chain, tuple(facts), low[0].at, location=place)

    # A step up in free space (the volume grew) after a dip: a recovered transient.
    jump = next((i for i in range(1, len(free)) if free[i] - free[i - 1] > max(0.2 * free[i - 1], GB)), None)
    if jump is not None:
        trough = min(free[:jump])
        if free[-1] >= 1.5 * trough:
            auto = any(e.autoscaling for e in grown)
            by = "storage autoscaling" if auto else "a storage modification"
            low_free = value("FreeStorageSpace", trough)
            pct = f" ({_percent(trough / size)} of the provisioned {value('FreeStorageSpace', size)})" if size else ""
            summary = (
                f"free storage dipped to {low_free}{pct}, then {by} grew the volume and free storage recovered to "
                f"{value('FreeStorageSpace', free[-1])}, where it stays"
            )
            jumped_at = case.file.times("FreeStorageSpace")[jump]
            back = (
                *case.trend("FreeStorageSpace", FactKind.RISING, since=jumped_at),
                *case.level("FreeStorageSpace", FactKind.ABOVE, since=jumped_at),
            )
            recovery = (
                Fact(
                    f"Free storage (FreeStorageSpace) falls from {value('FreeStorageSpace', free[0])} to {low_free}, "
                    f"then jumps to {value('FreeStorageSpace', free[jump])} "
                    f"{when(case, jumped_at)} and stays flat: it has recovered.",
                    (src,),
                    back,
                ),
                *_event_facts(case, storage_events),
            )
            grew_event = case.present(*(e.event for e in grown[:1]))
            return Finding(
                _MODE, Verdict.RECOVERED, summary, facts=recovery, onset=jumped_at, against=(*grew_event, *back)
            )

    tail = free[-min(8, len(free)) :]
    times = case.file.times("FreeStorageSpace")[-len(tail) :]
    burn = 0.0
    if len(tail) >= 2 and (span := (times[-1] - times[0]).total_seconds()) > 0:
        burn = max(0.0, (tail[0] - tail[-1]) / span)
    runway = free[-1] / burn if burn > 0 else float("inf")
    drop = (p.baseline - p.end) / p.baseline if p.baseline > 0 else 0.0
    fraction = free[-1] / size if size else None
    alert = case.file.alert
    below_alarm = (
        alert.metric == "FreeStorageSpace" and alert.threshold is not None and free[-1] < alert.threshold and burn > 0
    )
    # The database's and RDS's own words outweigh a runway read from the last minutes: writes that already
    # fail for want of space, or RDS warning of low storage during a marked decline, mean it ran out.
    writes_failing = sum("no space left on device" in r.message.lower() for r in case.file.logs) >= 2
    warned = bool(tl.recent(EventKind.LOW_STORAGE)) and drop >= 0.3
    running_out = (
        (burn > 0 and runway <= _RUNWAY_S and drop >= 0.3)
        or (fraction is not None and fraction <= 0.03)
        or (below_alarm and drop >= 0.05)
        or (writes_failing and drop >= 0.05)
        or warned
    )
    if not running_out and not full:
        trend = (
            f"declines slowly ({runway / 3600:.0f} h of runway at the current rate)"
            if burn > 0 and drop >= 0.05
            else "stays flat"
        )
        return Finding(
            _MODE,
            Verdict.ABSENT,
            f"free storage {trend} at about {value('FreeStorageSpace', p.end)}, far from running out",
            against=case.quiet("FreeStorageSpace", FactKind.ABOVE),
        )
    how, consumer = _consumer_facts(case, storm)
    pct = f" ({_percent(free[-1] / size)} of the provisioned {value('FreeStorageSpace', size)})" if size else ""
    rate = f" at about {value('FreeStorageSpace', burn * 60)} per minute" if burn > 0 else ""
    left = (
        "it has effectively run out"
        if runway < 120 or (fraction is not None and fraction <= 0.01)
        else f"at that rate it is exhausted in about {runway / 60:.0f} minutes"
    )
    facts = [
        Fact(
            f"Free storage (FreeStorageSpace) falls steadily from {value('FreeStorageSpace', p.baseline)} to "
            f"{value('FreeStorageSpace', free[-1])}{pct}{rate}; {left}.",
            (src,),
            (
                *case.trend("FreeStorageSpace", FactKind.FALLING, since=p.onset_at),
                *case.level("FreeStorageSpace", FactKind.BELOW, since=case.held_since("FreeStorageSpace")),
            ),
        ),
        *consumer,  # what consumes the space (the cause) before what RDS says of it
        *_event_facts(case, storage_events),
    ]
    conns = case.file.profile("DatabaseConnections")
    if full and conns is not None and conns.direction < 0 and conns.end <= 0.05 * max(conns.baseline, 1):
        facts.append(
            Fact(
                "Connections drop to zero after the shutdown.",
                (src,),
                case.trend("DatabaseConnections", FactKind.FALLING, since=conns.onset_at),
            )
        )
    ending = ", and RDS shut the database down" if full else ""
    summary = (
        f"storage full: free storage on {case.instance} falls from {value('FreeStorageSpace', p.baseline)} to "
        f"{value('FreeStorageSpace', free[-1])}, consumed by {how}{ending}"
    )
    chain = (how, "free storage falls toward zero", "RDS stops the database" if full else "writes start to fail")
    follows = "replication_lag" if _retained_wal(case) is not None else None
    onset = p.onset_at or case.file.times("FreeStorageSpace")[0]
    return Finding(
        _MODE,
        Verdict.CAUSE,
        summary,
        chain,
        tuple(facts),
        onset,
        follows=follows,
        location=case.resource("FreeStorageSpace"),
    )
