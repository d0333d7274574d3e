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
    """What a fault does to one metric of one role: `add` at onset plus `per_step` per step since.

    With `level=True`, `add` is the reading the metric is brought to (whatever its resting value), so a shape
    breaches its alert threshold on every seed.
    """

    role: str
    metric: int
    add: Range
    per_step: Range = (0.0, 0.0)
    level: bool = False


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
    `below`: the response applies only when the value is below the named parameter (scaling too little).
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


def _shape(role: str, name: str) -> tuple[Effect, ...]:
    """A symptom shape on a role: the same few shapes serve every fault, so a shape alone names no fault."""
    shapes = {
        # api and worker pools (alerts: cpu 85, memory 88, error_rate 5, latency 1000 ms)
        "cpu": (
            Effect(role, CPU, (88, 97), (0.3, 1.0), True),
            Effect(role, LAT, (200, 500), (20, 50)),
            Effect(role, ERR, (0.5, 1.5)),
        ),
        "memory": (
            Effect(role, MEM, (89, 94), (0.5, 1.5), True),
            Effect(role, LAT, (100, 300), (10, 40)),
            Effect(role, ERR, (0.3, 1.0)),
        ),
        "latency": (
            Effect(role, LAT, (1100, 1500), (30, 80), True),
            Effect(role, CPU, (5, 15)),
            Effect(role, ERR, (0.5, 2.0)),
        ),
        "errors": (Effect(role, ERR, (7, 16), (0.3, 1.0), True), Effect(role, LAT, (150, 450), (10, 40))),
        "errors+latency": (
            Effect(role, ERR, (6, 12), (0.3, 1.0), True),
            Effect(role, LAT, (1050, 1400), (30, 70), True),
        ),
        # databases (alerts: cpu 85, latency 200 ms)
        "db_cpu": (Effect(role, CPU, (88, 96), (0.3, 1.0), True), Effect(role, LAT, (120, 190), (5, 10), True)),
        "db_latency": (Effect(role, LAT, (210, 350), (10, 25), True), Effect(role, CPU, (10, 20))),
        "db_both": (Effect(role, CPU, (88, 96), (0.3, 1.0), True), Effect(role, LAT, (210, 350), (10, 25), True)),
    }
    return shapes[name]


_BACKLOG = Effect("queue", QD, (600, 900), (50, 120), True)
"""A pool that slows down lets the queue it consumes fill (no effect when it consumes none)."""
_CLIENT_SHAPES = ("cpu", "memory", "latency", "errors", "errors+latency")


def _client(names: tuple[str, ...], *extra: Effect, role: str = "root", **kw: object) -> tuple[Presentation, ...]:
    backlog = Effect("queue" if role == "root" else "consumer_queue", QD, (600, 900), (50, 120), True)
    return tuple(Presentation((*_shape(role, n), backlog, *extra), center=role, **kw) for n in names)  # type: ignore[arg-type]


FAULTS: tuple[FaultKind, ...] = (
    FaultKind(
        id="overload",
        summary="more traffic than the pool's replicas can serve",
        terms=("overload", "traffic spike", "surge", "under-provisioned"),
        locations=_CLIENTS,
        presentations=_client(("cpu", "latency", "errors+latency", "memory")),
        logs=(
            LogSpec("root", "request_rate", "warn", "ratio"),
            LogSpec("root", "latency", "warn", "reading:latency"),
        ),
        fix=Remedy("scale_workers", "root", min_value="replicas_needed"),
        responses=(
            Response("scale_workers", "root", "mitigate", (2, 3), below="replicas_needed"),
            Response("restart_service", "root", "worsen"),
        ),
    weight=1.1,
    ),
    FaultKind(
        id="memory_leak",
        summary="a release leaks memory until the processes are killed and restarted",
        terms=("memory leak", "leak", "oom"),
        locations=_CLIENTS,
        presentations=_client(("memory", "errors", "latency", "cpu")),
        logs=(
            LogSpec("root", "memory", "warn", "reading:memory"),
            LogSpec("root", "restarts", "error", "restarts"),
            LogSpec("root", "version_changed", "info", "version", once=True, lead=(3, 5)),
        ),
        fix=Remedy("rollback_release", "root"),
        responses=(
            Response("restart_service", "root", "mitigate", (2, 3)),
            Response("scale_workers", "root", "mitigate", (1, 2)),
        ),
    weight=1.0,
    ),
    FaultKind(
        id="bad_deploy",
        summary="a release fails requests or issues slow queries",
        terms=("bad deploy", "bad release", "regression", "faulty release"),
        locations=_CLIENTS,
        presentations=(
            *_client(("errors", "errors+latency", "cpu", "latency", "memory")),
            *(
                Presentation(
                    (*_shape("store", n), Effect("root", LAT, (250, 700), (30, 60))),
                    center="store",
                    spread_latency=(150, 700),
                )
                for n in ("db_cpu", "db_latency", "db_both")
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
    weight=1.1,
    ),
    FaultKind(
        id="config_error",
        summary="a configuration change points the service at a wrong endpoint or limit",
        terms=("config error", "misconfiguration", "bad config", "wrong endpoint"),
        locations=_CLIENTS,
        needs=("peer",),
        presentations=_client(("errors", "errors+latency", "latency", "cpu")),
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
    weight=0.8,
    ),
    FaultKind(
        id="pool_exhaustion",
        summary="a client leaks database connections until the pool is exhausted for every client",
        terms=("pool exhaustion", "connection leak", "exhausted pool", "pool exhausted"),
        locations=_CLIENTS,
        needs=("store",),
        presentations=(
            # The client holding the connections works on; the others are starved and fail.
            *(
                Presentation(
                    (*_shape("callers", n), Effect("store", EXTRA, (100, 100), level=True),
                     Effect("store", LAT, (40, 90), (3, 8)), Effect("root", LAT, (100, 400), (10, 30))),
                    center="callers",
                )
                for n in ("errors", "errors+latency", "latency")
            ),
            Presentation(
                (*_shape("store", "db_latency"), Effect("store", EXTRA, (100, 100), level=True),
                 Effect("root", ERR, (1, 2.2)), Effect("callers", ERR, (1, 2.2))),
                center="store", spread_latency=(150, 700), spread_errors=(0.5, 2.0),
            ),
        ),
        logs=(
            LogSpec("store", "connections", "warn", "pool", peer="root"),
            LogSpec("store", "connection_refused", "error", (30, 120)),
            LogSpec("root", "request_timeout", "error", (10, 60), peer="store"),
            LogSpec("callers", "request_timeout", "error", (5, 40), peer="store"),
        ),
        fix=Remedy("restart_service", "root"),
        responses=(
            Response("restart_database", "store", "irreversible"),
            Response("scale_workers", "root", "worsen"),
            Response("scale_workers", "callers", "worsen"),
        ),
    weight=0.9,
    ),
    FaultKind(
        id="poisoned_message",
        summary="a malformed message crashes every consumer that takes it, and is redelivered forever",
        terms=("poison", "poisoned", "malformed message", "bad message"),
        locations=(Kind.QUEUE,),
        needs=("consumer",),
        presentations=tuple(
            Presentation((*_shape("consumer", n), Effect("root", QD, (600, 900), (60, 140), True)), center="consumer")
            for n in ("errors", "cpu", "memory", "errors+latency")
        ),
        logs=(
            LogSpec("root", "message_retry", "warn", "retries"),
            LogSpec("consumer", "restarts", "error", "restarts"),
            LogSpec("consumer", "memory", "warn", "reading:memory"),
            LogSpec("consumer", "error_rate", "error", "reading:error_rate"),
        ),
        fix=Remedy("drop_message", "root"),
        responses=(
            Response("scale_workers", "consumer", "worsen"),
            Response("restart_service", "consumer", "mitigate", (1, 2)),
        ),
    weight=0.7,
    ),
    FaultKind(
        id="dependency_outage",
        summary="a third-party dependency fails or times out",
        terms=("outage", "provider down", "dependency down", "third-party failure"),
        locations=(Kind.EXTERNAL,),
        needs=("caller",),
        presentations=tuple(
            Presentation(
                (*_shape("caller", n), Effect("caller_queue", QD, (600, 900), (50, 120), True),
                 Effect("root", ERR, (1.0, 1.8)), Effect("root", LAT, (200, 500))),
                center="caller",
            )
            for n in ("errors", "latency", "errors+latency")
        ),
        logs=(
            LogSpec("root", "error_rate", "error", (35, 80)),
            LogSpec("caller", "request_timeout", "error", (10, 80), peer="root"),
            LogSpec("caller", "message_retry", "warn", (3, 9)),
        ),
        fix=Remedy("failover", "root"),
        responses=(
            Response("scale_workers", "caller", "worsen"),
            Response("restart_service", "caller", "mitigate", (1, 2)),
        ),
    weight=1.3,
    ),
    FaultKind(
        id="cache_failure",
        summary="a cache stops holding entries, and every read falls through to its database",
        terms=("cache failure", "cache miss storm", "cold cache", "cache stampede"),
        locations=(Kind.CACHE,),
        needs=("store",),
        presentations=tuple(
            Presentation(
                (*_shape("store", n), Effect("root", EXTRA, (15, 40), level=True)),
                center="store",
                spread_latency=(150, 900),
                spread_errors=(0.5, 3.0),
            )
            for n in ("db_cpu", "db_latency", "db_both")
        ),
        logs=(
            LogSpec("root", "hit_rate", "warn", "reading:extra"),
            LogSpec("store", "request_rate", "warn", "ratio"),
            LogSpec("store", "latency", "warn", "reading:latency"),
            LogSpec("store", "slow_query", "warn", (300, 900)),
        ),
        fix=Remedy("flush_cache", "root"),
        responses=(
            Response("restart_database", "store", "irreversible"),
            Response("scale_workers", "callers", "worsen"),
        ),
    weight=0.7,
    ),
    FaultKind(
        id="false_alarm",
        summary="nothing is wrong: a noisy alert fired on a short spike",
        terms=("false alarm", "false positive", "noise"),
        locations=(Kind.API, Kind.WORKER, Kind.DATABASE),
        presentations=(Presentation(()),),
        logs=(),
        fix=None,
        settle=(0, 0),
        weight=0.6,
    ),
)  # fmt: skip
"""Every fault kind, in a fixed order (the generator draws by `weight`)."""
