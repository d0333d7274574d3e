"""The fault library: each failure mode's cause, its effects on the fleet's series and records, and what the
answer key learns from it (location, decisive selectors drawn from the phrasing written, the symptom's bound).

A fault's `u` (0-1) is its magnitude within the mode's range: the generator lowers it to keep a confounder at
least as anomalous (docs/generator.md). Every fault reaches its full effect before the alert fires.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from .benign import client
from .fleet import GB, Instance
from .series import Shape, profile
from .world import MINUTES, Event, LogLine, Statement, World

__all__ = ["FAULTS", "FAULT_METRICS", "MAIN_SYMPTOM", "AlertSpec", "Injected"]

Selector = dict[str, Any]

FAULT_METRICS: dict[str, tuple[str, ...]] = {
    "storage_full": ("FreeStorageSpace", "WriteIOPS", "WriteThroughput", "TransactionLogsGeneration"),
    "cpu_saturation": ("CPUUtilization", "DBLoadCPU", "DBLoad", "ReadLatency"),
    "connection_exhaustion": ("DatabaseConnections", "FreeableMemory"),
    "replication_lag": ("ReplicaLag", "WriteIOPS"),
    "checkpoint_io_storm": (
        "TransactionLogsGeneration",
        "WriteIOPS",
        "DiskQueueDepth",
        "WriteLatency",
        "CheckpointLag",
        "BurstBalance",
    ),
    "failover": ("WriteLatency", "DiskQueueDepth", "DatabaseConnections"),
}
"""The series each fault moves on the instances of its location (Average): its anomaly score is theirs."""

MAIN_SYMPTOM: dict[str, str] = {
    "storage_full": "FreeStorageSpace",
    "cpu_saturation": "CPUUtilization",
    "connection_exhaustion": "DatabaseConnections",
    "replication_lag": "ReplicaLag",
    "checkpoint_io_storm": "CheckpointLag",
    "failover": "DatabaseConnections",
}
"""The series a difficulty-3 scenario leaves out."""


@dataclass(frozen=True, slots=True)
class AlertSpec:
    """What an alert fires on."""

    metric: str
    resource: str
    comparison: str
    threshold: float
    summary: str


@dataclass(slots=True)
class Injected:
    """A fault as the answer key sees it."""

    mode: str
    location: tuple[str, ...]
    decisive: list[Selector]
    symptom: list[Selector]
    """What shows the mode rather than its cause: series with bounds from what the mode means, and records in the
    mode's own words (`No space left on device`, `too many clients`). Decisive at difficulty 1 only: an agent
    told the mode finds these by their words (docs/grading.md, "Which items are decisive")."""
    alert: AlertSpec
    secondary: AlertSpec
    root_cause: str
    claims: list[tuple[str, str]]
    chain: str
    keyword: str
    sources: list[str]
    tools: list[str]
    queries: list[str] = field(default_factory=list)


def _window(rng: random.Random, w: World, shape: Shape) -> tuple[int, int]:
    """Onset (60-140) and rise time, so the effect is complete at least five minutes before the alert."""
    onset = rng.randrange(60, min(141, w.alert_at - 15))
    room = w.alert_at - 5 - onset
    ramp = 1 if shape is Shape.STEP else rng.randrange(min(10, room), min(40, room) + 1)
    return onset, ramp


def _at(rng: random.Random, minute: int) -> int:
    return minute * 60 + rng.randrange(0, 60)


def _statement(
    w: World, sql: str, user: str, host: str, load: float, waits: tuple[tuple[str, float], ...], calls: float
) -> None:
    w.statements.append(Statement(sql, user, host, load, waits, calls))


def _spread_log(
    rng: random.Random, w: World, first: int, last: int, count: int, make: Callable[[int], LogLine]
) -> None:
    for _ in range(count):
        w.log.append(make(rng.randrange(first * 60, max(first * 60 + 1, last * 60))))


def _mean_after(prof: list[float]) -> float:
    return sum(prof) / MINUTES


def storage_full(rng: random.Random, w: World, u: float, shape: Shape) -> Injected:
    p = w.fleet.primary
    app = p.app
    onset, ramp = _window(rng, w, Shape.CREEP if shape is Shape.STEP else shape)
    prof = profile(MINUTES, onset, Shape.RAMP, ramp)
    volume = p.storage_gb * GB
    final = volume * (0.06 - 0.055 * u)
    free = w.series(p, "FreeStorageSpace")
    start = free[onset]
    for t in range(onset, MINUTES):
        free[t] = start + (final - start) * prof[t] + (free[t] - free[onset]) * 0.1
    table = rng.choice(app.tables)
    variant = rng.randrange(2)
    if variant == 0:
        user = rng.choice(("etl_loader", "ingest_job", "warehouse_sync"))
        sql = f"COPY {table}_staging FROM STDIN WITH (FORMAT csv)"
        why = f"a bulk COPY into {table}_staging by the {user} job"
    else:
        user = rng.choice(("backfill_job", "migration_runner", "data_fix"))
        sql = f"INSERT INTO {table}_archive SELECT * FROM {table} WHERE created_at < $1"
        why = f"an INSERT ... SELECT into {table}_archive by {user}"
    factor = 1.3 + 1.7 * u
    for metric in ("WriteIOPS", "WriteThroughput", "WriteIOPSLogVolume"):
        w.mul(p, metric, prof, factor)
    w.mul(p, "TransactionLogsGeneration", prof, factor * (1.2 + 1.3 * u))
    host = client(rng, rng.randrange(20, 200)).split("(")[0]
    _statement(
        w,
        sql,
        user,
        host,
        sum(w.series(p, "DBLoad")) / MINUTES * rng.uniform(0.3, 0.6) * _mean_after(prof) * 3,
        (("IO:DataFileWrite", 0.4), ("IO:WALWrite", 0.35), ("CPU", 0.25)),
        rng.uniform(0.01, 2),
    )
    low = next(t for t in range(onset, MINUTES) if free[t] <= volume * 0.1) if min(free) <= volume * 0.1 else onset
    pct, event_text = rng.choice(
        (
            (
                "The free storage capacity for DB instance {n} is low at {x}% of the provisioned storage "
                "[Provisioned Storage {v} GB, Free Storage {f} GB]. You may want to increase the provisioned "
                "storage to "
                "address this issue.",
                "free storage capacity for DB instance",
            ),
            (
                "The free storage capacity for DB instance {n} is low at {x}% of the provisioned storage.",
                "free storage capacity for DB instance",
            ),
            (
                "DB instance {n} has low free storage space: {x}% of the provisioned storage remains",
                "has low free storage space",
            ),
        )
    )
    at = min(MINUTES - 1, max(low, onset + 1))
    x = round(free[at] / volume * 100)
    w.events.append(
        Event(
            _at(rng, at),
            pct.format(n=p.name, x=x, v=f"{p.storage_gb:.2f}", f=f"{free[at] / GB:.2f}"),
            p.name,
            ("low storage",),
        )
    )
    enospc = rng.choice(
        (
            'could not extend file "base/{o}/{r}.{s}": No space left on device',
            'could not write to file "pg_wal/xlogtemp.{o}": No space left on device',
            "could not write block {r} of relation base/{o}/{r}: No space left on device",
        )
    )
    full = next((t for t in range(onset, MINUTES) if free[t] <= volume * 0.03), at)
    oid = rng.randrange(16384, 99999)

    def line(s: int) -> LogLine:
        text = enospc.format(o=oid, r=rng.randrange(16384, 99999), s=rng.randrange(1, 40))
        return LogLine(s, "ERROR", text, user, app.database, host, rng.randrange(10000, 65000))

    _spread_log(rng, w, max(full, at), MINUTES, rng.randrange(3, 8), line)
    return Injected(
        mode="storage_full",
        location=(p.name,),
        decisive=[{"kind": "sql", "statement": sql}, {"kind": "user", "user": user}],
        symptom=[
            {"kind": "event", "text": event_text, "resource": p.name},
            {"kind": "log", "text": "No space left on device"},
            {
                "metric": "FreeStorageSpace",
                "resource": p.name,
                "shows": ["below", "falling"],
                "below": round(volume * 0.1),
            },
        ],
        alert=AlertSpec(
            "FreeStorageSpace",
            p.name,
            "LessThanThreshold",
            round(volume * 0.1),
            f"Free storage on {p.name} is below 10% of its {p.storage_gb} GB volume.",
        ),
        secondary=AlertSpec(
            "WriteIOPS", p.name, "GreaterThanThreshold", 0, f"Write IOPS on {p.name} are well above their usual level."
        ),
        root_cause=f"Free storage on {p.name} runs out: {why} fills the volume and PostgreSQL cannot extend files.",
        claims=[
            (f"Free storage falls to about {final / GB:.0f} GB of {p.storage_gb} GB.", "aws_cloudwatch_metrics"),
            (f"The top statement by load is the {user} job's write into {table}.", "aws_performance_insights"),
            ("RDS reports low free storage.", "aws_rds_events"),
            ("The log shows No space left on device errors.", "aws_rds_postgresql_log"),
        ],
        chain=f"{why} -> write IOPS and WAL up -> free storage falls -> No space left on device",
        keyword="storage",
        sources=["aws_performance_insights"],
        tools=["get_alert", "query_metrics", "get_performance_insights", "get_events"],
        queries=["FreeStorageSpace"],
    )


def cpu_saturation(rng: random.Random, w: World, u: float, shape: Shape) -> Injected:
    p = w.fleet.primary
    app = p.app
    onset, ramp = _window(rng, w, shape)
    prof = profile(MINUTES, onset, shape, ramp)
    target = 93 + 7 * u
    w.toward(p, "CPUUtilization", prof, target, rng, 0.015)
    w.clamp(p, "CPUUtilization", 0.0, 100.0)
    k = 2.0 + 3.0 * u
    w.toward(p, "DBLoadCPU", prof, k * p.vcpu, rng, 0.08)
    w.mul(p, "ReadLatency", prof, rng.uniform(1.5, 3.0))
    w.mul(p, "ReadIOPS", prof, rng.uniform(1.1, 1.5))
    cpu, io = w.series(p, "DBLoadCPU"), w.series(p, "DBLoadNonCPU")
    w.traces[p.name]["DBLoad"] = [a + b for a, b in zip(cpu, io, strict=True)]
    w.traces[p.name]["DBLoadRelativeToNumVCPUs"] = [x / p.vcpu for x in w.traces[p.name]["DBLoad"]]
    a, b = p.app.tables[:2]
    col = rng.choice(("status", "external_ref", "email", "created_at"))
    sql = rng.choice(
        (
            f"SELECT * FROM {a} WHERE {col} = $1 AND {app.key} = $2 ORDER BY created_at DESC",
            f"SELECT {a}.id, {b}.* FROM {a} JOIN {b} ON {b}.{a[:-1]}_id = {a}.id WHERE {a}.{col} = $1",
            f"SELECT count(*) FROM {a} WHERE lower({col}) = lower($1)",
        )
    )
    user = f"{app.name}_{rng.choice(('api', 'svc', 'web'))}"
    host = client(rng, rng.randrange(20, 200)).split("(")[0]
    _statement(
        w,
        sql,
        user,
        host,
        k * p.vcpu * _mean_after(prof) * 0.8,
        (("CPU", 0.85), ("IO:DataFileRead", 0.15)),
        rng.uniform(50, 400),
    )
    index = f"{a}_{col}_idx"
    w.log.append(
        LogLine(
            _at(rng, max(1, onset - rng.randrange(1, 6))),
            "LOG",
            rng.choice((f"statement: DROP INDEX CONCURRENTLY IF EXISTS {index}", f"statement: DROP INDEX {index}")),
            "migration_runner",
            app.database,
            client(rng, 30),
            rng.randrange(10000, 65000),
        )
    )

    def slow(s: int) -> LogLine:
        return LogLine(
            s,
            "LOG",
            f"duration: {rng.uniform(3000, 15000):.3f} ms  execute <unnamed>: {sql}",
            user,
            app.database,
            client(rng, 40),
            rng.randrange(10000, 65000),
        )

    _spread_log(rng, w, onset + 1, MINUTES, rng.randrange(6, 14), slow)
    return Injected(
        mode="cpu_saturation",
        location=(p.name,),
        decisive=[{"kind": "sql", "statement": sql}, {"kind": "user", "user": user}],
        symptom=[{"metric": "CPUUtilization", "resource": p.name, "shows": ["above"], "above": 90}],
        alert=AlertSpec(
            "CPUUtilization",
            p.name,
            "GreaterThanThreshold",
            90,
            f"CPU on {p.name} has been above 90% for 3 datapoints.",
        ),
        secondary=AlertSpec(
            "ReadLatency", p.name, "GreaterThanThreshold", 0, f"Read latency on {p.name} is well above its usual level."
        ),
        root_cause=f"CPU on {p.name} is saturated by a query of {user} on {a} that scans the table since {index} "
        "was dropped.",
        claims=[
            (f"CPU rises to about {target:.0f}%.", "aws_cloudwatch_metrics"),
            (f"The top statement by load is a {user} query on {a}, waiting on CPU.", "aws_performance_insights"),
        ],
        chain=f"{index} dropped -> the {a} query scans the table -> CPU saturated -> latency up",
        keyword="CPU",
        sources=["aws_performance_insights"],
        tools=["get_alert", "query_metrics", "get_performance_insights"],
        queries=["CPUUtilization"],
    )


def connection_exhaustion(rng: random.Random, w: World, u: float, shape: Shape) -> Injected:
    p = w.fleet.primary
    app = p.app
    shape = Shape.STEP if shape is Shape.STEP else Shape.RAMP
    onset, ramp = _window(rng, w, shape)
    prof = profile(MINUTES, onset, shape, ramp)
    limit = p.max_connections
    w.toward(p, "DatabaseConnections", prof, float(limit), rng)
    conns = w.series(p, "DatabaseConnections")
    for t in range(MINUTES):
        conns[t] = float(min(limit, round(conns[t])))
    mem = w.series(p, "FreeableMemory")
    per = rng.uniform(2e6, 5e6)
    base = conns[onset - 1]
    for t in range(onset, MINUTES):
        mem[t] = max(p.memory_bytes * 0.05, mem[t] - (conns[t] - base) * per)
    variant = rng.randrange(2)
    user = f"{app.name}_{rng.choice(('api', 'svc', 'worker'))}"
    if variant == 0:
        why = f"a connection pool of {user} that leaks sessions idle in transaction"
        w.mul(p, "DBLoadNonCPU", prof, rng.uniform(1.5, 3.0))
        waits: tuple[tuple[str, float], ...] = (("Client:ClientRead", 0.8), ("CPU", 0.2))
    else:
        why = f"a retry storm from {user} that opens a new session for every retry"
        waits = (("CPU", 0.5), ("Client:ClientRead", 0.3), ("LWLock:ProcArray", 0.2))
    sql = rng.choice(("BEGIN", f"SELECT 1 FROM {app.tables[0]} WHERE id = $1 FOR UPDATE"))
    host = client(rng, rng.randrange(20, 200)).split("(")[0]
    _statement(w, sql, user, host, p.vcpu * 0.3 * _mean_after(prof) * 3, waits, rng.uniform(100, 2000))
    full = next((t for t in range(onset, MINUTES) if conns[t] >= limit), w.alert_at - 5)
    msgs = rng.sample(
        (
            "sorry, too many clients already",
            "remaining connection slots are reserved for roles with the SUPERUSER attribute",
            "remaining connection slots are reserved for non-replication superuser connections",
        ),
        2,
    )

    # A full server refuses whoever connects next: the culprit's own sessions are already in.
    others = sorted({s.user for s in w.statements if s.user != user}) or [user]

    def refused(s: int) -> LogLine:
        who = rng.choice(others)
        return LogLine(s, "FATAL", rng.choice(msgs), who, app.database, client(rng, 50), rng.randrange(10000, 65000))

    _spread_log(rng, w, full, MINUTES, rng.randrange(8, 20), refused)
    return Injected(
        mode="connection_exhaustion",
        location=(p.name,),
        decisive=[{"kind": "sql", "statement": sql}, {"kind": "user", "user": user}],
        symptom=[
            *({"kind": "log", "text": m} for m in msgs),
            {"metric": "DatabaseConnections", "resource": p.name, "shows": ["above"], "above": round(0.9 * limit)},
        ],
        alert=AlertSpec(
            "DatabaseConnections",
            p.name,
            "GreaterThanThreshold",
            round(0.9 * limit),
            f"Connections on {p.name} are above 90% of max_connections ({limit}).",
        ),
        secondary=AlertSpec(
            "FreeableMemory", p.name, "LessThanThreshold", 0, f"Freeable memory on {p.name} is falling."
        ),
        root_cause=f"Connections on {p.name} reach max_connections ({limit}): {why}.",
        claims=[
            (f"Connections climb to the limit of {limit}.", "aws_cloudwatch_metrics"),
            (f"The log refuses new connections: {msgs[0]}.", "aws_rds_postgresql_log"),
        ],
        chain=f"{why} -> sessions pile up -> max_connections reached -> new connections refused",
        keyword="connection",
        sources=["aws_rds_postgresql_log"],
        tools=["get_alert", "query_metrics", "search_logs"],
        queries=["DatabaseConnections"],
    )


def replication_lag(rng: random.Random, w: World, u: float, shape: Shape) -> Injected:
    p, r = w.fleet.primary, w.fleet.replica
    app = p.app
    shape = Shape.CREEP if shape is Shape.STEP else shape
    onset, ramp = _window(rng, w, shape)
    prof = profile(MINUTES, onset, shape, ramp)
    target = 300 + 2700 * u
    lag = w.series(r, "ReplicaLag")
    for t in range(onset, MINUTES):
        lag[t] = max(lag[t], target * min(prof[t], 1.0) * (1 + rng.uniform(-0.03, 0.03)))
    factor = 1.5 + 6 * u
    w.mul(p, "TransactionLogsGeneration", prof, factor)
    w.mul(p, "WriteThroughputLogVolume", prof, factor)
    w.mul(p, "WriteIOPS", prof, rng.uniform(1.5, 2.5))
    w.mul(r, "WriteIOPS", prof, rng.uniform(1.5, 2.5))
    table = rng.choice(app.tables)
    user = rng.choice(("backfill_job", "data_migration", "reindex_worker"))
    sql = rng.choice(
        (
            f"UPDATE {table} SET {app.key} = $1, migrated = true WHERE id BETWEEN $2 AND $3",
            f"UPDATE {table} SET payload = jsonb_set(payload, $1, $2) WHERE id >= $3 AND id < $4",
        )
    )
    host = client(rng, rng.randrange(20, 200)).split("(")[0]
    _statement(
        w,
        sql,
        user,
        host,
        p.vcpu * 0.4 * _mean_after(prof) * 3,
        (("IO:WALWrite", 0.4), ("IO:DataFileWrite", 0.3), ("CPU", 0.3)),
        rng.uniform(1, 30),
    )
    return Injected(
        mode="replication_lag",
        location=(r.name,),
        decisive=[{"kind": "sql", "statement": sql}, {"kind": "user", "user": user}],
        symptom=[{"metric": "ReplicaLag", "resource": r.name, "shows": ["above"], "above": 300}],
        alert=AlertSpec(
            "ReplicaLag",
            r.name,
            "GreaterThanThreshold",
            300,
            f"Read replica {r.name} is more than 300 seconds behind its source {p.name}.",
        ),
        secondary=AlertSpec(
            "TransactionLogsGeneration",
            p.name,
            "GreaterThanThreshold",
            0,
            f"WAL generation on {p.name} is well above its usual level.",
        ),
        root_cause=f"The read replica {r.name} falls behind {p.name}: a backfill UPDATE of {table} by {user} writes "
        "WAL faster than the "
        "replica replays it.",
        claims=[
            (f"Replica lag on {r.name} climbs to about {target:.0f} s.", "aws_cloudwatch_metrics"),
            (f"The top statement on the primary is the {user} backfill of {table}.", "aws_performance_insights"),
        ],
        chain=f"backfill UPDATE of {table} -> WAL generation up -> replay falls behind -> replica lag",
        keyword="replica",
        sources=["aws_performance_insights"],
        tools=["get_alert", "query_metrics", "get_performance_insights"],
        queries=["ReplicaLag"],
    )


def checkpoint_io_storm(rng: random.Random, w: World, u: float, shape: Shape) -> Injected:
    p = w.fleet.primary
    app = p.app
    shape = Shape.STEP if shape is Shape.STEP else Shape.RAMP
    onset, ramp = _window(rng, w, shape)
    prof = profile(MINUTES, onset, shape, min(ramp, 15))
    factor = 10 + 30 * u
    w.mul(p, "TransactionLogsGeneration", prof, factor)
    w.mul(p, "WriteThroughputLogVolume", prof, factor * 0.6)
    ceiling = max(3000.0, 3.0 * p.storage_gb)
    w.toward(p, "WriteIOPS", prof, ceiling, rng, 0.03)
    w.mul(p, "WriteThroughput", prof, rng.uniform(4, 8))
    w.mul(p, "DiskQueueDepth", prof, 3 + 17 * u)
    w.mul(p, "WriteLatency", prof, 3 + 12 * u)
    burst = w.series(p, "BurstBalance")
    drain = rng.uniform(1.5, 3.0)
    for t in range(onset, MINUTES):
        burst[t] = max(0.0, burst[t] - drain * (t - onset) * min(prof[t], 1.0))
    lag = w.series(p, "CheckpointLag")
    apart = rng.randrange(15, 50)
    for t in range(onset, MINUTES):
        if prof[t] >= 0.5:
            lag[t] = float((t * 60 + rng.randrange(60)) % apart)
    table = rng.choice(app.tables)
    variant = rng.randrange(2)
    if variant == 0:
        sql = f"VACUUM (FREEZE, VERBOSE) public.{table}"
        user = rng.choice(("maintenance_job", "dba_maint", "pg_maint"))
        why = f"an anti-wraparound VACUUM (FREEZE) of {table}"
    else:
        sql = f"UPDATE {table} SET archived = true WHERE created_at < $1"
        user = rng.choice(("archiver", "batch_job", "retention_job"))
        why = f"a bulk UPDATE of {table}"
    host = client(rng, rng.randrange(20, 200)).split("(")[0]
    _statement(
        w,
        sql,
        user,
        host,
        p.vcpu * 0.6 * _mean_after(prof) * 3,
        (("IO:DataFileWrite", 0.35), ("IO:WALWrite", 0.35), ("LWLock:WALWrite", 0.15), ("CPU", 0.15)),
        rng.uniform(0.01, 5),
    )
    hint = rng.choice(
        (
            'Consider increasing the configuration parameter "max_wal_size".',
            'Consider increasing the configuration parameter "max_wal_size" or "checkpoint_timeout".',
        )
    )
    first = onset + 1
    for s in range(first * 60 + rng.randrange(30), MINUTES * 60, rng.randrange(180, 420)):
        w.log.append(LogLine(s, "LOG", f"checkpoints are occurring too frequently ({apart} seconds apart)"))
        w.log.append(LogLine(s, "HINT", hint))
        w.log.append(LogLine(s + 1, "LOG", "checkpoint starting: wal"))
    return Injected(
        mode="checkpoint_io_storm",
        location=(p.name,),
        decisive=[{"kind": "sql", "statement": sql}, {"kind": "user", "user": user}],
        symptom=[
            {"kind": "log", "text": "checkpoints are occurring too frequently"},
            {"metric": "TransactionLogsGeneration", "resource": p.name, "shows": ["rising"]},
        ],
        alert=AlertSpec(
            "WriteLatency", p.name, "GreaterThanThreshold", 0.02, f"Write latency on {p.name} is above 20 ms."
        ),
        secondary=AlertSpec(
            "DiskQueueDepth", p.name, "GreaterThanThreshold", 0, f"The disk queue on {p.name} is deep."
        ),
        root_cause=f"A checkpoint and WAL write storm on {p.name}: {why} floods WAL, checkpoints run every "
        f"{apart} seconds and saturate the volume's write IOPS.",
        claims=[
            (f"WAL generation rises about {factor:.0f}-fold.", "aws_cloudwatch_metrics"),
            ("The log says checkpoints are occurring too frequently.", "aws_rds_postgresql_log"),
        ],
        chain=f"{why} -> WAL volume up -> checkpoints too frequent -> write IOPS at the ceiling -> latency up",
        keyword="checkpoint",
        sources=["aws_rds_postgresql_log"],
        tools=["get_alert", "query_metrics", "search_logs", "get_performance_insights"],
        queries=["TransactionLogsGeneration"],
    )


def failover(rng: random.Random, w: World, u: float, shape: Shape) -> Injected:
    p = w.fleet.primary
    onset, _ = _window(rng, w, Shape.STEP)
    spike = rng.randrange(2, 6)
    down = rng.randrange(1, 4)
    prof = [1.0 if onset - spike <= t < onset else 0.0 for t in range(MINUTES)]
    w.mul(p, "WriteLatency", prof, 10 + 40 * u)
    w.mul(p, "DiskQueueDepth", prof, 5 + 20 * u)
    off = [1.0 if onset <= t < onset + down else 0.0 for t in range(MINUTES)]
    for metric in (
        "DatabaseConnections",
        "CPUUtilization",
        "ReadIOPS",
        "WriteIOPS",
        "DBLoad",
        "DBLoadCPU",
        "DBLoadNonCPU",
        "NetworkReceiveThroughput",
        "NetworkTransmitThroughput",
    ):
        w.mul(p, metric, off, 0.0)
    health = rng.choice(
        (
            "The primary host of the Multi-AZ instance failed health checks; RDS is failing over to the standby.",
            "The primary host of the DB instance is unhealthy; a Multi-AZ failover was initiated.",
            "Health check failure on the primary host: failing over to the standby",
        )
    )
    started = rng.choice(("Multi-AZ instance failover started.", "Multi-AZ failover to the standby started"))
    done = rng.choice(
        ("Multi-AZ instance failover completed.", "Multi-AZ failover completed; the standby is now the primary")
    )
    s0 = onset * 60 - rng.randrange(5, 40)
    # Why the host failed, in words of its own: the record an investigation finds behind the failover events.
    cause_at = s0 - rng.randrange(20, 120)
    reason, panic, why = rng.choice(
        (
            ("An EBS volume attached to the primary host became impaired.", "could not fsync file", "a failed volume"),
            ("The underlying hardware of the primary host is degraded.", "could not read block", "failing hardware"),
            ("The primary host lost network connectivity.", None, "a network outage"),
        )
    )
    w.events.append(Event(cause_at, reason, p.name, ("notification",)))
    reasons: list[Selector] = [{"kind": "event", "text": reason, "resource": p.name}]
    if panic is not None:
        target = f'"base/{rng.randrange(16384, 16500)}/{rng.randrange(1000, 99999)}"'
        w.log.append(LogLine(cause_at + rng.randrange(1, 15), "PANIC", f"{panic} {target}: Input/output error"))
        reasons.append({"kind": "log", "text": panic})
    w.events.append(Event(s0, health, p.name, ("failover",)))
    w.events.append(Event(s0 + rng.randrange(5, 20), started, p.name, ("failover",)))
    w.events.append(Event(onset * 60 + 20, "DB instance restarted", p.name, ("availability",)))
    w.events.append(Event((onset + down) * 60 + rng.randrange(0, 50), done, p.name, ("failover",)))
    up = (onset + down) * 60 - rng.randrange(1, 20)
    w.log = [line for line in w.log if not (onset * 60 <= line.second < up)]
    known = (w.start + timedelta(minutes=onset - 1)).strftime("%Y-%m-%d %H:%M:%S UTC")
    w.log.append(LogLine(up, "LOG", f"database system was interrupted; last known up at {known}"))
    w.log.append(LogLine(up, "LOG", "database system was not properly shut down; automatic recovery in progress"))
    w.log.append(LogLine(up + 1, "LOG", f"redo starts at {rng.randrange(16, 255):X}/{rng.randrange(1 << 28):07X}"))
    w.log.append(LogLine(up + 3, "LOG", "database system is ready to accept connections"))
    return Injected(
        mode="failover",
        location=(p.name,),
        decisive=reasons,
        symptom=[
            {"kind": "event", "text": started, "resource": p.name},
            {"kind": "event", "text": done, "resource": p.name},
            {"kind": "event", "text": health, "resource": p.name},
        ],
        alert=AlertSpec(
            "DatabaseConnections", p.name, "LessThanThreshold", 1, f"Connections on {p.name} dropped to 0."
        ),
        secondary=AlertSpec("WriteLatency", p.name, "GreaterThanThreshold", 0, f"Write latency on {p.name} spiked."),
        root_cause=f"A Multi-AZ failover of {p.name}: {why} on its host, which failed its health "
        "checks and RDS promoted the standby; connections dropped while it failed over.",
        claims=[
            (f"RDS reports {why} on the primary host before the failover.", "aws_rds_events"),
            ("RDS reports the failover started and completed.", "aws_rds_events"),
            (f"Connections drop to 0 for {down} minute(s).", "aws_cloudwatch_metrics"),
        ],
        chain=f"{why} on the primary host -> health checks fail -> Multi-AZ failover -> connections dropped",
        keyword="failover",
        sources=["aws_rds_events"],
        tools=["get_alert", "get_events", "query_metrics"],
        queries=["DatabaseConnections"],
    )


FAULTS: dict[str, Callable[[random.Random, World, float, Shape], Injected]] = {
    "storage_full": storage_full,
    "cpu_saturation": cpu_saturation,
    "connection_exhaustion": connection_exhaustion,
    "replication_lag": replication_lag,
    "checkpoint_io_storm": checkpoint_io_storm,
    "failover": failover,
}
"""In the library's order (docs/generator.md): the draw picks from this order, never from a set."""


def instance_of(w: World, name: str) -> Instance:
    return next(i for i in w.fleet.instances if i.name == name)
