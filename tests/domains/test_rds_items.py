"""RDS evidence items (`domains/rds/serve.py`): every entry of every result carries a stable id, derived from its
identity alone, and the answer names exactly the points it served; `RdsEvidence.items()` lists them all.

Through the real toolset, on a built-in scenario and on copies of it written to `tmp_path` and loaded by the real
loader.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sredrill.diagnosis import ITEM_ID, Citation, FactKind
from sredrill.domains.rds.serve import RdsEvidence
from sredrill.domains.rds.tools import LOG_LIMIT
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.evidence.items import ServedItem
from sredrill.grading.facts import check_fact
from sredrill.scenarios import Pack, Scenario, load_pack

BUILTIN = Path(__file__).resolve().parents[2] / "src" / "sredrill" / "scenarios" / "packs" / "rds_postgres"
FOLDER = "001-replication-lag"
INSTANCE = "shipments-pg-main"
REPLICA = "shipments-pg-read1"

# Every tool that serves items, with arguments that make `selective` return what `full` does for that item.
CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("query_metrics", {"metric_name": "ReplicaLag"}),
    ("query_metrics", {"metric_name": "CPUUtilization"}),
    ("get_events", {}),
    ("get_performance_insights", {}),
    ("search_logs", {"limit": LOG_LIMIT}),
)


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack("rds_postgres")


def call(scenario: Scenario, mode: str, tool: str, pack: Pack | None = None, **args: Any) -> tuple[Any, RcaToolset]:
    tools = RcaToolset(scenario, mode, vocabulary=pack.vocabulary if pack else None)
    result = asyncio.run(tools.call(tool, args))
    return result, tools


def ids_in(result: Any) -> list[str]:
    """Every `id` anywhere in a result, in order."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("id"), str):
                found.append(value["id"])
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(result)
    return found


def served_ids(tools: RcaToolset) -> list[str]:
    return [i.id for e in tools.audit for i in e.items]


def copied(tmp_path: Path, edit: Callable[[Path], None]) -> Scenario:
    """A copy of the built-in scenario in a fresh pack, edited, loaded by the real loader."""
    root = tmp_path / "copy"
    shutil.copytree(BUILTIN / FOLDER, root / FOLDER)
    shutil.copy(BUILTIN / "pack.yml", root / "pack.yml")
    edit(root / FOLDER)
    loaded = load_pack(root)
    assert not loaded.errors, [e.message for e in loaded.errors]
    return loaded.scenario(FOLDER)


def rewrite(path: Path, change: Callable[[Any], None]) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


# -- every entry has an id, and the answer names exactly those items ----------------------------------------


@pytest.mark.parametrize("mode", [m.value for m in BackendMode])
@pytest.mark.parametrize(("tool", "args"), CALLS)
def test_every_entry_of_a_result_has_an_id_and_the_answer_serves_those_items(
    pack: Pack, mode: str, tool: str, args: dict[str, Any]
) -> None:
    result, tools = call(pack.scenario(FOLDER), mode, tool, pack, **args)
    ids = ids_in(result)
    assert ids, f"{tool} returned no item"
    assert all(ITEM_ID.match(i) for i in ids), ids
    assert served_ids(tools) == ids


def test_the_item_kinds_and_identities_of_each_source(pack: Pack) -> None:
    items = RdsEvidence(pack.scenario(FOLDER)).items()
    by_kind: dict[str, list[ServedItem]] = {}
    for item in items:
        by_kind.setdefault(item.kind, []).append(item)
        assert item.id.startswith(f"{item.kind}-")
    assert set(by_kind) == {"metric", "event", "load", "sql", "wait", "user", "host", "log"}
    lag = next(i for i in by_kind["metric"] if i.identity["metric"] == "ReplicaLag")
    assert (dict(lag.identity), lag.source, lag.series) == (
        {"metric": "ReplicaLag", "stat": "Average", "resource": REPLICA},
        "aws_cloudwatch_metrics",
        True,
    )
    event = by_kind["event"][0]
    assert set(event.identity) == {"time", "text", "resource"} and event.at is not None and not event.points
    load = by_kind["load"][0]
    assert dict(load.identity) == {"resource": INSTANCE, "metric": "db_load"} and load.series
    sql = by_kind["sql"][0]
    assert set(sql.identity) == {"resource", "statement"} and sql.points[0][0] is None and not sql.series
    assert {frozenset(by_kind[k][0].identity) for k in ("wait", "user", "host")} == {
        frozenset({"resource", "wait"}),
        frozenset({"resource", "user"}),
        frozenset({"resource", "host"}),
    }
    log = by_kind["log"][0]
    assert set(log.identity) == {"time", "text"} and log.source == "aws_rds_postgresql_log" and log.at is not None


def test_a_top_host_keeps_its_address_as_host_and_its_id_is_the_items(pack: Pack) -> None:
    result, tools = call(pack.scenario(FOLDER), "full", "get_performance_insights", pack, dimension="top_hosts")
    (served,) = tools.audit
    hosts = result["top_hosts"]
    assert [h["id"] for h in hosts] == [i.id for i in served.items]
    assert [h["host"] for h in hosts] == [i.identity["host"] for i in served.items]
    assert all(h["host"].count(".") == 3 for h in hosts)  # an IPv4 address, as PI's top_hosts gives it


def test_one_pi_dimension_serves_only_its_items(pack: Pack) -> None:
    _, tools = call(pack.scenario(FOLDER), "full", "get_performance_insights", pack, dimension="top_sql")
    assert {i.kind for e in tools.audit for i in e.items} == {"sql"}


def test_listing_names_the_series_ids_but_serves_no_point(pack: Pack) -> None:
    scenario = pack.scenario(FOLDER)
    listed, listing = call(scenario, "full", "list_metrics", pack)
    queried, _ = call(scenario, "full", "query_metrics", pack, metric_name="x")
    assert [m["id"] for m in listed["metrics"]] == [s["id"] for s in queried["series"]]
    assert listing.served_items() == {}


# -- stable: the same on every backend, in every call, whatever the position ---------------------------------


def test_ids_are_the_same_on_every_backend_and_in_every_call(pack: Pack) -> None:
    scenario = pack.scenario(FOLDER)
    id_of: dict[tuple[str, tuple[tuple[str, str], ...]], set[str]] = {}
    for mode in BackendMode:
        for tool, args in CALLS:
            repeated = [call(scenario, mode.value, tool, pack, **args) for _ in range(2)]
            assert ids_in(repeated[0][0]) == ids_in(repeated[1][0]), (mode, tool)
            for item in (i for _, tools in repeated for e in tools.audit for i in e.items):
                id_of.setdefault((item.kind, tuple(sorted(item.identity.items()))), set()).add(item.id)
    assert all(len(ids) == 1 for ids in id_of.values()), id_of
    assert len({i for ids in id_of.values() for i in ids}) == len(id_of)  # no two identities share an id
    everything = {i.id for i in RdsEvidence(scenario).items()}
    assert {i for ids in id_of.values() for i in ids} == everything  # the calls of CALLS reach every item


def test_an_id_does_not_depend_on_the_position_of_its_item(pack: Pack, tmp_path: Path) -> None:
    def reorder(folder: Path) -> None:
        rewrite(folder / "aws_cloudwatch_metrics.json", lambda d: d["metric_data_results"].reverse())
        rewrite(folder / "aws_rds_events.json", lambda d: d["events"].reverse())

        def tops(d: Any) -> None:
            for key in ("top_sql", "top_wait_events", "top_users", "top_hosts"):
                d[key].reverse()

        rewrite(folder / "aws_performance_insights.json", tops)

    def by_identity(scenario: Scenario) -> dict[tuple[str, tuple[tuple[str, str], ...]], str]:
        return {(i.kind, tuple(sorted(i.identity.items()))): i.id for i in RdsEvidence(scenario).items()}

    original = by_identity(pack.scenario(FOLDER))
    moved = copied(tmp_path, reorder)
    assert by_identity(moved) == original
    first_before = ids_in(call(pack.scenario(FOLDER), "full", "query_metrics", pack, metric_name="x")[0])
    first_after = ids_in(call(moved, "full", "query_metrics", metric_name="x")[0])
    assert first_after == list(reversed(first_before))


def test_an_id_changes_with_the_identity(pack: Pack, tmp_path: Path) -> None:
    def rename(folder: Path) -> None:
        def edit(d: Any) -> None:
            for s in d["metric_data_results"]:
                if s["metric_name"] == "ReplicaLag":
                    s["dimensions"] = [{"Name": "DBInstanceIdentifier", "Value": "another-replica"}]

        rewrite(folder / "aws_cloudwatch_metrics.json", edit)

    def lag_id(scenario: Scenario) -> str:
        return next(i.id for i in RdsEvidence(scenario).items() if i.identity.get("metric") == "ReplicaLag")

    assert lag_id(copied(tmp_path, rename)) != lag_id(pack.scenario(FOLDER))


# -- the points served -------------------------------------------------------------------------------------


def _points(series: dict[str, Any]) -> list[tuple[datetime, float]]:
    return [
        (datetime.fromisoformat(t.replace("Z", "+00:00")), v)
        for t, v in zip(series["timestamps"], series["values"], strict=True)
    ]


def test_the_items_carry_exactly_the_points_the_result_shows(pack: Pack) -> None:
    for mode in BackendMode:
        result, tools = call(pack.scenario(FOLDER), mode.value, "query_metrics", pack, metric_name="ReplicaLag")
        served = tools.served_items()
        assert [s["id"] for s in result["series"]] == list(served)
        for series in result["series"]:
            assert list(served[series["id"]].points) == _points(series)


def test_temporal_serves_fewer_points_under_the_same_id(pack: Pack) -> None:
    scenario = pack.scenario(FOLDER)
    full, full_tools = call(scenario, "full", "query_metrics", pack, metric_name="ReplicaLag")
    (lag,) = [s for s in full["series"] if s["metric_name"] == "ReplicaLag"]
    early, early_tools = call(scenario, "temporal", "query_metrics", pack, metric_name="ReplicaLag")
    (held,) = early["series"]
    assert held["id"] == lag["id"]
    served_full = full_tools.served_items()[lag["id"]]
    served_early = early_tools.served_items()[lag["id"]]
    assert 0 < len(served_early.points) < len(served_full.points)
    assert served_early.points == served_full.points[: len(served_early.points)]
    pi, pi_tools = call(scenario, "temporal", "get_performance_insights", pack, dimension="db_load")
    (load,) = pi_tools.served_items().values()
    assert load.id == pi["db_load"]["id"] and len(load.points) == len(pi["db_load"]["values"])


def test_items_lists_every_item_with_all_its_points(pack: Pack) -> None:
    scenario = pack.scenario(FOLDER)
    items = {i.id: i for i in RdsEvidence(scenario).items()}
    metrics = json.loads((BUILTIN / FOLDER / "aws_cloudwatch_metrics.json").read_text())["metric_data_results"]
    series = [i for i in items.values() if i.kind == "metric"]
    assert sorted(len(i.points) for i in series) == sorted(len(m["values"]) for m in metrics)
    events = json.loads((BUILTIN / FOLDER / "aws_rds_events.json").read_text())["events"]
    assert len([i for i in items.values() if i.kind == "event"]) == len(events)
    # Everything a full investigation is served is among them, with the same points.
    tools = RcaToolset(scenario, "full", vocabulary=pack.vocabulary)
    for tool, args in CALLS:
        asyncio.run(tools.call(tool, args))
    for item_id, served in tools.served_items().items():
        assert items[item_id].points == served.points


def test_served_items_merges_two_windows_of_a_series(pack: Pack) -> None:
    scenario = pack.scenario(FOLDER)
    tools = RcaToolset(scenario, "full", vocabulary=pack.vocabulary)
    whole = asyncio.run(tools.call("query_metrics", {"metric_name": "ReplicaLag"}))
    (lag,) = [s for s in whole["series"] if s["metric_name"] == "ReplicaLag"]
    times = lag["timestamps"]
    windowed = RcaToolset(scenario, "selective", vocabulary=pack.vocabulary)
    asyncio.run(windowed.call("query_metrics", {"metric_name": "ReplicaLag", "start": times[0], "end": times[5]}))
    asyncio.run(windowed.call("query_metrics", {"metric_name": "ReplicaLag", "start": times[-5]}))
    (merged,) = windowed.served_items().values()
    assert merged.id == lag["id"]
    pairs = _points(lag)
    assert list(merged.points) == pairs[:5] + pairs[-5:]
    # Each call alone served one window.
    assert [len(e.items[0].points) for e in windowed.audit] == [5, 5]


def test_a_window_with_no_point_serves_the_item_empty_so_absent_holds(pack: Pack) -> None:
    scenario = pack.scenario(FOLDER)
    whole, _ = call(scenario, "full", "query_metrics", pack, metric_name="ReplicaLag")
    (lag,) = [s for s in whole["series"] if s["metric_name"] == "ReplicaLag"]
    after = _points(lag)[-1][0] + timedelta(minutes=1)
    _, tools = call(scenario, "selective", "query_metrics", pack, metric_name="ReplicaLag", start=after.isoformat())
    (empty,) = tools.served_items().values()
    assert empty.points == ()
    assert check_fact(Citation(item=empty.id, fact=FactKind.ABSENT), empty) is None
    assert check_fact(Citation(item=empty.id, fact=FactKind.RISING), empty) is not None


def test_events_and_log_records_are_dated_items_filtered_like_the_result(pack: Pack) -> None:
    scenario = pack.scenario("005-failover")
    everything, _ = call(scenario, "full", "get_events", pack)
    assert len(everything["events"]) > 2
    first = everything["events"][0]["date"]
    later, tools = call(scenario, "full", "get_events", pack, start=everything["events"][1]["date"])
    assert first not in [e["date"] for e in later["events"]]
    assert served_ids(tools) == [e["id"] for e in later["events"]]
    logs, log_tools = call(scenario, "full", "search_logs", pack, limit=3)
    assert len(logs["records"]) == 3 and served_ids(log_tools) == [r["id"] for r in logs["records"]]
    assert all(i.at is not None for i in log_tools.served_items().values())
