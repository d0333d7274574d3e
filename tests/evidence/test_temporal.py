"""The temporal backend: a clock from the alert's start, one metric period per call, nothing from the future."""

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
from tests.support.scenario_builder import PERIOD_S, T0

PERIOD = timedelta(seconds=PERIOD_S)
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
    # Rejected calls advance the clock too.
    st.tuples(st.just("get_everything"), st.just({})),
    st.tuples(st.just("query_metrics"), st.just({"metric_name": "cpu", "stat": "median"})),
)


def call(tools: RcaToolset, name: str, args: dict[str, Any]) -> Any:
    try:
        return asyncio.run(tools.call(name, args))
    except ToolError:
        return None


@pytest.mark.parametrize("folder", ["001-cpu-hot-query", "002-storage-missing-metric", "003-events-only"])
@settings(max_examples=60, deadline=None)
@given(sequence=st.lists(_calls, min_size=1, max_size=40))
def test_temporal_never_returns_anything_after_its_clock(
    tiny_pack: Pack, folder: str, sequence: list[tuple[str, dict[str, Any]]]
) -> None:
    scenario = tiny_pack.scenario(folder)
    tools = RcaToolset(scenario, BackendMode.TEMPORAL, vocabulary=tiny_pack.vocabulary)
    start = tools.clock
    assert start is not None
    answered = 0
    for n, (name, args) in enumerate(sequence):
        clock = start + n * PERIOD
        assert tools.clock == clock
        result = call(tools, name, args)
        if result is None:
            continue
        assert all(m <= clock for m in moments(result)), (name, args, clock)
        answered += 1
        assert tools.audit[-1].clock == clock
    assert tools.clock == start + len(sequence) * PERIOD
    assert len(tools.audit) == answered


async def test_the_clock_starts_at_starts_at_and_the_first_call_sees_up_to_it(tiny_pack: Pack) -> None:
    tools = RcaToolset(tiny_pack.scenario("001-cpu-hot-query"), "temporal", vocabulary=tiny_pack.vocabulary)
    assert tools.clock == STARTS_AT
    first = await tools.call("query_metrics", {"metric_name": "ReadIOPS"})
    assert first["series"][0]["timestamps"][-1] == "2024-05-01T10:40:00Z"
    assert len(first["series"][0]["values"]) == 41
    assert tools.clock == STARTS_AT + PERIOD
    second = await tools.call("query_metrics", {"metric_name": "ReadIOPS"})
    assert second["series"][0]["timestamps"][-1] == "2024-05-01T10:41:00Z"
    assert [e.clock for e in tools.audit] == [STARTS_AT, STARTS_AT + PERIOD]


async def test_every_tool_advances_the_clock_even_a_rejected_call(tiny_pack: Pack) -> None:
    tools = RcaToolset(tiny_pack.scenario("001-cpu-hot-query"), "temporal", vocabulary=tiny_pack.vocabulary)
    await tools.call("get_alert", {})
    await tools.call("list_metrics", {})
    with pytest.raises(ToolError):
        await tools.call("nope", {})
    await tools.call("submit_diagnosis", {"root_cause": "x"})
    assert tools.clock == STARTS_AT + 4 * PERIOD


async def test_events_and_db_load_appear_as_time_passes(tiny_pack: Pack) -> None:
    tools = RcaToolset(tiny_pack.scenario("001-cpu-hot-query"), "temporal", vocabulary=tiny_pack.vocabulary)
    early = await tools.call("get_events", {})
    assert [e["date"] for e in early["events"]] == ["2024-05-01T10:10:00Z", "2024-05-01T10:31:00Z"]
    for _ in range(4):
        await tools.call("get_alert", {})
    late = await tools.call("get_events", {})  # the sixth call: clock 10:45
    assert late["events"][-1]["date"] == "2024-05-01T10:45:00Z"
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
    assert tools.clock == T0 + timedelta(minutes=10) + timedelta(seconds=60)


@pytest.mark.parametrize("mode", ["full", "selective"])
async def test_other_backends_have_no_clock(tiny_pack: Pack, mode: str) -> None:
    tools = RcaToolset(tiny_pack.scenario("001-cpu-hot-query"), mode, vocabulary=tiny_pack.vocabulary)
    assert tools.clock is None
    result = await tools.call("get_events", {})
    assert len(result["events"]) == 3
    assert tools.clock is None
