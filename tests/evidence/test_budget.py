"""The data budget (issue 18, point 3): distinct series points served, a budget per scenario, listing serves none,
and `query_metrics` lets the agent choose the instance as well as the metric, the statistic and the window."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sredrill.evidence import BackendMode, RcaToolset, ServedItem
from sredrill.evidence.budget import DEFAULT_SERIES, DEFAULT_SHARE, data_budget, series_points
from sredrill.scenarios import Pack, load_pack
from sredrill.trajectory import ToolError
from tests.evidence.conftest import N_POINTS

T = datetime(2024, 5, 1, tzinfo=UTC)


def _series(name: str, n: int) -> ServedItem:
    return ServedItem.of(
        "metric", "m", {"metric": name}, points=[(T.replace(minute=i), 1.0) for i in range(n)], series=True
    )


def test_the_default_is_a_share_of_the_points_capped_at_whole_series() -> None:
    few = [_series(f"s{i}", 20) for i in range(20)]  # 400 points: the share decides
    assert data_budget(few).points == round(DEFAULT_SHARE * 400) and data_budget(few).total == 400
    many = [_series(f"s{i}", 50) for i in range(500)]  # 25,000 points: the series cap decides
    budget = data_budget(many)
    assert budget.points == DEFAULT_SERIES * 50 < DEFAULT_SHARE * 25_000
    assert f"{DEFAULT_SERIES} series of 50 points" in budget.origin


def test_the_answer_keys_budget_wins_and_records_are_not_points() -> None:
    items = [
        _series("a", 10),
        ServedItem.of("event", "e", {"text": "x"}, at=T),
        ServedItem.of("sql", "p", {"s": "q"}, points=[(None, 3.0)]),
    ]
    assert series_points(items) == 10
    assert data_budget(items, 7).points == 7 and data_budget(items, 7).origin == "answer key"
    assert data_budget([]).points == 0  # nothing to serve: nothing over budget


async def test_points_served_count_each_point_once_and_listing_serves_none(tiny_pack: Pack) -> None:
    tools = RcaToolset(tiny_pack.scenario("001-cpu-hot-query"), BackendMode.SELECTIVE, vocabulary=tiny_pack.vocabulary)
    listed = await tools.call("list_metrics", {})
    assert listed["metrics"] and all("values" not in m and "timestamps" not in m for m in listed["metrics"])
    assert tools.audit[-1].n_points == 0 and tools.points_served() == 0
    await tools.call("query_metrics", {"metric_name": "ReadIOPS"})
    await tools.call("query_metrics", {"metric_name": "ReadIOPS"})  # the same points again: nothing new
    assert [e.n_points for e in tools.audit] == [0, N_POINTS, N_POINTS]
    assert tools.points_served() == N_POINTS
    await tools.call("query_metrics", {"metric_name": "cpu", "stat": "Maximum", "start": "2024-05-01T10:30:00Z"})
    assert tools.points_served() == N_POINTS + 30
    assert tools.data_budget.points == round(DEFAULT_SHARE * tools.data_budget.total)


async def test_full_serves_everything_at_the_first_query(tiny_pack: Pack) -> None:
    tools = RcaToolset(tiny_pack.scenario("001-cpu-hot-query"), BackendMode.FULL, vocabulary=tiny_pack.vocabulary)
    await tools.call("query_metrics", {"metric_name": "ReadIOPS"})
    assert tools.points_served() == 6 * N_POINTS  # every series; PI's db_load not read yet


@pytest.fixture(scope="module")
def two_instances() -> tuple[Pack, str, str]:
    pack = load_pack("rds_postgres")
    return pack, "shipments-pg-main", "shipments-pg-read1"


async def test_instance_picks_one_instances_series(two_instances: tuple[Pack, str, str]) -> None:
    pack, primary, replica = two_instances
    scenario = pack.scenario("001-replication-lag")
    tools = RcaToolset(scenario, BackendMode.SELECTIVE, vocabulary=pack.vocabulary)
    both = await tools.call("query_metrics", {"metric_name": "a"})  # a letter most names contain
    instances = {s["dimensions"].get("DBInstanceIdentifier") for s in both["series"]}
    assert {primary, replica} <= instances
    only = await tools.call("query_metrics", {"metric_name": "a", "instance": replica.upper()})
    assert only["series"] and {s["dimensions"]["DBInstanceIdentifier"] for s in only["series"]} == {replica}
    assert (await tools.call("query_metrics", {"metric_name": "a", "instance": "no-such-db"}))["series"] == []
    # `full` (Axis 1) serves every series whatever was chosen
    full = RcaToolset(scenario, BackendMode.FULL, vocabulary=pack.vocabulary)
    everything = await full.call("query_metrics", {"metric_name": "a", "instance": replica})
    assert len(everything["series"]) == len(scenario.metrics)
    with pytest.raises(ToolError) as caught:
        await tools.call("query_metrics", {"metric_name": "ReplicaLag", "instance": " "})
    assert "instance: must not be empty" in str(caught.value)
