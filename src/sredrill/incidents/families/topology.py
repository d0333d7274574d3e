"""Topologies: the components of one generated system and how they are wired, drawn from a family's template.

A component has a kind (`api`, `worker`, `queue`, `cache`, `database`, `external`) and a name drawn per seed
from a pool of that kind, so neither a name nor a position identifies an episode, and no name says anything
about a fault. Wiring: a caller *calls* a callee (api or worker → cache, database, external, queue: publishing
is a call), a worker pool *consumes* a queue, a cache *backs onto* a database (a miss reads it). Symptoms
travel against the calls: a slow callee makes its callers slow.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["FAMILY_TEMPLATES", "Component", "Kind", "Template", "Topology", "draw_topology"]


class Kind(StrEnum):
    """What a component is; remediations apply to some kinds only."""

    API = "api"
    WORKER = "worker"
    QUEUE = "queue"
    CACHE = "cache"
    DATABASE = "database"
    EXTERNAL = "external"


# Per-kind name pools: plain system names, never a symptom or a fault.
_NAMES: dict[Kind, tuple[str, ...]] = {
    Kind.API: ("gateway", "storefront", "edge-api", "public-api", "portal", "frontdoor", "mobile-api", "web"),
    Kind.WORKER: (
        "billing-worker", "mailer", "indexer", "exporter", "resizer", "scheduler", "ledger-worker",
        "notifier", "thumbnailer", "reconciler", "ingestor", "enricher",
    ),
    Kind.QUEUE: ("orders-queue", "events-queue", "jobs-queue", "mail-queue", "ingest-queue", "tasks-queue"),
    Kind.CACHE: ("session-cache", "catalog-cache", "profile-cache", "edge-cache", "query-cache"),
    Kind.DATABASE: ("orders-db", "users-db", "catalog-db", "ledger-db", "events-db", "metrics-db"),
    Kind.EXTERNAL: ("payments-provider", "sms-provider", "geo-service", "tax-service", "email-provider", "auth-idp"),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Component:
    name: str
    kind: Kind


@dataclass(frozen=True, slots=True)
class Template:
    """How many components of each kind a family draws (inclusive ranges), and its step budget."""

    apis: tuple[int, int]
    workers: tuple[int, int]
    queues: tuple[int, int]
    databases: tuple[int, int]
    caches: tuple[int, int]
    externals: tuple[int, int]
    summary: str

    @property
    def max_components(self) -> int:
        return sum(hi for _, hi in (self.apis, self.workers, self.queues, self.databases, self.caches, self.externals))


FAMILY_TEMPLATES: dict[str, Template] = {
    "web_api": Template(
        apis=(1, 2), workers=(1, 2), queues=(0, 1), databases=(1, 2), caches=(0, 2), externals=(0, 2),
        summary="a request-serving web API: front APIs over caches, databases and third-party services",
    ),
    "event_pipeline": Template(
        apis=(1, 1), workers=(1, 3), queues=(1, 2), databases=(1, 2), caches=(0, 1), externals=(0, 2),
        summary="an event pipeline: an ingest API publishes to queues that worker pools consume",
    ),
    "data_platform": Template(
        apis=(1, 1), workers=(1, 3), queues=(0, 2), databases=(1, 2), caches=(1, 2), externals=(0, 1),
        summary="a data platform: an API and batch worker pools over caches and several databases",
    ),
}  # fmt: skip
"""Family id -> its template. Ids name a kind of system, never a fault."""


@dataclass(frozen=True, slots=True)
class Topology:
    """One drawn system. Indices refer to `components`.

    Attributes:
        components: every component, in a fixed order by kind (apis, workers, queues, caches, databases,
            externals), each kind's names drawn per seed.
        calls: (caller, callee) pairs.
        consumes: (worker, queue) pairs; every queue has exactly one consumer.
        backs: (cache, database) pairs; every cache backs onto one database.
    """

    components: tuple[Component, ...]
    calls: tuple[tuple[int, int], ...]
    consumes: tuple[tuple[int, int], ...]
    backs: tuple[tuple[int, int], ...]

    def of_kind(self, *kinds: Kind) -> list[int]:
        return [i for i, c in enumerate(self.components) if c.kind in kinds]

    def callers(self, i: int) -> list[int]:
        """Components that call `i` directly (a cache's readers also read through it to its database)."""
        out = [a for a, b in self.calls if b == i]
        out += [k for k, d in self.backs if d == i and k not in out]
        return out

    def callees(self, i: int) -> list[int]:
        return [b for a, b in self.calls if a == i]

    def consumer(self, queue: int) -> int | None:
        return next((w for w, q in self.consumes if q == queue), None)

    def consumed(self, worker: int) -> list[int]:
        return [q for w, q in self.consumes if w == worker]

    def upstream(self, i: int, hops: int = 3) -> list[tuple[int, int]]:
        """(component, distance) of everything whose requests wait on `i`, nearest first."""
        seen = {i: 0}
        frontier = [i]
        for d in range(1, hops + 1):
            nxt = []
            for c in frontier:
                for u in self.callers(c):
                    if u not in seen:
                        seen[u] = d
                        nxt.append(u)
            frontier = nxt
        return sorted(((c, d) for c, d in seen.items() if d > 0), key=lambda x: (x[1], x[0]))


def draw_topology(family: str, rng: random.Random) -> Topology:
    """Draw one system of a family: sizes, names and wiring from `rng`."""
    t = FAMILY_TEMPLATES[family]
    sizes = [
        (Kind.API, rng.randint(*t.apis)),
        (Kind.WORKER, rng.randint(*t.workers)),
        (Kind.QUEUE, rng.randint(*t.queues)),
        (Kind.CACHE, rng.randint(*t.caches)),
        (Kind.DATABASE, rng.randint(*t.databases)),
        (Kind.EXTERNAL, rng.randint(*t.externals)),
    ]
    components = []
    for kind, n in sizes:
        components += [Component(name, kind) for name in rng.sample(_NAMES[kind], n)]
    idx = {k: [i for i, c in enumerate(components) if c.kind is k] for k in Kind}
    apis, workers, queues = idx[Kind.API], idx[Kind.WORKER], idx[Kind.QUEUE]
    caches, dbs, exts = idx[Kind.CACHE], idx[Kind.DATABASE], idx[Kind.EXTERNAL]
    calls: set[tuple[int, int]] = set()
    consumes = []
    backs = [(k, rng.choice(dbs)) for k in caches]
    # Every queue is published to by an api and consumed by one worker pool (pools may consume several).
    for n, q in enumerate(queues):
        calls.add((rng.choice(apis), q))
        consumes.append((workers[n % len(workers)] if n < len(workers) else rng.choice(workers), q))
    clients = apis + workers
    # Every database and external has a caller; every client reads at least one store.
    for d in dbs:
        calls.add((rng.choice(clients), d))
    for e in exts:
        calls.add((rng.choice(clients), e))
    for k in caches:
        calls.add((rng.choice(apis), k))
    for c in clients:
        if not any(a == c and components[b].kind in (Kind.DATABASE, Kind.CACHE) for a, b in calls):
            calls.add((c, rng.choice(dbs + caches)))
        if rng.random() < 0.3:
            calls.add((c, rng.choice(dbs)))
    return Topology(tuple(components), tuple(sorted(calls)), tuple(consumes), tuple(backs))
