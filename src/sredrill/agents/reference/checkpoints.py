"""Write storms and checkpoint I/O storms.

A write storm is WAL generation and write IOPS jumping far above their baseline. It becomes a checkpoint I/O
storm when the WAL volume forces checkpoints far more often than the five-minute `checkpoint_timeout`
(`CheckpointLag`, the seconds since the last checkpoint, never climbs past a minute) and the checkpoint
writes saturate storage (write latency and disk queue many times their baseline). A large `VACUUM` (an
anti-wraparound freeze rewrites every page, and full-page images flood the WAL after each checkpoint) is the
classic trigger. A bulk load with a heavy WAL stream but normal latency and a normal checkpoint cadence is a
write burst, not a checkpoint storm.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sredrill.agents.reference.catalog import CHECKPOINT_TIMEOUT_S, FREEZE_MAX_AGE
from sredrill.agents.reference.dblog import log_fact, log_matches
from sredrill.agents.reference.findings import Case, Fact, Finding, Verdict, value, when
from sredrill.agents.reference.statistics import Profile, longest_run_below
from sredrill.agents.reference.workload import StatementView, WaitGroup
from sredrill.diagnosis import Citation, FactKind

__all__ = ["WriteStorm", "assess_checkpoints", "read_write_storm", "storm_writer"]

_MODE = "checkpoint_io_storm"
# Consecutive samples with the last checkpoint under a minute old: at least five minutes of checkpoints
# every few dozen seconds, which the time-based schedule (every five minutes) never produces.
_FREQUENT_RUN = 5
# Recurring "checkpoints are occurring too frequently" warnings: one is a burst, three a cadence.
_WARNINGS = 3
_FREQUENT_LIMIT_S = 60.0
# Healthy EBS writes take a few milliseconds and queue a handful of I/Os: these levels are saturated anywhere.
_SLOW_WRITE_S = 0.05
_DEEP_QUEUE = 20.0


def _ratio(p: Profile | None) -> float:
    return p.end_ratio if p is not None and p.direction > 0 else 1.0


@dataclass(frozen=True, slots=True)
class WriteStorm:
    """How hard the primary writes compared with its baseline."""

    wal: Profile | None
    iops: Profile | None
    latency: Profile | None
    queue: Profile | None
    onset: datetime | None
    """The earliest onset of the WAL, IOPS or throughput rise."""

    @property
    def wal_ratio(self) -> float:
        return _ratio(self.wal)

    @property
    def iops_ratio(self) -> float:
        return _ratio(self.iops)

    @property
    def heavy(self) -> bool:
        """WAL or write IOPS several times their baseline."""
        return self.wal_ratio >= 5 or self.iops_ratio >= 4

    @property
    def saturated(self) -> bool:
        """Storage cannot keep up: write latency or the disk queue far above baseline (or far above what healthy
        EBS volumes show, when the window starts mid-incident) and still there."""
        lat, q = self.latency, self.queue
        slow = lat is not None and not lat.recovered and lat.end >= 0.02 and (lat.direction > 0 and lat.end_ratio >= 10)
        slow = slow or (lat is not None and lat.onset is None and lat.end >= _SLOW_WRITE_S)
        queued = q is not None and not q.recovered and q.end >= 10 and (q.direction > 0 and q.end_ratio >= 8)
        queued = queued or (q is not None and q.onset is None and q.end >= _DEEP_QUEUE)
        return slow or queued


def read_write_storm(case: Case) -> WriteStorm:
    f = case.file
    rises = [
        p.onset_at
        for name in ("TransactionLogsGeneration", "WriteIOPS", "WriteThroughput")
        if (p := f.profile(name)) is not None and p.direction > 0 and p.end_ratio >= 3 and p.onset_at is not None
    ]
    return WriteStorm(
        wal=f.profile("TransactionLogsGeneration"),
        iops=f.profile("WriteIOPS"),
        latency=f.profile("WriteLatency"),
        queue=f.profile("DiskQueueDepth"),
        onset=min(rises) if rises else None,
    )


def _io_facts(case: Case, storm: WriteStorm) -> list[Fact]:
    src = case.src.metrics
    facts = []
    if storm.wal is not None and storm.wal_ratio >= 3:
        w, name = storm.wal, "TransactionLogsGeneration"
        facts.append(
            Fact(
                f"WAL generation ({name}) jumps from {value(name, w.baseline)} to {value(name, w.end)} "
                f"({storm.wal_ratio:.0f}-fold) {when(case, w.onset_at)}.",
                (src,),
                (
                    *case.trend(name, FactKind.RISING, since=w.onset_at),
                    *case.level(name, FactKind.ABOVE, since=case.held_since(name)),
                ),
            )
        )
    parts = []
    rising: list[tuple[str, datetime | None]] = []
    if storm.iops is not None and storm.iops_ratio >= 2:
        ceiling = " and flatten at a ceiling" if storm.iops.flat_top else ""
        iops = storm.iops
        parts.append(
            f"write IOPS rise from {value('WriteIOPS', iops.baseline)} to {value('WriteIOPS', iops.end)}{ceiling}"
        )
        rising.append(("WriteIOPS", iops.onset_at))
    if storm.latency is not None and storm.latency.direction > 0 and storm.latency.end_ratio >= 3:
        lat = storm.latency
        parts.append(f"write latency from {value('WriteLatency', lat.baseline)} to {value('WriteLatency', lat.end)}")
        rising.append(("WriteLatency", lat.onset_at))
    if storm.queue is not None and storm.queue.direction > 0 and storm.queue.end_ratio >= 3:
        q = storm.queue
        parts.append(f"the disk queue from {q.baseline:.1f} to {q.end:.0f}")
        rising.append(("DiskQueueDepth", q.onset_at))
    if parts:
        cites = [c for m, since in rising for c in case.trend(m, FactKind.RISING, since=since)]
        facts.append(Fact("On the primary, " + ", ".join(parts) + ".", (src,), tuple(cites[:2])))
    return facts


def storm_writer(case: Case) -> StatementView | None:
    """The statement behind a write storm: maintenance first, else the most load on WAL and data-file writes."""
    w = case.workload
    if w is None:
        return None
    maintenance = [s for s in w.statements if s.is_maintenance]
    if maintenance:
        return max(maintenance, key=lambda s: s.load)
    return w.top_by(WaitGroup.WAL, WaitGroup.WRITE)


def _pi_facts(case: Case, writer: StatementView | None) -> list[Fact]:
    w = case.workload
    if w is None or writer is None:
        return []
    facts = [
        Fact(
            f"Performance Insights: {writer.label} is the top writer at {writer.load:.1f} active sessions, "
            f"waiting mostly on {writer.dominant or 'I/O'}.",
            (case.src.insights,),
            case.present(writer.statement),
        )
    ]
    contention = w.share(WaitGroup.BUFFER, WaitGroup.WRITE, WaitGroup.WAL)
    if contention >= 0.25:
        facts.append(
            Fact(
                f"{contention:.0%} of the database load waits on WAL writes, data file writes and buffer mapping "
                f"contention; CPU is only {w.share(WaitGroup.CPU):.0%} of it.",
                (case.src.insights,),
                case.present(w.top_wait(WaitGroup.WAL, WaitGroup.WRITE, WaitGroup.BUFFER)),
            )
        )
    return facts


def _freeze_fact(case: Case, writer: StatementView | None) -> list[Fact]:
    xids = case.file.profile("MaximumUsedTransactionIDs")
    if writer is None or writer.verb != "vacuum" or xids is None or xids.high < FREEZE_MAX_AGE:
        return []
    return [
        Fact(
            f"Transaction ID age is about {_millions(xids.high)}, past the 200 million "
            "autovacuum_freeze_max_age default, which makes the vacuum an aggressive anti-wraparound freeze.",
            (case.src.metrics,),
            case.level("MaximumUsedTransactionIDs", FactKind.ABOVE, since=case.held_since("MaximumUsedTransactionIDs")),
        )
    ]


def _millions(n: float) -> str:
    return f"{n / 1e9:.2f} billion" if n >= 1e9 else f"{n / 1e6:.0f} million"


def assess_checkpoints(case: Case, storm: WriteStorm) -> Finding:
    """Is a checkpoint I/O storm a root cause?"""
    f = case.file
    cl = f.values("CheckpointLag")
    writer = storm_writer(case)
    if cl:
        run = longest_run_below(cl, _FREQUENT_LIMIT_S)
        frequent = run >= _FREQUENT_RUN
        if not frequent:
            cadence = max(cl)
            return Finding(
                _MODE,
                Verdict.ABSENT,
                f"checkpoints keep their normal schedule: the time since the last checkpoint climbs to "
                f"{cadence:.0f} s between checkpoints, close to the {CHECKPOINT_TIMEOUT_S:.0f} s timeout",
                against=_calm_writes(case),
            )
        if not (storm.saturated or storm.wal_ratio >= 5):
            return Finding(
                _MODE,
                Verdict.SIDE_EFFECT,
                "checkpoints come more often than usual, but write latency stays normal and WAL volume is modest",
                against=_calm_writes(case),
            )
        if max(cl[-_FREQUENT_RUN:]) >= 2 * _FREQUENT_LIMIT_S:
            return Finding(
                _MODE,
                Verdict.RECOVERED,
                f"checkpoints came every minute or less for {run} minutes, and the normal schedule has resumed",
                against=case.level("CheckpointLag", FactKind.ABOVE, since=case.held_since("CheckpointLag")),
            )
        during = [v for v in cl if v < _FREQUENT_LIMIT_S]
        first, last = _longest_run(cl, _FREQUENT_LIMIT_S)
        times = f.times("CheckpointLag")
        cadence_fact = Fact(
            f"Checkpoints come every {max(during):.0f} s or less for {run} minutes (the time since the last "
            f"checkpoint, CheckpointLag, never passes {max(during):.0f} s) instead of every "
            f"{CHECKPOINT_TIMEOUT_S / 60:.0f} minutes.",
            (case.src.metrics,),
            case.level("CheckpointLag", FactKind.BELOW, since=times[first], until=times[last]),
        )
        inferred = ""
    else:
        # Without the metric, PostgreSQL's own warnings tell the cadence: recurring, with the WAL flood behind them.
        warned = log_fact(case, _MODE) if len(log_matches(case, _MODE)) >= _WARNINGS and storm.heavy else None
        if warned is not None:
            cadence_fact = warned
        elif not (storm.wal_ratio >= 10 and storm.saturated):
            verdict = Verdict.UNASSESSED if storm.heavy else Verdict.ABSENT
            reason = (
                "the checkpoint cadence cannot be checked (CheckpointLag is missing) and write latency stays normal"
                if verdict == Verdict.UNASSESSED
                else "WAL volume and write latency stay near their baseline"
            )
            return Finding(_MODE, verdict, reason, against=_calm_writes(case) if verdict == Verdict.ABSENT else ())
        else:
            cadence_fact = Fact(
                "CheckpointLag is missing from the evidence, so the checkpoint cadence is inferred from the WAL "
                "volume and the saturated write path.",
                (case.src.metrics,),
            )
        inferred = " (inferred: the checkpoint metric is missing)"
    facts = [*_io_facts(case, storm), cadence_fact, *_pi_facts(case, writer), *_freeze_fact(case, writer)]
    source = writer.label if writer is not None else "a write-heavy workload"
    lat = storm.latency
    latency = f" (write latency {value('WriteLatency', lat.end)})" if lat is not None and lat.direction > 0 else ""
    summary = (
        f"a checkpoint I/O storm{inferred}: {source} floods the write-ahead log (WAL generation "
        f"{storm.wal_ratio:.0f}-fold), which forces a checkpoint every few dozen seconds instead of every "
        f"{CHECKPOINT_TIMEOUT_S / 60:.0f} minutes, and the checkpoint writes saturate storage I/O{latency}"
    )
    chain = (
        f"{source} rewrites pages",
        "full-page images flood the WAL",
        "WAL volume forces back-to-back checkpoints",
        "write I/O saturates (latency and disk queue climb)",
    )
    onset = storm.onset or (storm.wal.onset_at if storm.wal is not None else None)
    place = case.resource("CheckpointLag" if cl else "TransactionLogsGeneration")
    return Finding(_MODE, Verdict.CAUSE, summary, chain, tuple(facts), onset, location=place)


def _calm_writes(case: Case) -> tuple[Citation, ...]:
    """What shows storage keeping up: write latency and the disk queue stay low (flat when they are)."""
    out: list[Citation] = []
    for metric in ("WriteLatency", "DiskQueueDepth"):
        out += case.trend(metric, FactKind.FLAT) or case.level(metric, FactKind.BELOW)
    return tuple(out[:3])


def _longest_run(values: tuple[float, ...], limit: float) -> tuple[int, int]:
    """The first and last index of the longest run of values strictly below `limit`."""
    best, start, span = (0, 0), None, -1
    for i, v in enumerate(values):
        if v < limit:
            start = i if start is None else start
            if i - start > span:
                best, span = (start, i), i - start
        else:
            start = None
    return best
