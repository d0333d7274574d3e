"""The fleet of a generated RDS scenario: a primary, its read replica and unrelated instances of one account."""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum

from .catalog import BURSTABLE, CORE, LOCAL_STORAGE, REPLICA, MetricDef

__all__ = ["APPS", "App", "Fleet", "Instance", "Role", "build_fleet"]

GB = 1000**3
GIB = 1024**3


class Role(StrEnum):
    """What an instance is to the scenario."""

    PRIMARY = "primary"
    REPLICA = "replica"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class App:
    """An application of the account: its name, database, tables and the columns its SQL uses."""

    name: str
    database: str
    tables: tuple[str, ...]
    key: str
    """The column most statements filter on (`account_id`)."""


APPS: tuple[App, ...] = (
    App("billing", "billing", ("invoices", "invoice_lines", "payments", "credit_notes"), "account_id"),
    App("ledger", "ledger", ("entries", "accounts", "postings", "balances"), "account_id"),
    App("catalog", "catalog", ("products", "skus", "prices", "categories"), "merchant_id"),
    App("orders", "orders", ("orders", "order_items", "carts", "refunds"), "customer_id"),
    App("shipments", "logistics", ("shipments", "parcels", "tracking_events", "carriers"), "warehouse_id"),
    App("loyalty", "loyalty", ("members", "member_points", "rewards", "redemptions"), "member_id"),
    App("bookings", "bookings", ("reservations", "rooms", "guests", "rate_plans"), "property_id"),
    App("claims", "claims", ("claims", "claim_items", "policies", "adjusters"), "policy_id"),
    App("payroll", "payroll", ("employees", "payslips", "timesheets", "deductions"), "employer_id"),
    App("reviews", "reviews", ("reviews", "review_votes", "authors", "moderation_queue"), "product_id"),
    App("tickets", "support", ("tickets", "ticket_comments", "agents", "sla_timers"), "org_id"),
    App("fleetops", "fleetops", ("vehicles", "trips", "telemetry", "drivers"), "depot_id"),
)

_CLASSES = {  # vCPUs, memory GiB
    "db.r6gd.xlarge": (4, 32),
    "db.r6gd.2xlarge": (8, 64),
    "db.m6gd.2xlarge": (8, 32),
    "db.r6gd.large": (2, 16),
    "db.m6gd.large": (2, 8),
    "db.m6gd.xlarge": (4, 16),
    "db.t4g.large": (2, 8),
    "db.t4g.medium": (2, 4),
}
_REGIONS = ("us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-2")


@dataclass(frozen=True, slots=True)
class Instance:
    """One DB instance of the fleet."""

    name: str
    role: Role
    klass: str
    storage_gb: int
    load: float
    """Its workload level, 0.2-1.0: scales CPU, IO, connections and DB load."""
    app: App

    @property
    def vcpu(self) -> int:
        return _CLASSES[self.klass][0]

    @property
    def memory_bytes(self) -> int:
        return _CLASSES[self.klass][1] * GIB

    @property
    def max_connections(self) -> int:
        # RDS's default: LEAST({DBInstanceClassMemory/9531392}, 5000), DBInstanceClassMemory below the class's.
        return min(int(self.memory_bytes * 0.95 / 9531392), 5000)

    @property
    def burstable(self) -> bool:
        return self.klass.startswith("db.t")

    @property
    def metrics(self) -> tuple[MetricDef, ...]:
        extra = BURSTABLE if self.burstable else LOCAL_STORAGE if "gd." in self.klass else ()
        return (*CORE, *extra, *(REPLICA if self.role is Role.REPLICA else ()))


@dataclass(frozen=True, slots=True)
class Fleet:
    """The account's instances in one region; `primary` is the scenario's instance."""

    region: str
    instances: tuple[Instance, ...]

    @property
    def primary(self) -> Instance:
        return next(i for i in self.instances if i.role is Role.PRIMARY)

    @property
    def replica(self) -> Instance:
        return next(i for i in self.instances if i.role is Role.REPLICA)

    @property
    def others(self) -> tuple[Instance, ...]:
        return tuple(i for i in self.instances if i.role is Role.OTHER)


def build_fleet(rng: random.Random, others: int = 2) -> Fleet:
    """A primary, one read replica of it and `others` unrelated instances, each of another application."""
    apps = rng.sample(APPS, 1 + others)
    klass = rng.choice(("db.r6gd.xlarge", "db.r6gd.2xlarge", "db.m6gd.2xlarge"))
    storage = rng.choice((200, 300, 400, 500, 800, 1000))
    main = apps[0]
    env = rng.choice(("prod", "prd", "live"))
    primary = Instance(f"{main.name}-pg-{env}", Role.PRIMARY, klass, storage, rng.uniform(0.45, 0.9), main)
    replica = Instance(f"{main.name}-pg-read1", Role.REPLICA, klass, storage, rng.uniform(0.2, 0.5), main)
    rest = tuple(
        Instance(
            f"{app.name}-pg-{env}",
            Role.OTHER,
            rng.choice(("db.r6gd.large", "db.m6gd.xlarge", "db.m6gd.large", "db.t4g.large", "db.t4g.medium")),
            rng.choice((100, 200, 300, 500)),
            rng.uniform(0.2, 0.9),
            app,
        )
        for app in apps[1:]
    )
    return Fleet(rng.choice(_REGIONS), (primary, replica, *rest))
