"""The evidence items a run served, built as the RDS server names them (the item contract of DESIGN §11.2).

The defaults mirror `tests/support/scenario_builder.py`'s default evidence: CPU, connections and free storage
series (calm and flat), one backup event, Performance Insights' db_load, one statement and its wait. Grading
tests that need no real toolset pass `served(...)` of these to `grade_diagnosis`; the end-to-end tests
(`test_grounding_e2e.py`) get theirs from a real `RcaToolset`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from sredrill.evidence.items import ServedItem, merge_items
from tests.support.scenario_builder import INSTANCE, PERIOD_S, T0, N, z

METRICS = "aws_cloudwatch_metrics"
EVENTS = "aws_rds_events"
INSIGHTS = "aws_performance_insights"


def at(minute: float) -> datetime:
    """The moment `minute` minutes after the builder's window starts."""
    return T0 + timedelta(minutes=minute)


def metric(
    name: str,
    values: Sequence[float] | None = None,
    *,
    stat: str = "Average",
    resource: str = INSTANCE,
    start: datetime = T0,
) -> ServedItem:
    """A metric series as `query_metrics` serves it: one point a period from `start` (default: the builder's)."""
    vals = list(values) if values is not None else [10.0 + (i % 3) for i in range(N)]
    points = [(start + timedelta(seconds=i * PERIOD_S), v) for i, v in enumerate(vals)]
    identity = {"metric": name, "stat": stat, "resource": resource}
    return ServedItem.of("metric", METRICS, identity, points=points, series=True)


def event(minute: float, text: str, *, resource: str = INSTANCE) -> ServedItem:
    """An RDS event as `get_events` serves it."""
    moment = at(minute)
    return ServedItem.of("event", EVENTS, {"time": z(moment), "text": text, "resource": resource}, at=moment)


def sql(statement: str, load: float, *, resource: str = INSTANCE) -> ServedItem:
    """A top statement of Performance Insights: one point without a time, its load."""
    return ServedItem.of("sql", INSIGHTS, {"resource": resource, "statement": statement}, points=[(None, load)])


def wait(name: str, load: float, *, resource: str = INSTANCE) -> ServedItem:
    return ServedItem.of("wait", INSIGHTS, {"resource": resource, "wait": name}, points=[(None, load)])


def db_load(values: Sequence[float] | None = None, *, resource: str = INSTANCE) -> ServedItem:
    vals = list(values) if values is not None else [1.0] * N
    points = [(at(i), v) for i, v in enumerate(vals)]
    return ServedItem.of("load", INSIGHTS, {"resource": resource, "metric": "db_load"}, points=points, series=True)


def served(*items: ServedItem) -> Mapping[str, ServedItem]:
    """The items by id, each with the union of its servings' points (as `RcaToolset.served_items()`)."""
    return merge_items(items)


CPU = metric("CPUUtilization")
CONNECTIONS = metric("DatabaseConnections")
STORAGE = metric("FreeStorageSpace", [9e10] * N)
BACKUP = event(4, "Backing up DB instance")
LOAD = db_load()
SQL = sql("SELECT id FROM orders WHERE owner = $1", 0.6)
WAIT = wait("CPU", 0.7)
DEFAULT = served(CPU, CONNECTIONS, STORAGE, BACKUP, LOAD, SQL, WAIT)
"""Everything the builder's default scenario holds, as a run that called every tool was served it."""
