"""`RcaToolset`: the six tools, the three backends, the audit log, and every error an agent can cause."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sredrill.diagnosis import Category, Diagnosis
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.evidence.items import item_id
from sredrill.scenarios import Pack
from sredrill.trajectory import Recorder, ToolError, ToolResultStep
from tests.evidence.conftest import N_POINTS
from tests.support.scenario_builder import INSTANCE

ALL_NAMES = ["CPUUtilization", "CPUUtilization", "DatabaseConnections", "FreeStorageSpace", "ReadIOPS", "WriteIOPS"]


def toolset(pack: Pack, mode: BackendMode | str, folder: str = "001-cpu-hot-query", **kw: Any) -> RcaToolset:
    return RcaToolset(pack.scenario(folder), mode, vocabulary=pack.vocabulary, **kw)


def names(result: Any) -> list[str]:
    return [s["metric_name"] for s in result["series"]]


# -- get_alert ---------------------------------------------------------------------------------------------


async def test_get_alert_is_blind_by_default(tiny_pack: Pack) -> None:
    alert = await toolset(tiny_pack, "full").call("get_alert", {})
    assert set(alert) == {"title", "state", "labels", "annotations", "starts_at"}
    assert alert["starts_at"] == "2024-05-01T10:40:00Z"
    assert "rds_failure_mode" not in alert["annotations"]
    assert "001-cpu-hot-query" not in alert["title"]
    assert alert["labels"]["alertname"] == "RDSCPUHigh"
    assert alert["annotations"]["summary"] == f"CPUUtilization above 90% on {INSTANCE}"


async def test_get_alert_raw_when_not_blind(tiny_pack: Pack) -> None:
    alert = await toolset(tiny_pack, "full", blind=False).call("get_alert", {})
    assert alert["annotations"]["rds_failure_mode"] == "cpu_saturation"
    assert "001-cpu-hot-query" in alert["title"]


async def test_get_alert_starts_at_defaults_to_the_metric_window_midpoint(tiny_pack: Pack) -> None:
    alert = await toolset(tiny_pack, "full", "002-storage-missing-metric").call("get_alert", {})
    assert alert["starts_at"] == "2024-05-01T10:30:00Z"


async def test_alert_property_is_what_get_alert_returns_without_a_call(tiny_pack: Pack) -> None:
    tools = toolset(tiny_pack, "temporal")
    assert tools.alert == await tools.call("get_alert", {})
    assert len(tools.audit) == 1


# -- list_metrics ------------------------------------------------------------------------------------------


async def test_list_metrics_lists_every_series_without_values(tiny_pack: Pack) -> None:
    listed = await toolset(tiny_pack, "selective").call("list_metrics", {})
    assert listed["period"] == 60
    assert listed["window"] == {"start": "2024-05-01T10:00:00Z", "end": "2024-05-01T11:00:00Z"}
    assert [m["metric_name"] for m in listed["metrics"]] == ALL_NAMES
    assert listed["metrics"][1] == {
        "id": item_id("metric", {"metric": "CPUUtilization", "stat": "Maximum", "resource": INSTANCE}),
        "metric_name": "CPUUtilization",
        "stat": "Maximum",
        "unit": "Percent",
        "dimensions": {"DBInstanceIdentifier": INSTANCE},
    }


async def test_list_metrics_without_a_metrics_file_is_simply_empty(tiny_pack: Pack) -> None:
    listed = await toolset(tiny_pack, "full", "003-events-only").call("list_metrics", {})
    assert listed == {"period": 60, "window": None, "metrics": []}


# -- query_metrics: the backends ---------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["CPUUtilization", "nothing-like-it", "iops", "x"])
async def test_full_returns_every_series_for_any_query(tiny_pack: Pack, query: str) -> None:
    result = await toolset(tiny_pack, "full").call("query_metrics", {"metric_name": query})
    assert names(result) == ALL_NAMES
    assert all(len(s["values"]) == N_POINTS for s in result["series"])


async def test_full_still_filters_by_stat_and_time(tiny_pack: Pack) -> None:
    result = await toolset(tiny_pack, "full").call(
        "query_metrics", {"metric_name": "anything", "stat": "maximum", "start": "2024-05-01T10:58:00Z"}
    )
    assert names(result) == ["CPUUtilization"]
    (series,) = result["series"]
    assert series["stat"] == "Maximum"
    assert series["timestamps"] == ["2024-05-01T10:58:00Z", "2024-05-01T10:59:00Z"]
    assert series["values"] == [68.0, 69.0]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("CPUUtilization", ["CPUUtilization", "CPUUtilization"]),
        ("cpuutil", ["CPUUtilization", "CPUUtilization"]),
        ("IOPS", ["ReadIOPS", "WriteIOPS"]),
        ("connections", ["DatabaseConnections"]),
        (" storage ", ["FreeStorageSpace"]),
        ("ReplicaLag", []),
    ],
)
@pytest.mark.parametrize("mode", ["selective", "temporal"])
async def test_selective_returns_only_series_whose_name_contains_the_query(
    tiny_pack: Pack, mode: str, query: str, expected: list[str]
) -> None:
    tools = toolset(tiny_pack, mode)
    result = await tools.call("query_metrics", {"metric_name": query})
    assert names(result) == expected
    if not expected:
        assert result == {"series": []}
    (entry,) = tools.audit
    assert entry.args == {"metric_name": query}
    assert entry.returned_metrics == tuple(dict.fromkeys(expected))


async def test_series_come_oldest_first_with_z_timestamps(tiny_pack: Pack) -> None:
    result = await toolset(tiny_pack, "selective").call("query_metrics", {"metric_name": "ReadIOPS"})
    (series,) = result["series"]
    assert series["timestamps"][0] == "2024-05-01T10:00:00Z"
    assert series["timestamps"] == sorted(series["timestamps"])
    assert series["values"][:3] == [10.0, 11.0, 12.0]
    assert set(series) == {"id", "metric_name", "stat", "unit", "dimensions", "timestamps", "values"}
    assert series["id"] == item_id("metric", {"metric": "ReadIOPS", "stat": series["stat"], "resource": INSTANCE})


async def test_end_is_exclusive_like_cloudwatch(tiny_pack: Pack) -> None:
    result = await toolset(tiny_pack, "selective").call(
        "query_metrics",
        {"metric_name": "ReadIOPS", "start": "2024-05-01T10:05:00Z", "end": "2024-05-01T10:07:00Z"},
    )
    assert result["series"][0]["timestamps"] == ["2024-05-01T10:05:00Z", "2024-05-01T10:06:00Z"]


async def test_a_time_without_zone_means_utc_and_offsets_are_honoured(tiny_pack: Pack) -> None:
    tools = toolset(tiny_pack, "selective")
    naive = await tools.call("query_metrics", {"metric_name": "ReadIOPS", "start": "2024-05-01T10:58:00"})
    offset = await tools.call("query_metrics", {"metric_name": "ReadIOPS", "start": "2024-05-01T12:58:00+02:00"})
    assert naive == offset
    assert naive["series"][0]["timestamps"] == ["2024-05-01T10:58:00Z", "2024-05-01T10:59:00Z"]


async def test_a_valid_stat_the_fixture_lacks_returns_no_series(tiny_pack: Pack) -> None:
    result = await toolset(tiny_pack, "selective").call("query_metrics", {"metric_name": "CPU", "stat": "p99"})
    assert result == {"series": []}


# -- missing evidence looks like reality --------------------------------------------------------------------


async def test_a_metric_absent_from_the_fixture_is_simply_not_there(tiny_pack: Pack) -> None:
    for mode in BackendMode:
        tools = toolset(tiny_pack, mode, "002-storage-missing-metric")
        listed = await tools.call("list_metrics", {})
        assert "FreeStorageSpace" not in [m["metric_name"] for m in listed["metrics"]]
        result = await tools.call("query_metrics", {"metric_name": "FreeStorageSpace"})
        if mode.filters_by_name:
            assert result == {"series": []}
        assert "FreeStorageSpace" not in names(result)
        text = json.dumps([listed, result]).lower()
        for hint in ("missing", "removed", "absent", "unavailable", "not available", "withheld"):
            assert hint not in text


async def test_without_a_metrics_file_queries_return_no_series(tiny_pack: Pack) -> None:
    for mode in BackendMode:
        result = await toolset(tiny_pack, mode, "003-events-only").call("query_metrics", {"metric_name": "CPU"})
        assert result == {"series": []}


# -- get_events ----------------------------------------------------------------------------------------------


async def test_events_are_sorted_by_date(tiny_pack: Pack) -> None:
    result = await toolset(tiny_pack, "full").call("get_events", {})
    dates = [e["date"] for e in result["events"]]
    assert dates == ["2024-05-01T10:10:00Z", "2024-05-01T10:31:00Z", "2024-05-01T10:45:00Z"]
    first = result["events"][0]
    assert set(first) == {"id", "date", "message", "source_identifier", "source_type", "event_categories"}
    identity = {"time": first["date"], "text": first["message"], "resource": first["source_identifier"]}
    assert first["id"] == item_id("event", identity)


async def test_events_filter_by_category_case_insensitively_and_by_time(tiny_pack: Pack) -> None:
    tools = toolset(tiny_pack, "full")
    low = await tools.call("get_events", {"category": "low storage"})
    assert [e["event_categories"] for e in low["events"]] == [["Low Storage", "notification"]]
    assert await tools.call("get_events", {"category": "backup"}) == {"events": []}
    window = await tools.call("get_events", {"start": "2024-05-01T10:31:00Z", "end": "2024-05-01T10:45:00Z"})
    assert [e["date"] for e in window["events"]] == ["2024-05-01T10:31:00Z"]
    assert [e.n_events for e in tools.audit] == [1, 0, 1]


async def test_no_events_is_an_empty_list(tiny_pack: Pack) -> None:
    assert await toolset(tiny_pack, "full", "004-quiet").call("get_events", {}) == {"events": []}


# -- get_performance_insights ---------------------------------------------------------------------------------


async def test_performance_insights_whole_document_and_one_dimension(tiny_pack: Pack) -> None:
    tools = toolset(tiny_pack, "full")
    doc = await tools.call("get_performance_insights", {})
    assert set(doc) == {
        "db_instance_identifier",
        "start_time",
        "end_time",
        "db_load",
        "top_sql",
        "top_wait_events",
        "top_users",
        "top_hosts",
    }
    assert len(doc["db_load"]["values"]) == N_POINTS
    assert doc["top_sql"][0]["wait_events"] == [{"name": "CPU", "type": "CPU", "db_load_avg": 3.1}]
    assert await tools.call("get_performance_insights", {"dimension": "top_users"}) == {
        "top_users": [{"id": item_id("user", {"resource": doc["db_instance_identifier"], "user": "app"}),
                       "name": "app", "db_load_avg": 3.4}]
    }  # fmt: skip
    assert [e.n_points for e in tools.audit] == [N_POINTS, 0]


async def test_without_performance_insights_the_shape_is_empty(tiny_pack: Pack) -> None:
    tools = toolset(tiny_pack, "full", "002-storage-missing-metric")
    doc = await tools.call("get_performance_insights", {})
    assert doc == {
        "db_instance_identifier": None,
        "start_time": None,
        "end_time": None,
        "db_load": None,
        "top_sql": [],
        "top_wait_events": [],
        "top_users": [],
        "top_hosts": [],
    }
    assert await tools.call("get_performance_insights", {"dimension": "db_load"}) == {"db_load": None}


# -- submit_diagnosis -----------------------------------------------------------------------------------------


async def test_submit_diagnosis_validates_and_stores_the_last_accepted_one(tiny_pack: Pack) -> None:
    tools = toolset(tiny_pack, "selective")
    assert tools.submitted is None
    answer = {
        "root_cause": "a reporting query without an index pinned the CPU",
        "category": "resource_exhaustion",
        "failure_modes": ["cpu_saturation"],
        "claims": [{"text": "CPU at 99%", "evidence": ["aws_cloudwatch_metrics"]}],
        "ruled_out": [{"hypothesis": "storage", "reason": "free space is flat"}],
    }
    assert await tools.call("submit_diagnosis", answer) == {"accepted": True}
    assert tools.submitted == Diagnosis.model_validate(answer)
    assert tools.submitted.category is Category.RESOURCE_EXHAUSTION
    await tools.call("submit_diagnosis", {"root_cause": "second thoughts"})
    assert tools.submitted.root_cause == "second thoughts"


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({}, ["missing required argument 'root_cause'"]),
        ({"root_cause": "x", "category": "cpu"}, ["category", "'cpu' is not allowed", "resource_exhaustion"]),
        ({"root_cause": "x", "claims": [{"txt": "a"}]}, ["claims[0].txt", "did you mean 'text'", "claims[0].text"]),
        ({"root_cause": "x", "confidence": 0.9}, ["unknown argument 'confidence'"]),
        ({"root_cause": 42}, ["root_cause", "got a number"]),
        ({"root_cause": "x", "failure_modes": "cpu"}, ["failure_modes", "list"]),
    ],
)
async def test_a_bad_diagnosis_is_rejected_naming_the_field(
    tiny_pack: Pack, args: dict[str, Any], fragments: list[str]
) -> None:
    tools = toolset(tiny_pack, "selective")
    with pytest.raises(ToolError) as info:
        await tools.call("submit_diagnosis", args)
    assert info.value.code == "bad_arguments"
    for fragment in fragments:
        assert fragment in info.value.message
    assert tools.submitted is None
    assert tools.audit == ()


# -- errors the agent can correct -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args", "code", "fragments"),
    [
        ("query_metric", {}, "unknown_tool", ["'query_metric'", "did you mean 'query_metrics'?", "get_alert"]),
        ("get_logs", {}, "unknown_tool", ["'get_logs'", "tools: get_alert, list_metrics"]),
        ("query_metrics", {}, "bad_arguments", ["missing required argument 'metric_name'"]),
        ("query_metrics", {"metric": "CPU"}, "bad_arguments", ["unknown argument 'metric'", "'metric_name'"]),
        ("query_metrics", {"metric_name": 3}, "bad_arguments", ["metric_name", "must be a string"]),
        ("query_metrics", {"metric_name": ""}, "bad_arguments", ["metric_name", "must not be empty"]),
        ("query_metrics", {"metric_name": "CPU", "stat": "avg"}, "bad_arguments", ["'avg'", "Average, Maximum"]),
        ("query_metrics", {"metric_name": "CPU", "start": "yesterday"}, "bad_arguments", ["start", "ISO-8601"]),
        ("query_metrics", {"metric_name": "CPU", "end": 1714557600}, "bad_arguments", ["end", "ISO-8601"]),
        (
            "query_metrics",
            {"metric_name": "CPU", "start": "2024-05-01T11:00:00Z", "end": "2024-05-01T10:00:00Z"},
            "bad_arguments",
            ["start (2024-05-01T11:00:00Z) must be before end (2024-05-01T10:00:00Z)"],
        ),
        ("get_events", {"since": "2024-05-01T10:00:00Z"}, "bad_arguments", ["unknown argument 'since'"]),
        ("get_events", {"category": 5}, "bad_arguments", ["category", "string"]),
        (
            "get_performance_insights",
            {"dimension": "top_waits"},
            "bad_arguments",
            ["'top_waits' is not allowed", "db_load, top_sql, top_wait_events, top_users, top_hosts"],
        ),
        ("get_alert", {"verbose": True}, "bad_arguments", ["unknown argument 'verbose'", "takes no arguments"]),
        ("list_metrics", ["CPU"], "bad_arguments", ["JSON object"]),
    ],
)
async def test_tool_errors_say_what_is_wrong_and_what_is_allowed(
    tiny_pack: Pack, tool: str, args: Any, code: str, fragments: list[str]
) -> None:
    tools = toolset(tiny_pack, "temporal")
    with pytest.raises(ToolError) as info:
        await tools.call(tool, args)
    assert info.value.code == code
    for fragment in fragments:
        assert fragment in info.value.message, info.value.message
    assert tools.audit == ()


async def test_usage_is_appended_to_argument_errors(tiny_pack: Pack) -> None:
    with pytest.raises(ToolError) as info:
        await toolset(tiny_pack, "full").call("query_metrics", {})
    assert info.value.message.endswith(
        "query_metrics takes: metric_name (required), instance (optional), stat (optional), start (optional), "
        "end (optional)"
    )


async def test_none_arguments_count_as_none_given(tiny_pack: Pack) -> None:
    tools = toolset(tiny_pack, "full")
    assert (await tools.call("list_metrics", None))["period"] == 60  # type: ignore[arg-type]


def test_an_unknown_mode_is_rejected(tiny_pack: Pack) -> None:
    with pytest.raises(ValueError, match="'fancy' is not a valid BackendMode"):
        toolset(tiny_pack, "fancy")


# -- the audit log ------------------------------------------------------------------------------------------------


async def test_audit_log_records_answered_calls_and_what_they_returned(tiny_pack: Pack) -> None:
    tools = toolset(tiny_pack, "selective")
    await tools.call("get_alert", {})
    await tools.call("query_metrics", {"metric_name": "cpu"})
    await tools.call("query_metrics", {"metric_name": "IOPS", "start": "2024-05-01T10:50:00Z"})
    with pytest.raises(ToolError):
        await tools.call("query_metrics", {"metric_name": "Lag", "stat": "median"})
    await tools.call("query_metrics", {"metric_name": "cpu"})
    await tools.call("query_metrics", {"metric_name": "ReplicaLag"})
    await tools.call("get_events", {})
    assert [e.tool for e in tools.audit] == [
        "get_alert",
        "query_metrics",
        "query_metrics",
        "query_metrics",
        "query_metrics",
        "get_events",
    ]
    assert tools.audit[2].returned_metrics == ("ReadIOPS", "WriteIOPS")
    assert tools.audit[2].n_points == 20
    assert tools.audit[1].n_points == 2 * N_POINTS
    assert all(e.clock is None for e in tools.audit)
    assert tools.queried_metrics() == ("cpu", "IOPS", "ReplicaLag")
    assert tools.returned_metrics() == ("CPUUtilization", "ReadIOPS", "WriteIOPS")
    assert tools.sources_queried() == {"alert", "aws_cloudwatch_metrics", "aws_rds_events"}


async def test_audit_entries_are_frozen_copies(tiny_pack: Pack) -> None:
    tools = toolset(tiny_pack, "selective")
    args: dict[str, Any] = {"metric_name": "cpu"}
    await tools.call("query_metrics", args)
    args["metric_name"] = "changed"
    (entry,) = tools.audit
    assert entry.args == {"metric_name": "cpu"}
    with pytest.raises(AttributeError):
        entry.tool = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        entry.args["metric_name"] = "x"  # type: ignore[index]


async def test_full_mode_returns_everything_so_nothing_counts_as_selectively_returned(tiny_pack: Pack) -> None:
    tools = toolset(tiny_pack, "full")
    await tools.call("query_metrics", {"metric_name": "cpu"})
    assert tools.queried_metrics() == ("cpu",)
    assert tools.audit[0].returned_metrics == tuple(dict.fromkeys(ALL_NAMES))
    assert tools.returned_metrics() == ()


async def test_sources_queried_maps_each_tool_to_its_file_stem(tiny_pack: Pack) -> None:
    tools = toolset(tiny_pack, "full")
    assert tools.sources_queried() == frozenset()
    await tools.call("list_metrics", {})
    assert tools.sources_queried() == {"aws_cloudwatch_metrics"}
    await tools.call("get_performance_insights", {"dimension": "top_sql"})
    await tools.call("submit_diagnosis", {"root_cause": "x"})
    assert tools.sources_queried() == {"aws_cloudwatch_metrics", "aws_performance_insights"}


# -- results are JSON and fresh ---------------------------------------------------------------------------------

VALID_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_alert", {}),
    ("list_metrics", {}),
    ("query_metrics", {"metric_name": "CPU"}),
    ("query_metrics", {"metric_name": "e", "stat": "Average", "start": "2024-05-01T10:20:00Z"}),
    ("get_events", {}),
    ("get_events", {"category": "failover"}),
    ("get_performance_insights", {}),
    ("get_performance_insights", {"dimension": "db_load"}),
    ("submit_diagnosis", {"root_cause": "x", "claims": [{"text": "y", "evidence": ["aws_rds_events"]}]}),
]


@pytest.mark.parametrize("mode", list(BackendMode))
@pytest.mark.parametrize("folder", ["001-cpu-hot-query", "002-storage-missing-metric", "003-events-only", "004-quiet"])
async def test_every_result_is_strict_json(tiny_pack: Pack, mode: BackendMode, folder: str) -> None:
    tools = toolset(tiny_pack, mode, folder)
    for tool, args in VALID_CALLS:
        result = await tools.call(tool, args)
        assert isinstance(result, dict)
        assert json.loads(json.dumps(result, allow_nan=False)) == result


async def test_mutating_a_result_does_not_change_the_next_one(tiny_pack: Pack) -> None:
    tools = toolset(tiny_pack, "full")
    for tool, args in VALID_CALLS[:-1]:
        first = await tools.call(tool, args)
        snapshot = json.dumps(first)
        for value in first.values():  # type: ignore[union-attr]
            if isinstance(value, list | dict):
                value.clear()
        assert json.dumps(await tools.call(tool, args)) == snapshot


async def test_every_call_lands_on_the_trajectory_through_the_recorder(tiny_pack: Pack) -> None:
    tools, recorder = toolset(tiny_pack, "temporal"), Recorder()
    await recorder.call_tool(tools, "query_metrics", {"metric_name": "cpu"})
    with pytest.raises(ToolError):
        await recorder.call_tool(tools, "get_performance_insights", {"dimension": "sql"})
    results = [s for s in recorder.steps if isinstance(s, ToolResultStep)]
    assert [r.name for r in results] == ["query_metrics", "get_performance_insights"]
    assert results[0].size_bytes and results[0].error is None
    assert results[1].error is not None and results[1].error.startswith("bad_arguments: get_performance_insights")


# -- prepared evidence, shared between toolsets ---------------------------------------------------------------


async def test_toolsets_over_one_scenario_share_its_prepared_evidence(tiny_pack: Pack) -> None:
    from sredrill.evidence import ScenarioEvidence

    scenario = tiny_pack.scenario("001-cpu-hot-query")
    evidence = ScenarioEvidence(scenario, tiny_pack.vocabulary)
    full = RcaToolset(scenario, "full", evidence=evidence)
    selective = RcaToolset(scenario, "selective", evidence=evidence)
    assert full._index is selective._index is evidence.index  # built once, for both axes
    # Shared, yet each run's answers are its own: what one agent does to a result never reaches another.
    first = await full.call("query_metrics", {"metric_name": "CPUUtilization"})
    first["series"][0]["timestamps"].clear()
    again = await selective.call("query_metrics", {"metric_name": "CPUUtilization"})
    assert len(again["series"][0]["timestamps"]) == N_POINTS
    assert again["series"][0]["timestamps"][0] == "2024-05-01T10:00:00Z"  # oldest first, ISO with Z
    # The same answers as a toolset that prepared its own evidence.
    alone = toolset(tiny_pack, "full")
    for name, args in (("get_alert", {}), ("get_events", {}), ("query_metrics", {"metric_name": "cpu"})):
        assert await RcaToolset(scenario, "full", evidence=evidence).call(name, args) == await alone.call(name, args)


def test_evidence_of_another_scenario_is_refused(tiny_pack: Pack) -> None:
    from sredrill.evidence import ScenarioEvidence

    scenarios = tiny_pack.scenarios
    evidence = ScenarioEvidence(scenarios[0], tiny_pack.vocabulary)
    with pytest.raises(ValueError, match="evidence given is"):
        RcaToolset(scenarios[1], "full", evidence=evidence)
