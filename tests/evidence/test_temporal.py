"""The temporal backend: a clock from the alert's start that only `wait` moves, nothing from the future."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sredrill.evidence import BackendMode, RcaToolset
from sredrill.scenarios import Pack
from sredrill.trajectory import ToolError
from tests.evidence.conftest import STARTS_AT
from tests.support.scenario_builder import T0

MINUTE = timedelta(minutes=1)
# Keys whose values are moments an agent could read as "data exists up to here".
DATED_KEYS = {"timestamps", "date", "end", "end_time"}


def moments(result: Any) -> list[datetime]:
    """Every timestamp under a dated key, anywhere in a result."""
    found: list[datetime] = []
    if isinstance(result, dict):
        for key, value in result.items():
            if key in DATED_KEYS and isinstance(value, str):
                found.append(datetime.fromisoformat(value))
            elif key in DATED_KEYS and isinstance(value, list):
                found.extend(datetime.fromisoformat(v) for v in value)
            else:
                found.extend(moments(value))
    elif isinstance(result, list):
        for item in result:
            found.extend(moments(item))
    return found


_times = st.integers(min_value=-10, max_value=80).map(lambda m: (T0 + timedelta(minutes=m)).isoformat())
_calls = st.one_of(
    st.tuples(st.just("get_alert"), st.just({})),
    st.tuples(st.just("list_metrics"), st.just({})),
    st.tuples(
        st.just("query_metrics"),
        st.fixed_dictionaries(
            {"metric_name": st.sampled_from(["cpu", "CPUUtilization", "IOPS", "connections", "Storage", "Lag"])},
            optional={"stat": st.sampled_from(["Average", "Maximum"]), "start": _times},
        ),
    ),
    st.tuples(
        st.just("get_events"),
        st.fixed_dictionaries({}, optional={"start": _times, "category": st.sampled_from(["failover", "LOW STORAGE"])}),
    ),
    st.tuples(
        st.just("get_performance_insights"),
        st.fixed_dictionaries({}, optional={"dimension": st.sampled_from(["db_load", "top_sql"])}),
    ),
    # Rejected calls, and waits: only an answered wait moves the clock.
    st.tuples(st.just("get_everything"), st.just({})),
    st.tuples(st.just("query_metrics"), st.just({"metric_name": "cpu", "stat": "median"})),
    st.tuples(st.just("wait"), st.fixed_dictionaries({"minutes": st.integers(min_value=-5, max_value=30)})),
)


def call(tools: RcaToolset, name: str, args: dict[str, Any]) -> Any:
    try:
        return asyncio.run(tools.call(name, args))
    except ToolError:
        return None


@pytest.mark.parametrize("folder", ["001-cpu-hot-query", "002-storage-missing-metric", "003-events-only"])
@settings(max_examples=60, deadline=None)
@given(sequence=st.lists(_calls, min_size=1, max_size=40))
def test_temporal_never_returns_anything_after_its_clock_and_only_wait_moves_it(
    tiny_pack: Pack, folder: str, sequence: list[tuple[str, dict[str, Any]]]
) -> None:
    scenario = tiny_pack.scenario(folder)
    tools = RcaToolset(scenario, BackendMode.TEMPORAL, vocabulary=tiny_pack.vocabulary)
    clock = tools.clock
    assert clock is not None
    answered = 0
    for name, args in sequence:
        assert tools.clock == clock
        result = call(tools, name, args)
        if result is None:
            assert tools.clock == clock  # a rejected call (a bad wait too) moves nothing
            continue
        answered += 1
        assert tools.audit[-1].clock == clock
        if name == "wait":
            moved = tools.clock
            assert moved is not None and clock <= moved <= clock + args["minutes"] * MINUTE
            assert result["clock"] == moved.isoformat().replace("+00:00", "Z")
            clock = moved
            continue
        assert all(m <= clock for m in moments(result)), (name, args, clock)
    assert len(tools.audit) == answered


async def test_the_clock_starts_at_starts_at_and_calls_do_not_move_it(tiny_pack: Pack) -> None:
    tools = RcaToolset(tiny_pack.scenario("001-cpu-hot-query"), "temporal", vocabulary=tiny_pack.vocabulary)
    assert tools.clock == STARTS_AT
    for _ in range(40):  # the old fast-forward: many dummy calls
        await tools.call("get_alert", {})
    first = await tools.call("query_metrics", {"metric_name": "ReadIOPS"})
    assert first["series"][0]["timestamps"][-1] == "2024-05-01T10:40:00Z"
    assert len(first["series"][0]["values"]) == 41
    assert tools.clock == STARTS_AT
    with pytest.raises(ToolError):
        await tools.call("nope", {})
    await tools.call("submit_diagnosis", {"root_cause": "x"})
    assert tools.clock == STARTS_AT
    assert {e.clock for e in tools.audit} == {STARTS_AT}


async def test_wait_moves_the_clock_by_the_minutes_asked(tiny_pack: Pack) -> None:
    tools = RcaToolset(tiny_pack.scenario("001-cpu-hot-query"), "temporal", vocabulary=tiny_pack.vocabulary)
    answer = await tools.call("wait", {"minutes": 3})
    assert answer == {"clock": "2024-05-01T10:43:00Z", "waited_minutes": 3.0, "data_ends_at": answer["data_ends_at"]}
    assert tools.clock == STARTS_AT + 3 * MINUTE
    later = await tools.call("query_metrics", {"metric_name": "ReadIOPS"})
    assert later["series"][0]["timestamps"][-1] == "2024-05-01T10:43:00Z"
    assert [e.clock for e in tools.audit] == [STARTS_AT, STARTS_AT + 3 * MINUTE]


async def test_wait_stops_at_the_end_of_the_data_and_says_so(tiny_pack: Pack) -> None:
    scenario = tiny_pack.scenario("001-cpu-hot-query")
    tools = RcaToolset(scenario, "temporal", vocabulary=tiny_pack.vocabulary)
    full = RcaToolset(scenario, "full", vocabulary=tiny_pack.vocabulary)
    everything = await full.call("query_metrics", {"metric_name": "ReadIOPS"})
    end = max(
        [datetime.fromisoformat(t) for s in everything["series"] for t in s["timestamps"]]
        + [datetime.fromisoformat(e["date"]) for e in (await full.call("get_events", {}))["events"]]
    )
    answer = await tools.call("wait", {"minutes": 1440})
    assert tools.clock is not None and tools.clock >= end  # the end of all the dated evidence
    assert "note" in answer and "the data ends at" in answer["note"]
    assert answer["clock"] == answer["data_ends_at"]
    again = await tools.call("wait", {"minutes": 5})
    assert again["waited_minutes"] == 0 and again["clock"] == answer["clock"]
    # everything is visible now
    last = await tools.call("query_metrics", {"metric_name": "ReadIOPS"})
    assert last["series"][0]["values"] == everything["series"][0]["values"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({"minutes": 0}, "minutes: must be between 1 and 1440 minutes, got 0"),
        ({"minutes": -3}, "got -3"),
        ({"minutes": 5000}, "got 5000"),
        ({"minutes": "5"}, "minutes: Input should be a valid integer, got a string"),
        ({}, "missing required argument 'minutes'"),
        ({"mins": 3}, "unknown argument 'mins' (did you mean 'minutes'?)"),
    ],
)
async def test_a_bad_wait_is_an_error_the_agent_sees_and_moves_nothing(
    tiny_pack: Pack, args: dict[str, Any], needle: str
) -> None:
    tools = RcaToolset(tiny_pack.scenario("001-cpu-hot-query"), "temporal", vocabulary=tiny_pack.vocabulary)
    with pytest.raises(ToolError) as caught:
        await tools.call("wait", args)
    assert caught.value.code == "bad_arguments"
    assert needle in str(caught.value) and "wait takes: minutes (required)" in str(caught.value)
    assert tools.clock == STARTS_AT and tools.audit == ()


@pytest.mark.parametrize("mode", ["full", "selective"])
async def test_wait_is_offered_only_under_temporal(tiny_pack: Pack, mode: str) -> None:
    scenario = tiny_pack.scenario("001-cpu-hot-query")
    tools = RcaToolset(scenario, mode, vocabulary=tiny_pack.vocabulary)
    assert "wait" not in [s.name for s in tools.specs()]
    with pytest.raises(ToolError) as caught:
        await tools.call("wait", {"minutes": 5})
    assert caught.value.code == "unknown_tool"
    assert f"under the {mode} backend" in str(caught.value) and "only under temporal" in str(caught.value)
    temporal = [s.name for s in RcaToolset(scenario, "temporal", vocabulary=tiny_pack.vocabulary).specs()]
    assert temporal[-2:] == ["wait", "submit_diagnosis"]


async def test_events_and_db_load_appear_after_a_wait(tiny_pack: Pack) -> None:
    tools = RcaToolset(tiny_pack.scenario("001-cpu-hot-query"), "temporal", vocabulary=tiny_pack.vocabulary)
    early = await tools.call("get_events", {})
    assert [e["date"] for e in early["events"]] == ["2024-05-01T10:10:00Z", "2024-05-01T10:31:00Z"]
    await tools.call("wait", {"minutes": 5})
    late = await tools.call("get_events", {})  # clock 10:45
    assert late["events"][-1]["date"] == "2024-05-01T10:45:00Z"
    await tools.call("wait", {"minutes": 1})
    pi = await tools.call("get_performance_insights", {})  # clock 10:46
    assert pi["db_load"]["timestamps"][-1] == "2024-05-01T10:46:00Z"
    assert pi["end_time"] == "2024-05-01T10:46:00Z"
    # top_* lists are whole-window aggregates: returned as they are (documented limitation).
    assert pi["top_sql"][0]["db_load_avg"] == 3.5


async def test_list_metrics_window_ends_at_the_clock(tiny_pack: Pack) -> None:
    tools = RcaToolset(tiny_pack.scenario("001-cpu-hot-query"), "temporal", vocabulary=tiny_pack.vocabulary)
    listed = await tools.call("list_metrics", {})
    assert listed["window"] == {"start": "2024-05-01T10:00:00Z", "end": "2024-05-01T10:40:00Z"}
    assert len(listed["metrics"]) == 6


async def test_without_metrics_the_clock_starts_at_the_first_dated_evidence(tiny_pack: Pack) -> None:
    tools = RcaToolset(tiny_pack.scenario("003-events-only"), "temporal", vocabulary=tiny_pack.vocabulary)
    assert tools.clock == T0 + timedelta(minutes=10)
    first = await tools.call("get_events", {})
    assert [e["date"] for e in first["events"]] == ["2024-05-01T10:10:00Z"]
    assert tools.clock == T0 + timedelta(minutes=10)


@pytest.mark.parametrize("mode", ["full", "selective"])
async def test_other_backends_have_no_clock(tiny_pack: Pack, mode: str) -> None:
    tools = RcaToolset(tiny_pack.scenario("001-cpu-hot-query"), mode, vocabulary=tiny_pack.vocabulary)
    assert tools.clock is None
    result = await tools.call("get_events", {})
    assert len(result["events"]) == 3
    assert tools.clock is None
