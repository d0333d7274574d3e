"""Replication: is a read replica falling behind, why, and is it an incident or a side effect?

`ReplicaLag` (published by the replica) past five minutes, or past the alarm's own threshold, is an
incident. Its shape says why: lag that starts with a WAL surge on the primary and grows slower than the
clock is replay that cannot keep up with the write volume; lag growing at one second per second means
replay has stopped on the replica (a conflict with a long query, a paused apply), whatever the primary does.
Without `ReplicaLag`, the replication slot on the primary tells the same story in bytes: slot lag divided
by the WAL rate estimates the delay, and retained WAL (`TransactionLogsDiskUsage`) grows with it. A lag of a
minute or two that follows a write burst is a side effect, not a second fault.
"""

from __future__ import annotations

from datetime import datetime

from sredrill.agents.reference.catalog import GB, REPLICA_LAG_INCIDENT_S
from sredrill.agents.reference.checkpoints import WriteStorm
from sredrill.agents.reference.findings import Case, Fact, Finding, Verdict, value, when
from sredrill.agents.reference.statistics import Profile
from sredrill.agents.reference.timeline import EventKind, describe_delta
from sredrill.agents.reference.workload import StatementView, WaitGroup
from sredrill.diagnosis import FactKind

__all__ = ["assess_replication"]

_MODE = "replication_lag"
_WAL = "TransactionLogsGeneration"


# A WAL surge this many times its baseline, sustained, outruns a replica's single replay process.
_REPLAY_OUTRUN = 3.0


def _threshold(case: Case) -> float:
    alert = case.file.alert
    if alert.metric == "ReplicaLag" and alert.threshold and alert.threshold > 0:
        return min(alert.threshold, REPLICA_LAG_INCIDENT_S)
    return REPLICA_LAG_INCIDENT_S


def _wal_writer(case: Case) -> StatementView | None:
    w = case.workload
    if w is None:
        return None
    writers = [s for s in w.statements if (s.is_write or s.is_maintenance) and s.load_in(WaitGroup.WAL) > 0]
    free = [s for s in writers if s.text not in case.claimed] or writers
    return max(free, key=lambda s: s.load_in(WaitGroup.WAL)) if free else w.top_writer()


def _same_time(case: Case, a: Profile | None, b: Profile | None) -> bool:
    if a is None or b is None or a.onset_at is None or b.onset_at is None:
        return False
    return abs((a.onset_at - b.onset_at).total_seconds()) <= 2.5 * case.file.period_s


def _wal_facts(case: Case, storm: WriteStorm, writer: StatementView | None) -> list[Fact]:
    """Who writes the WAL (the cause) before how much WAL there is."""
    facts = []
    if writer is not None and case.workload is not None:
        owner = case.workload.owner_of(writer)
        by = f" from user {owner}" if owner else ""
        facts.append(
            Fact(
                f"Performance Insights: {writer.label}{by} is the top WAL writer ({writer.load:.1f} active "
                f"sessions; its WAL writes, such as IO:WALWrite, are {writer.share(WaitGroup.WAL):.0%} of its waits).",
                (case.src.insights,),
                case.present(writer.statement, case.workload.user(owner), case.workload.top_wait(WaitGroup.WAL)),
            )
        )
    w = storm.wal
    if w is not None and storm.wal_ratio >= 3:
        iops = f", with write IOPS up {storm.iops_ratio:.0f}-fold" if storm.iops_ratio >= 2 else ""
        facts.append(
            Fact(
                f"WAL generation on the primary {case.instance} jumps from {value(_WAL, w.baseline)} "
                f"to {value(_WAL, w.end)} {when(case, w.onset_at)}{iops}.",
                (case.src.metrics,),
                (
                    *case.trend(_WAL, FactKind.RISING, since=w.onset_at),
                    *(case.trend("WriteIOPS", FactKind.RISING, since=w.onset_at) if iops else ()),
                ),
            )
        )
    return facts


def _context_facts(case: Case, replica: str | None) -> list[Fact]:
    """Earlier changes to the replica (an instance class change reduces its replay capacity)."""
    facts = []
    for e in case.timeline.of(EventKind.CONFIGURATION):
        if replica and e.event.source == replica and e.completed and e.offset_s is not None:
            facts.append(
                Fact(
                    f"The replica {replica} finished “{e.event.message.rstrip('.')}” {describe_delta(e.offset_s)}: "
                    "a smaller or changed replica replays WAL more slowly.",
                    (case.src.events,),
                    case.present(e.event),
                )
            )
    return facts


def assess_replication(case: Case, storm: WriteStorm) -> Finding:
    """Is replication lag a root cause, a side effect, or absent?"""
    f = case.file
    replica = f.replica
    who = f"the read replica {replica}" if replica else "the read replica"
    threshold = _threshold(case)
    lag = f.profile("ReplicaLag")
    writer = _wal_writer(case)
    if lag is not None:
        peak = lag.high
        if lag.direction <= 0 or peak < 30:
            return Finding(
                _MODE,
                Verdict.ABSENT,
                f"replica lag stays at {value('ReplicaLag', lag.median)}",
                against=case.quiet("ReplicaLag"),
            )
        if lag.recovered:
            return Finding(
                _MODE,
                Verdict.RECOVERED,
                f"replica lag peaked at {value('ReplicaLag', peak)} {when(case, lag.extreme_at)} and has caught up "
                f"(now {value('ReplicaLag', lag.end)})",
                onset=lag.onset_at,
                against=(
                    *case.level("ReplicaLag", FactKind.BELOW, within=REPLICA_LAG_INCIDENT_S),
                    *case.trend("ReplicaLag", FactKind.FALLING, since=lag.extreme_at),
                    *case.level("ReplicaLag", FactKind.BELOW, since=case.held_since("ReplicaLag")),
                ),
            )
        rate = lag.slope
        # A replica losing half a second or more every second is not keeping up, whatever the lag reached so far.
        falling_behind = rate >= 0.5 and lag.fit >= 0.9 and not lag.recovered
        if peak < threshold and not falling_behind:
            cause = " of the extra WAL from the write burst" if storm.wal_ratio >= 3 else ""
            return Finding(
                _MODE,
                Verdict.SIDE_EFFECT,
                f"replica lag reaches only {value('ReplicaLag', peak)}, below the {threshold / 60:.0f}-minute incident "
                f"level: a side effect{cause}, not a separate root cause",
                against=case.level("ReplicaLag", FactKind.BELOW),
            )
        facts = [
            Fact(
                f"Lag on {who} (ReplicaLag) climbs from {value('ReplicaLag', lag.baseline)} {when(case, lag.onset_at)} "
                f"to {value('ReplicaLag', peak)}, about {rate * 60:.0f} s per minute.",
                (case.src.metrics,),
                (
                    *case.trend("ReplicaLag", FactKind.RISING, since=lag.onset_at),
                    *case.level("ReplicaLag", FactKind.ABOVE, since=case.held_since("ReplicaLag")),
                ),
            )
        ]
        wal_driven = storm.wal_ratio >= 3 and (_same_time(case, lag, storm.wal) or lag.onset_at is None)
        slot = f.profile("OldestReplicationSlotLag")
        small_slot = slot is not None and slot.end < GB
        # Lag growing as fast as the clock means replay makes no progress. With a WAL surge and a replication
        # slot holding gigabytes, the replica cannot even keep up receiving: replay is drowning, not halted.
        # With the slot small, WAL arrives but is not applied: replay itself has stopped.
        stalled = 0.85 <= rate <= 1.15 and lag.fit >= 0.95 and (small_slot or not wal_driven)
        if stalled:
            facts.append(
                Fact(
                    "The lag grows at one second per second, the speed of the clock: replay on the replica has "
                    "stopped rather than slowed"
                    + (
                        f", while the replication slot stays small ({value('OldestReplicationSlotLag', slot.end)}), "
                        "so WAL still reaches the replica but is not applied"
                        if small_slot and slot is not None
                        else ""
                    )
                    + ".",
                    (case.src.metrics,),
                    (
                        *case.trend("ReplicaLag", FactKind.RISING),
                        *(case.level("OldestReplicationSlotLag", FactKind.BELOW) if small_slot else ()),
                    ),
                )
            )
            summary = (
                f"replication lag: replay on {who} has stopped, so its lag grows at wall-clock speed to "
                f"{value('ReplicaLag', peak)}; the replica is not applying the WAL it receives"
            )
            chain = ("replay halted on the replica", "lag grows one second per second", "replica reads are stale")
            return Finding(_MODE, Verdict.CAUSE, summary, chain, tuple(facts), lag.onset_at, location=_where(case))
        facts.extend(_context_facts(case, replica))
        # The primary's top WAL writer is cited whatever the surge: its WAL is what the replica has to replay.
        facts.extend(_wal_facts(case, storm, writer))
        return _wal_cause(
            case, who, writer if wal_driven else None, storm, value("ReplicaLag", peak), facts, lag.onset_at
        )

    # No ReplicaLag series: infer from the replication slot on the primary.
    slot = f.profile("OldestReplicationSlotLag")
    retained_name = "TransactionLogsDiskUsage"
    retained = f.profile(retained_name)
    missing = "ReplicaLag is missing from the evidence"
    wal_rate = storm.wal.end if storm.wal is not None else None
    estimate = slot.end / wal_rate if slot is not None and wal_rate else None
    # A slot that grows ten-fold, or steadily to minutes of replay at the current WAL rate (when the window
    # starts mid-incident and the baseline is not visible), is a replica falling behind.
    growing = (
        slot is not None
        and slot.end >= GB
        and (
            (slot.direction > 0 and slot.end_ratio >= 10)
            or (slot.slope > 0 and slot.fit >= 0.9 and estimate is not None and estimate >= REPLICA_LAG_INCIDENT_S)
        )
    )
    if slot is None or not growing:
        surge = storm.wal
        if (
            replica
            and surge is not None
            and storm.wal_ratio >= _REPLAY_OUTRUN
            and not surge.recovered
            and writer is not None
            and writer.text not in case.claimed
            and writer.load_in(WaitGroup.WAL) > 0
        ):
            # A replica replays the primary's WAL in a single process: a sustained several-fold surge from one
            # writer outruns it, and nothing else (no checkpoint storm) claims that surge.
            facts = [
                Fact(
                    f"{missing}, so the delay is inferred from the primary: WAL generation jumps "
                    f"{storm.wal_ratio:.0f}-fold, from {value(_WAL, surge.baseline)} to {value(_WAL, surge.end)} "
                    f"{when(case, surge.onset_at)}, and stays there; {who} replays it in a single process.",
                    (case.src.metrics,),
                    (
                        *case.trend(_WAL, FactKind.RISING, since=surge.onset_at),
                        *case.level(_WAL, FactKind.ABOVE, since=case.held_since(_WAL)),
                    ),
                ),
                *_wal_facts(case, storm, writer)[:1],
            ]
            facts.extend(_context_facts(case, replica))
            return _wal_cause(case, who, writer, storm, "further and further", facts, surge.onset_at)
        if replica or slot is not None:
            # A small slot proves the replica receives the WAL, not that it replays it: without ReplicaLag the
            # replay delay cannot be measured, so the hypothesis stays open.
            reason = (
                f"{missing}; the replication slot stays at {value('OldestReplicationSlotLag', slot.end)}, so the "
                "replica receives the WAL, but whether it replays it in time cannot be checked"
                if slot is not None
                else f"{missing}, and no replication slot metric can stand in for it"
            )
            return Finding(_MODE, Verdict.UNASSESSED, reason)
        return Finding(_MODE, Verdict.ABSENT, "no read replica or replication slot shows up in the evidence")
    slot_name = "OldestReplicationSlotLag"
    if estimate is not None and estimate < REPLICA_LAG_INCIDENT_S:
        return Finding(
            _MODE,
            Verdict.SIDE_EFFECT,
            f"{missing}; the replication slot holds about {estimate:.0f} s of WAL: a side effect of the write burst",
            against=case.level(slot_name, FactKind.BELOW),
        )
    facts = [
        Fact(
            f"{missing}, so the delay is inferred from the primary: the replication slot lag "
            f"(OldestReplicationSlotLag) grows from {value('OldestReplicationSlotLag', slot.baseline)} to "
            f"{value('OldestReplicationSlotLag', slot.end)} {when(case, slot.onset_at)}.",
            (case.src.metrics,),
            (
                *case.trend(slot_name, FactKind.RISING, since=slot.onset_at),
                *case.level(slot_name, FactKind.ABOVE, since=case.held_since(slot_name)),
            ),
        )
    ]
    if retained is not None and retained.direction > 0 and retained.end_ratio >= 2:
        facts.append(
            Fact(
                "The primary retains the unconsumed WAL: disk used by transaction logs grows from "
                f"{value(retained_name, retained.baseline)} to {value(retained_name, retained.end)}.",
                (case.src.metrics,),
                case.trend(retained_name, FactKind.RISING, since=retained.onset_at),
            )
        )
    behind = f"roughly {estimate / 60:.0f} minutes" if estimate is not None else "far"
    if estimate is not None and wal_rate is not None:
        facts.append(
            Fact(
                f"At the current WAL rate ({value('TransactionLogsGeneration', wal_rate)}) that backlog is "
                f"roughly {estimate / 60:.0f} minutes of replay.",
                (case.src.metrics,),
                (
                    *case.level(_WAL, FactKind.ABOVE, since=case.held_since(_WAL)),
                    *case.level(slot_name, FactKind.ABOVE, since=case.held_since(slot_name)),
                ),
            )
        )
    wal_driven = storm.wal_ratio >= 3 and _same_time(case, slot, storm.wal)
    facts.extend(_context_facts(case, replica))
    facts.extend(_wal_facts(case, storm, writer if wal_driven else None))
    return _wal_cause(case, who, writer if wal_driven else None, storm, behind, facts, slot.onset_at)


def _wal_cause(
    case: Case,
    who: str,
    writer: StatementView | None,
    storm: WriteStorm,
    behind: str,
    facts: list[Fact],
    onset: datetime | None,
) -> Finding:
    if writer is not None:
        summary = (
            f"replication lag: on the primary {case.instance}, {writer.label} writes heavily and generates WAL "
            f"(write-ahead log) {storm.wal_ratio:.0f} times faster than before, more than {who} can replay, so the "
            f"replica falls {behind} behind"
        )
        chain: tuple[str, ...] = (
            f"{writer.label} writes heavily",
            f"WAL volume {storm.wal_ratio:.0f}-fold",
            "replay on the replica falls behind",
            "lag grows",
        )
    else:
        summary = (
            f"replication lag: {who} cannot replay the primary's WAL (write-ahead log) fast enough and falls "
            f"{behind} behind"
        )
        chain = ("replay on the replica is too slow", "lag grows", "replica reads are stale")
    return Finding(_MODE, Verdict.CAUSE, summary, chain, tuple(facts), onset, location=_where(case))


def _where(case: Case) -> str | None:
    """The replica at fault, as the evidence names it: the alert's, its lag series', or a replica event's source;
    without a name for it, the primary whose replication slot shows the delay."""
    f = case.file
    if f.replica:
        return f.replica
    primary = f.primary
    for e in case.timeline.of(EventKind.REPLICATION):
        if e.event.source and e.event.source != primary:
            return e.event.source
    return primary
