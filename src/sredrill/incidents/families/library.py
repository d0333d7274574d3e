"""The fault library, as data: where each fault can happen, what it does to telemetry and logs, what fixes it,
and what a wrong remediation does while it is active.

Roles name components relative to the fault's location (`root`): `store` (the database a client reads, or
the one a cache backs onto), `consumer` (the worker pool of a queue), `queue` (a queue the root consumes),
`peer` (any callee of the root), `callers` (everything that calls the store). Symptoms spread from a
presentation's `center` to everything upstream of it (latency and errors shrinking with each hop), so many
faults look alike in the first observation; what tells them apart is in the logs and metric series of the
right components.
"""

from __future__ import annotations

from dataclasses import dataclass

from sredrill.incidents.families.topology import Kind

__all__ = [
    "CPU",
    "ERR",
    "EXTRA",
    "FAULTS",
    "LAT",
    "MEM",
    "METRIC_NAMES",
    "QD",
    "Effect",
    "FaultKind",
    "LogSpec",
    "Presentation",
    "Remedy",
    "Response",
]

CPU, MEM, ERR, LAT, QD, EXTRA = range(6)
METRIC_NAMES = ("cpu", "memory", "error_rate", "latency", "queue_depth")
"""The five telemetry metrics every component shows; slot 5 is its kind's own metric (`EXTRA_METRIC`)."""

Range = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Effect:
    """What a fault adds to one metric of one role: `add` at onset plus `per_step` per step since."""

    role: str
    metric: int
    add: Range
    per_step: Range = (0.0, 0.0)


@dataclass(frozen=True, slots=True)
class Presentation:
    """One way a fault shows: its effects, and from where it spreads upstream (latency ms, error % at hop 1)."""

    effects: tuple[Effect, ...]
    center: str = "root"
    spread_latency: Range = (300.0, 900.0)
    spread_errors: Range = (1.0, 4.0)


@dataclass(frozen=True, slots=True)
class LogSpec:
    """A log record the fault makes a role write.

    `value` is a range drawn per seed, `"reading:<metric>"` (the role's current reading), or a parameter name
    (`ratio`, `retries`, `version`, `holders`). `once`: written once, `lead` steps before the onset (a deploy
    before the errors began); otherwise written at every step the fault is visible.
    """

    role: str
    event: str
    level: str
    value: Range | str | None = None
    peer: str | None = None
    once: bool = False
    lead: Range = (1.0, 2.0)


@dataclass(frozen=True, slots=True)
class Remedy:
    """An action pattern: an action type on a role; `min_value` names a parameter the value must reach."""

    action: str
    role: str
    min_value: str | None = None


@dataclass(frozen=True, slots=True)
class Response:
    """What a wrong action does while the fault is active (−2 for every effect but `mitigate`).

    `mitigate`: the symptoms go away for `relief` steps, then return (a symptom fix; earns 0).
    `worsen`: the fault grows faster and harder to recover from (`settle` steps added to its recovery).
    `irreversible`: the episode can no longer be resolved (data lost, the outage spread beyond repair).
    `max_value`: the response applies only when the value is below the named parameter (scaling too little).
    """

    action: str
    role: str
    effect: str
    relief: tuple[int, int] = (2, 3)
    below: str | None = None


@dataclass(frozen=True, slots=True)
class FaultKind:
    """One kind of fault: compatible locations, presentations, logs, the fix, and responses to wrong fixes.

    Attributes:
        id: snake_case id (never shown to agents).
        summary: one sentence for humans.
        terms: words that would give it away; never in anything an agent receives.
        locations: the component kinds it can happen at; `needs` a role the location must have.
        presentations: alternative ways it shows (one is drawn per seed).
        logs: what it makes components write.
        fix: the root-cause fix.
        responses: what wrong actions do while it is active.
        settle: steps of recovery after the fix (a `wait` or two before declaring).
        weight: how often it is drawn, relative to the others.
    """

    id: str
    summary: str
    terms: tuple[str, ...]
    locations: tuple[Kind, ...]
    presentations: tuple[Presentation, ...]
    logs: tuple[LogSpec, ...]
    fix: Remedy | None
    responses: tuple[Response, ...] = ()
    needs: tuple[str, ...] = ()
    settle: tuple[int, int] = (1, 2)
    weight: float = 1.0


_CLIENTS = (Kind.API, Kind.WORKER)

FAULTS: tuple[FaultKind, ...] = (
    FaultKind(
        id="overload",
        summary="more traffic than the pool's replicas can serve",
        terms=("overload", "traffic spike", "surge", "under-provisioned"),
        locations=_CLIENTS,
        presentations=(
            Presentation((Effect("root", CPU, (48, 56), (0.5, 1.5)), Effect("root", LAT, (300, 700), (40, 90)),
                          Effect("root", ERR, (0.5, 2.0)), Effect("queue", QD, (350, 600), (60, 120)))),
            Presentation((Effect("root", CPU, (30, 38), (1, 2)), Effect("root", LAT, (950, 1400), (60, 120)),
                          Effect("root", ERR, (1.5, 3.5)), Effect("queue", QD, (200, 400), (80, 140)))),
        ),
        logs=(
            LogSpec("root", "request_rate", "warn", "ratio"),
            LogSpec("root", "latency", "warn", "reading:latency"),
        ),
        fix=Remedy("scale_workers", "root", min_value="replicas_needed"),
        responses=(
            Response("scale_workers", "root", "mitigate", (2, 3), below="replicas_needed"),
            Response("restart_service", "root", "worsen"),
        ),
        weight=1.0,
    ),
    FaultKind(
        id="memory_leak",
        summary="a release leaks memory until the processes are killed and restarted",
        terms=("memory leak", "leak", "oom"),
        locations=_CLIENTS,
        presentations=(
            Presentation((Effect("root", MEM, (40, 46), (2, 4)), Effect("root", ERR, (0.5, 2), (0.3, 1.0)),
                          Effect("root", LAT, (150, 400), (30, 60)), Effect("queue", QD, (150, 350), (40, 90)))),
            Presentation((Effect("root", MEM, (24, 32), (3, 5)), Effect("root", ERR, (5, 9), (0.5, 1.0)),
                          Effect("root", LAT, (300, 700), (40, 80)), Effect("queue", QD, (300, 500), (60, 120)))),
        ),
        logs=(
            LogSpec("root", "memory", "warn", "reading:memory"),
            LogSpec("root", "restarts", "error", "restarts"),
            LogSpec("root", "version_changed", "info", "version", once=True, lead=(3, 6)),
        ),
        fix=Remedy("rollback_release", "root"),
        responses=(
            Response("restart_service", "root", "mitigate", (2, 3)),
            Response("scale_workers", "root", "mitigate", (1, 2)),
        ),
    ),
    FaultKind(
        id="bad_deploy",
        summary="a release fails requests or issues slow queries",
        terms=("bad deploy", "bad release", "regression", "faulty release"),
        locations=_CLIENTS,
        presentations=(
            Presentation((Effect("root", ERR, (7, 18), (0.5, 1.5)), Effect("root", LAT, (200, 600), (20, 50)),
                          Effect("queue", QD, (250, 450), (60, 120)))),
            Presentation(
                (Effect("store", CPU, (48, 58), (0.5, 1.5)), Effect("store", LAT, (190, 350), (15, 30)),
                 Effect("root", LAT, (700, 1200), (40, 80)), Effect("root", ERR, (1, 3))),
                center="store",
            ),
        ),
        logs=(
            LogSpec("root", "version_changed", "info", "version", once=True, lead=(1, 2)),
            LogSpec("root", "error_rate", "error", "reading:error_rate"),
            LogSpec("store", "slow_query", "warn", (900, 4000), peer="root"),
        ),
        fix=Remedy("rollback_release", "root"),
        responses=(
            Response("scale_workers", "root", "mitigate", (2, 3)),
            Response("restart_database", "store", "irreversible"),
        ),
    ),
    FaultKind(
        id="config_error",
        summary="a configuration change points the service at a wrong endpoint or limit",
        terms=("config error", "misconfiguration", "bad config", "wrong endpoint"),
        locations=_CLIENTS,
        needs=("peer",),
        presentations=(
            Presentation((Effect("root", ERR, (8, 22), (0.3, 1.0)), Effect("root", LAT, (150, 500), (10, 40)),
                          Effect("queue", QD, (250, 450), (60, 120)))),
            Presentation((Effect("root", ERR, (4, 7), (0.5, 1.0)), Effect("root", LAT, (950, 1300), (30, 60)),
                          Effect("root", CPU, (20, 30)))),
        ),
        logs=(
            LogSpec("root", "config_changed", "info", "version", once=True, lead=(1, 2)),
            LogSpec("root", "connection_refused", "error", (20, 90), peer="peer"),
            LogSpec("root", "error_rate", "error", "reading:error_rate"),
        ),
        fix=Remedy("revert_config", "root"),
        responses=(
            Response("restart_service", "root", "mitigate", (1, 2)),
            Response("failover", "peer", "worsen"),
            Response("restart_database", "peer", "irreversible"),
        ),
    ),
    FaultKind(
        id="pool_exhaustion",
        summary="a client leaks database connections until the pool is exhausted for every client",
        terms=("pool exhaustion", "connection leak", "exhausted pool", "pool exhausted"),
        locations=_CLIENTS,
        needs=("store",),
        presentations=(
            Presentation(
                (Effect("store", EXTRA, (100, 100)), Effect("store", LAT, (60, 160), (5, 15)),
                 Effect("root", ERR, (5, 14), (0.5, 1.0)), Effect("root", LAT, (600, 1100), (40, 80))),
                center="store", spread_latency=(500, 1100), spread_errors=(3, 9),
            ),
            Presentation(
                (Effect("store", EXTRA, (100, 100)), Effect("store", LAT, (210, 320), (10, 20)),
                 Effect("root", ERR, (2, 5), (0.5, 1.0))),
                center="store", spread_latency=(300, 800), spread_errors=(2, 6),
            ),
        ),
        logs=(
            LogSpec("store", "connections", "warn", "pool", peer="root"),
            LogSpec("store", "connection_refused", "error", (30, 120)),
            LogSpec("root", "request_timeout", "error", (10, 60), peer="store"),
        ),
        fix=Remedy("restart_service", "root"),
        responses=(
            Response("restart_database", "store", "irreversible"),
            Response("scale_workers", "callers", "worsen"),
        ),
    ),
    FaultKind(
        id="poisoned_message",
        summary="a malformed message crashes every consumer that takes it, and is redelivered forever",
        terms=("poison", "poisoned", "malformed message", "bad message"),
        locations=(Kind.QUEUE,),
        needs=("consumer",),
        presentations=(
            Presentation(
                (Effect("consumer", ERR, (9, 25), (0.5, 1.5)), Effect("consumer", CPU, (20, 35)),
                 Effect("root", QD, (400, 650), (80, 150))),
                center="consumer",
            ),
            Presentation(
                (Effect("consumer", ERR, (4, 7), (0.8, 1.5)), Effect("consumer", MEM, (20, 30), (1, 2)),
                 Effect("root", QD, (250, 450), (100, 170))),
                center="consumer",
            ),
        ),
        logs=(
            LogSpec("root", "message_retry", "warn", "retries"),
            LogSpec("consumer", "restarts", "error", "restarts"),
            LogSpec("consumer", "error_rate", "error", "reading:error_rate"),
        ),
        fix=Remedy("drop_message", "root"),
        responses=(
            Response("scale_workers", "consumer", "worsen"),
            Response("restart_service", "consumer", "mitigate", (1, 2)),
        ),
    ),
    FaultKind(
        id="dependency_outage",
        summary="a third-party dependency fails or times out",
        terms=("outage", "provider down", "dependency down", "third-party failure"),
        locations=(Kind.EXTERNAL,),
        needs=("caller",),
        presentations=(
            Presentation((Effect("root", ERR, (30, 60), (1, 3)), Effect("root", LAT, (1600, 2800), (50, 150))),
                         spread_latency=(700, 1600), spread_errors=(4, 12)),
            Presentation((Effect("root", ERR, (3, 4.5)), Effect("root", LAT, (500, 1200), (40, 90))),
                         spread_latency=(900, 1500), spread_errors=(2, 6)),
        ),
        logs=(
            LogSpec("root", "error_rate", "error", "reading:error_rate"),
            LogSpec("caller", "request_timeout", "error", (10, 80), peer="root"),
            LogSpec("caller", "message_retry", "warn", (3, 9)),
        ),
        fix=Remedy("failover", "root"),
        responses=(
            Response("scale_workers", "caller", "worsen"),
            Response("restart_service", "caller", "mitigate", (1, 2)),
        ),
    ),
    FaultKind(
        id="cache_failure",
        summary="a cache stops holding entries, and every read falls through to its database",
        terms=("cache failure", "cache miss storm", "cold cache", "cache stampede"),
        locations=(Kind.CACHE,),
        needs=("store",),
        presentations=(
            Presentation(
                (Effect("root", EXTRA, (-80, -60)), Effect("store", CPU, (48, 58), (0.5, 1.5)),
                 Effect("store", LAT, (200, 380), (10, 30)), Effect("store", EXTRA, (20, 35))),
                center="store",
            ),
            Presentation(
                (Effect("root", EXTRA, (-60, -45)), Effect("store", CPU, (35, 45), (1, 2)),
                 Effect("store", LAT, (120, 190), (20, 40))),
                center="store", spread_latency=(900, 1300), spread_errors=(1, 3),
            ),
        ),
        logs=(
            LogSpec("root", "hit_rate", "warn", "reading:extra"),
            LogSpec("store", "request_rate", "warn", "ratio"),
            LogSpec("store", "latency", "warn", "reading:latency"),
        ),
        fix=Remedy("flush_cache", "root"),
        responses=(
            Response("restart_database", "store", "irreversible"),
            Response("scale_workers", "callers", "worsen"),
        ),
    ),
    FaultKind(
        id="false_alarm",
        summary="nothing is wrong: a noisy alert fired on a short spike",
        terms=("false alarm", "false positive", "noise"),
        locations=(Kind.API, Kind.WORKER, Kind.QUEUE, Kind.CACHE, Kind.DATABASE, Kind.EXTERNAL),
        presentations=(Presentation(()),),
        logs=(),
        fix=None,
        settle=(0, 0),
        weight=0.8,
    ),
)  # fmt: skip
"""Every fault kind, in a fixed order (the generator draws by `weight`)."""
