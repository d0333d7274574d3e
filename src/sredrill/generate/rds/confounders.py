"""Confounders (benign anomalies that look like another failure mode), the benign blip of a healthy
difficulty-1 scenario, and recovered incidents: each with the selectors that refute the mode it mimics.

A confounder's `v` (0-1) is its magnitude within its range: the generator raises it until the confounder is at
least as anomalous as the cause. Every confounder stays below its mode's bound (CPU under 90 %, connections
under 90 % of the limit, lag under 300 s, free storage above 5 %): `World.caps` holds what the written
`Maximum` may not pass.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .benign import client
from .faults import AlertSpec
from .fleet import GB, Instance
from .series import Shape, profile
from .world import MINUTES, Event, LogLine, Statement, World

__all__ = ["CONFOUNDERS", "CONFOUNDER_METRICS", "RECOVERED", "Confounder", "benign_blip", "healthy_selectors"]

Selector = dict[str, Any]

CONFOUNDER_METRICS: dict[str, tuple[str, ...]] = {
    "cpu_saturation": ("CPUUtilization", "DBLoadCPU", "DBLoad"),
    "connection_exhaustion": ("DatabaseConnections",),
    "replication_lag": ("ReplicaLag",),
    "storage_full": ("FreeStorageSpace",),
    "checkpoint_io_storm": ("ReadIOPS", "ReadThroughput"),
}
"""The series each confounder moves, by the mode it mimics, on the instance its `refuting` selectors name:
its anomaly score is theirs (Average)."""


@dataclass(slots=True)
class Confounder:
    """A benign anomaly (or a recovered incident) as the answer key sees it."""

    mode: str
    """The failure mode it looks like (ruled out in the key)."""
    resource: str
    refuting: list[Selector]
    reason: str
    alert: AlertSpec
    signal: str
    claim: tuple[str, str]
    keyword: str = ""
    sources: tuple[str, ...] = ("aws_cloudwatch_metrics",)


def _span(rng: random.Random, w: World, recover: bool) -> tuple[int, int | None]:
    onset = rng.randrange(62, w.alert_at - 12)
    end = min(w.alert_at - 3, onset + rng.randrange(8, 40)) if recover else None
    return onset, end


def cpu_report(rng: random.Random, w: World, v: float, inst: Instance) -> Confounder:
    onset, end = _span(rng, w, rng.random() < 0.5)
    prof = profile(MINUTES, onset, Shape.RAMP, rng.randrange(3, 10), end)
    target = 60 + 28 * v
    w.toward(inst, "CPUUtilization", prof, target, rng, 0.02)
    w.clamp(inst, "CPUUtilization", 0.0, 88.9)
    w.caps[(inst.name, "CPUUtilization")] = 89.8
    w.toward(inst, "DBLoadCPU", prof, target / 100 * inst.vcpu * 0.9, rng, 0.05)
    w.mul(inst, "DBLoadNonCPU", prof, 1 + 12 * v)  # the report reads: IO:DataFileRead sessions
    cpu, io = w.series(inst, "DBLoadCPU"), w.series(inst, "DBLoadNonCPU")
    w.traces[inst.name]["DBLoad"] = [a + b for a, b in zip(cpu, io, strict=True)]
    w.traces[inst.name]["DBLoadRelativeToNumVCPUs"] = [x / inst.vcpu for x in w.traces[inst.name]["DBLoad"]]
    if inst is w.fleet.primary:
        t = inst.app.tables
        user = rng.choice(("metabase", "reporting", "looker_ro"))
        w.statements.append(
            Statement(
                f"SELECT date_trunc('day', created_at), {inst.app.key}, count(*), sum(amount) FROM {t[1]} "
                "GROUP BY 1, 2",
                user,
                client(rng, 90).split("(")[0],
                inst.vcpu * target / 100 * sum(prof) / MINUTES,
                (("CPU", 0.9), ("IO:DataFileRead", 0.1)),
                rng.uniform(0.01, 0.2),
            )
        )
    return Confounder(
        mode="cpu_saturation",
        resource=inst.name,
        refuting=[{"metric": "CPUUtilization", "resource": inst.name, "shows": ["below"], "below": 90}],
        reason=f"CPU on {inst.name} rises to about {target:.0f}% for a report but stays below 90%",
        alert=AlertSpec("CPUUtilization", inst.name, "GreaterThanThreshold", 55, f"CPU on {inst.name} is above 55%."),
        signal=f"CPUUtilization on {inst.name} rises to about {target:.0f}% (a report)",
        claim=(f"CPU on {inst.name} stays below 90%.", "aws_cloudwatch_metrics"),
    )


def idle_sessions(rng: random.Random, w: World, v: float, inst: Instance) -> Confounder:
    onset, end = _span(rng, w, rng.random() < 0.4)
    prof = profile(MINUTES, onset, rng.choice((Shape.STEP, Shape.RAMP)), rng.randrange(3, 15), end)
    limit = inst.max_connections
    target = (0.3 + 0.55 * v) * limit
    w.toward(inst, "DatabaseConnections", prof, target, rng, 0.02)
    w.clamp(inst, "DatabaseConnections", 0.0, 0.86 * limit)
    conns = w.series(inst, "DatabaseConnections")
    for t in range(MINUTES):
        conns[t] = float(round(conns[t]))
    w.caps[(inst.name, "DatabaseConnections")] = float(int(0.88 * limit))
    bound = round(0.9 * limit)
    return Confounder(
        mode="connection_exhaustion",
        resource=inst.name,
        refuting=[{"metric": "DatabaseConnections", "resource": inst.name, "shows": ["below"], "below": bound}],
        reason=f"a deploy opened many idle sessions on {inst.name}, but they stay below 90% of max_connections "
        f"({limit})",
        alert=AlertSpec(
            "DatabaseConnections",
            inst.name,
            "GreaterThanThreshold",
            round(0.25 * limit),
            f"Connections on {inst.name} are above 25% of max_connections.",
        ),
        signal=f"DatabaseConnections on {inst.name} climbs to about {target:.0f} of {limit} (a deploy)",
        claim=(f"Connections on {inst.name} stay below {bound}.", "aws_cloudwatch_metrics"),
    )


def replica_behind(rng: random.Random, w: World, v: float, inst: Instance) -> Confounder:
    onset, end = _span(rng, w, True)
    prof = profile(MINUTES, onset, Shape.RAMP, rng.randrange(3, 10), end)
    target = 30 + 220 * v
    lag = w.series(inst, "ReplicaLag")
    for t, p in enumerate(prof):
        if p:
            lag[t] = max(lag[t], min(285.0, target * p * (1 + rng.uniform(-0.04, 0.04))))
    w.caps[(inst.name, "ReplicaLag")] = 295.0
    return Confounder(
        mode="replication_lag",
        resource=inst.name,
        refuting=[{"metric": "ReplicaLag", "resource": inst.name, "shows": ["below"], "below": 300}],
        reason=f"{inst.name} fell briefly behind while replaying a vacuum, never 300 s behind",
        alert=AlertSpec(
            "ReplicaLag",
            inst.name,
            "GreaterThanThreshold",
            30,
            f"Read replica {inst.name} is more than 30 seconds behind.",
        ),
        signal=f"ReplicaLag on {inst.name} reaches about {target:.0f} s (replaying a vacuum)",
        claim=(f"Replica lag on {inst.name} stays under 300 s.", "aws_cloudwatch_metrics"),
    )


_AUTOSCALE = (
    (
        "Applying autoscaling-initiated modification to allocated storage",
        "Finished applying autoscaling-initiated modification to allocated storage",
    ),
    (
        "Storage autoscaling is increasing the allocated storage of the DB instance",
        "Finished applying autoscaling-initiated modification to allocated storage",
    ),
)


def _autoscale(rng: random.Random, w: World, inst: Instance, low: float, grow: float, at: int) -> str:
    """Free storage falls to `low` (a fraction of the volume) by minute `at`, then autoscaling adds `grow`."""
    free = w.series(inst, "FreeStorageSpace")
    volume = inst.storage_gb * GB
    fall = rng.randrange(15, 40)
    first = max(61, at - fall)
    start = free[first]
    for t in range(first, MINUTES):
        k = min(1.0, (t - first) / max(1, at - first))
        free[t] = start + (volume * low - start) * k + (free[t] - free[first]) * 0.2
        if t > at + 2:
            free[t] += volume * grow
    applying, finished = rng.choice(_AUTOSCALE)
    w.events.append(Event(at * 60 + rng.randrange(0, 60), applying, inst.name, ("configuration change",)))
    w.events.append(Event((at + 2) * 60 + rng.randrange(0, 60), finished, inst.name, ("configuration change",)))
    return finished


def storage_dip(rng: random.Random, w: World, v: float, inst: Instance) -> Confounder:
    at = rng.randrange(80, w.alert_at - 5)
    low = 0.15 - 0.07 * v
    finished = _autoscale(rng, w, inst, low, rng.uniform(0.1, 0.25), at)
    volume = inst.storage_gb * GB
    return Confounder(
        mode="storage_full",
        resource=inst.name,
        refuting=[
            {"kind": "event", "text": finished, "resource": inst.name},
            {"metric": "FreeStorageSpace", "resource": inst.name, "shows": ["above"], "above": round(0.05 * volume)},
        ],
        reason=f"free storage on {inst.name} dipped to about {low * 100:.0f}% and storage autoscaling grew the volume",
        alert=AlertSpec(
            "FreeStorageSpace",
            inst.name,
            "LessThanThreshold",
            round(0.2 * volume),
            f"Free storage on {inst.name} is below 20% of its volume.",
        ),
        signal=f"FreeStorageSpace on {inst.name} dips to about {low * 100:.0f}% before autoscaling",
        claim=(f"Storage autoscaling grew the volume of {inst.name}.", "aws_rds_events"),
        sources=("aws_rds_events",),
    )


def backup_burst(rng: random.Random, w: World, v: float, inst: Instance) -> Confounder:
    onset, _ = _span(rng, w, False)
    took = rng.randrange(10, 30)
    prof = [1.0 if onset <= t < onset + took else 0.0 for t in range(MINUTES)]
    factor = 5 + 55 * v
    w.mul(inst, "ReadIOPS", prof, factor)
    w.mul(inst, "ReadThroughput", prof, factor)
    started = rng.choice(("Backing up DB instance", "Creating automated snapshot"))
    finished = "Finished DB Instance backup" if started.startswith("Backing") else "Automated snapshot created"
    w.events.append(Event(onset * 60 - rng.randrange(1, 50), started, inst.name, ("backup",)))
    w.events.append(Event((onset + took) * 60 + rng.randrange(0, 50), finished, inst.name, ("backup",)))
    return Confounder(
        mode="checkpoint_io_storm",
        resource=inst.name,
        refuting=[{"kind": "event", "text": started, "resource": inst.name}],
        reason=f"the read burst on {inst.name} is its backup reading the volume, not checkpoints writing it",
        alert=AlertSpec("ReadIOPS", inst.name, "GreaterThanThreshold", 0, f"Read IOPS on {inst.name} spiked."),
        signal=f"ReadIOPS on {inst.name} up about {factor:.0f}-fold during a backup",
        claim=(f"The read burst on {inst.name} matches its backup.", "aws_rds_events"),
        sources=("aws_rds_events",),
    )


CONFOUNDERS: dict[str, Callable[[random.Random, World, float, Instance], Confounder]] = {
    "cpu_saturation": cpu_report,
    "connection_exhaustion": idle_sessions,
    "replication_lag": replica_behind,
    "storage_full": storage_dip,
    "checkpoint_io_storm": backup_burst,
}
"""By the mode each mimics, in a fixed order."""


def where(rng: random.Random, w: World, mode: str) -> Instance:
    """The instance a confounder of `mode` shows on: the replica for lag, else the primary or an unrelated one."""
    if mode == "replication_lag":
        return w.fleet.replica
    return rng.choice((w.fleet.primary, *w.fleet.others))


def benign_blip(rng: random.Random, w: World) -> AlertSpec:
    """A short CPU blip on the primary near the alert: what a healthy difficulty-1 alert fired on."""
    p = w.fleet.primary
    onset = w.alert_at - rng.randrange(1, 4)
    prof = profile(MINUTES, onset, Shape.STEP, 1, onset + rng.randrange(2, 5))
    target = rng.uniform(55, 75)
    w.toward(p, "CPUUtilization", prof, target, rng, 0.03)
    return AlertSpec("CPUUtilization", p.name, "GreaterThanThreshold", 50, f"CPU on {p.name} is above 50%.")


def healthy_selectors(w: World) -> list[Selector]:
    """What shows the primary healthy: below (above) a bound from what harm means, or flat, as the built-in
    healthy keys accept (only the series whose Average stays within the bound)."""
    p = w.fleet.primary
    volume = p.storage_gb * GB
    out: list[Selector] = []
    cpu = w.series(p, "CPUUtilization")
    if "CPUUtilization" not in w.missing and max(cpu) < 85:
        out.append({"metric": "CPUUtilization", "resource": p.name, "shows": ["below", "flat"], "below": 90})
    conns = w.series(p, "DatabaseConnections")
    if "DatabaseConnections" not in w.missing and max(conns) < 0.85 * p.max_connections:
        out.append(
            {
                "metric": "DatabaseConnections",
                "resource": p.name,
                "shows": ["below", "flat"],
                "below": round(0.9 * p.max_connections),
            }
        )
    free = w.series(p, "FreeStorageSpace")
    if "FreeStorageSpace" not in w.missing and min(free) > 0.12 * volume:
        out.append(
            {"metric": "FreeStorageSpace", "resource": p.name, "shows": ["above", "flat"], "above": round(0.1 * volume)}
        )
    return out


def recovered_storage(rng: random.Random, w: World) -> Confounder:
    p = w.fleet.primary
    at = rng.randrange(95, w.alert_at - 8)
    low = rng.uniform(0.03, 0.08)
    finished = _autoscale(rng, w, p, low, rng.uniform(0.2, 0.4), at)
    volume = p.storage_gb * GB
    return Confounder(
        mode="storage_full",
        resource=p.name,
        refuting=[
            {"kind": "event", "text": finished, "resource": p.name},
            {"metric": "FreeStorageSpace", "resource": p.name, "shows": ["rising"]},
        ],
        reason=f"free storage on {p.name} fell to about {low * 100:.0f}% but storage autoscaling grew the volume "
        "and it recovered",
        alert=AlertSpec(
            "FreeStorageSpace",
            p.name,
            "LessThanThreshold",
            round(0.1 * volume),
            f"Free storage on {p.name} fell below 10% of its {p.storage_gb} GB volume.",
        ),
        signal=f"FreeStorageSpace on {p.name} fell to about {low * 100:.0f}% and recovered (autoscaling)",
        claim=(f"Storage autoscaling grew the volume of {p.name} and free storage recovered.", "aws_rds_events"),
        keyword="recovered",
        sources=("aws_rds_events",),
    )


def recovered_cpu(rng: random.Random, w: World) -> Confounder:
    p = w.fleet.primary
    onset = rng.randrange(70, w.alert_at - 40)
    end = rng.randrange(onset + 15, w.alert_at - 12)
    prof = profile(MINUTES, onset, Shape.RAMP, rng.randrange(2, 6), end)
    w.toward(p, "CPUUtilization", prof, rng.uniform(93, 99), rng, 0.01)
    w.clamp(p, "CPUUtilization", 0.0, 100.0)
    user = rng.choice(("metabase", "reporting", "looker_ro"))
    sql = f"SELECT {p.app.key}, count(*) FROM {p.app.tables[0]} GROUP BY 1 ORDER BY 2 DESC"
    w.log.append(
        LogLine(
            end * 60 + rng.randrange(0, 60),
            "LOG",
            f"duration: {(end - onset) * 60000 + rng.uniform(0, 999):.3f} ms  statement: {sql}",
            user,
            p.app.database,
            client(rng, 90),
            rng.randrange(10000, 65000),
        )
    )
    return Confounder(
        mode="cpu_saturation",
        resource=p.name,
        refuting=[{"metric": "CPUUtilization", "resource": p.name, "shows": ["below", "falling"], "below": 90}],
        reason=f"CPU on {p.name} was pinned by a report that finished; it is back below 90%",
        alert=AlertSpec(
            "CPUUtilization", p.name, "GreaterThanThreshold", 90, f"CPU on {p.name} went above 90% for 3 datapoints."
        ),
        signal=f"CPUUtilization on {p.name} was pinned and recovered",
        claim=(f"CPU on {p.name} is back below 90% after the report finished.", "aws_cloudwatch_metrics"),
        keyword="recovered",
    )


def recovered_connections(rng: random.Random, w: World) -> Confounder:
    p = w.fleet.primary
    onset = rng.randrange(70, w.alert_at - 40)
    end = rng.randrange(onset + 15, w.alert_at - 12)
    prof = profile(MINUTES, onset, Shape.RAMP, rng.randrange(3, 10), end)
    limit = p.max_connections
    w.toward(p, "DatabaseConnections", prof, float(limit), rng)
    conns = w.series(p, "DatabaseConnections")
    for t in range(MINUTES):
        conns[t] = float(min(limit, round(conns[t])))
    user = f"{p.app.name}_api"
    full = next((t for t in range(onset, end) if conns[t] >= limit), onset + 1)
    for _ in range(rng.randrange(4, 10)):
        w.log.append(
            LogLine(
                rng.randrange(full * 60, end * 60),
                "FATAL",
                "sorry, too many clients already",
                user,
                p.app.database,
                client(rng, 50),
                rng.randrange(10000, 65000),
            )
        )
    bound = round(0.9 * limit)
    return Confounder(
        mode="connection_exhaustion",
        resource=p.name,
        refuting=[{"metric": "DatabaseConnections", "resource": p.name, "shows": ["below", "falling"], "below": bound}],
        reason=f"connections on {p.name} hit the limit but the sessions were released and they are back below {bound}",
        alert=AlertSpec(
            "DatabaseConnections",
            p.name,
            "GreaterThanThreshold",
            bound,
            f"Connections on {p.name} went above 90% of max_connections ({limit}).",
        ),
        signal=f"DatabaseConnections on {p.name} hit the limit and recovered",
        claim=(f"Connections on {p.name} are back below {bound}.", "aws_cloudwatch_metrics"),
        keyword="recovered",
    )


RECOVERED: dict[str, Callable[[random.Random, World], Confounder]] = {
    "storage_full": recovered_storage,
    "cpu_saturation": recovered_cpu,
    "connection_exhaustion": recovered_connections,
}
"""Recovered incidents, by the mode that happened and ended before the alert."""
