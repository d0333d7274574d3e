"""Every tool schema an agent can be given is valid JSON Schema 2020-12 and strict-function-calling ready.

The rules are those of OpenAI's Structured Outputs guide ("Supported schemas"), which strict function
calling (`"strict": true`) enforces: the root is an object, not `anyOf`; every object lists all its
properties in `required` and sets `additionalProperties: false`; an optional parameter is a union with
null; only the supported keywords appear. Of those, we keep to the ones every model accepts (fine-tuned
models reject `format`, `minLength`, `minimum`, `maximum`, `minItems`, …); our schemas say those in words.
`check` names the tool and each rule it breaks; the enumeration covers every surface that hands out tools.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from sredrill.agents import ToolHost
from sredrill.diagnosis import Claim, Diagnosis, RuledOut
from sredrill.env import TaskCatalog, make
from sredrill.env.toolset import EnvToolset
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.incidents import TASKS
from sredrill.scenarios import Pack, load_pack
from sredrill.server import TraceCatalog
from sredrill.traces import TRACE_QUERY_TOOLS
from sredrill.trajectory import Recorder, ToolSpec
from tests.support.mcp_client import mcp_session

# The guide's supported keywords that every model accepts, plus `$defs`/`$ref` (allowed when they resolve).
STRICT_KEYWORDS = frozenset(
    {"type", "description", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf"}
)
REFERENCE_KEYWORDS = frozenset({"$defs", "$ref"})


def _subschemas(node: Mapping[str, Any], path: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    yield path, node
    for name, sub in node.get("properties", {}).items():
        yield from _subschemas(sub, f"{path}.properties.{name}")
    if isinstance(node.get("items"), Mapping):
        yield from _subschemas(node["items"], f"{path}.items")
    for i, sub in enumerate(node.get("anyOf", [])):
        yield from _subschemas(sub, f"{path}.anyOf[{i}]")
    for name, sub in node.get("$defs", {}).items():
        yield from _subschemas(sub, f"{path}.$defs.{name}")


def _resolves(root: Mapping[str, Any], ref: str) -> bool:
    if not ref.startswith("#/"):
        return False
    node: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return isinstance(node, Mapping)


def _is_object(node: Mapping[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in node


def check(tool: str, schema: Mapping[str, Any]) -> list[str]:
    """Every rule `schema` breaks, each as "<tool>: <where>: <rule>" (empty: the schema is fine)."""
    problems = []
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        problems.append(f"not valid under the JSON Schema 2020-12 meta-schema: {exc.message}")
    if schema.get("type") != "object" or "anyOf" in schema:
        problems.append("the root must be a plain object schema (type object, no anyOf)")
    if "properties" not in schema or "required" not in schema:
        problems.append("the root must have properties and required")
    for where, node in _subschemas(schema, "$"):
        for key in set(node) - STRICT_KEYWORDS - REFERENCE_KEYWORDS:
            problems.append(f"{where}: keyword {key!r} is not supported by strict function calling")
        if not {"type", "enum", "const", "anyOf", "$ref"} & node.keys():
            problems.append(f"{where}: a schema needs a type (strict mode has no 'any value')")
        ref = node.get("$ref")
        if ref is not None and not _resolves(schema, str(ref)):
            problems.append(f"{where}: $ref {ref!r} does not resolve inside the schema")
        if _is_object(node):
            if node.get("additionalProperties") is not False:
                problems.append(f"{where}: an object must set additionalProperties: false")
            props = node.get("properties", {})
            missing = [p for p in props if p not in node.get("required", [])]
            if missing:
                problems.append(f"{where}: every property must be required, missing {missing}")
    return [f"{tool}: {p}" for p in problems]


def check_all(specs: list[ToolSpec] | list[tuple[str, Mapping[str, Any]]]) -> list[str]:
    pairs = [(s.name, s.input_schema) if isinstance(s, ToolSpec) else s for s in specs]
    assert pairs, "no tools to check"
    return [p for name, schema in pairs for p in check(name, schema)]


# -- the checker itself -----------------------------------------------------------------------------


def test_the_checker_names_each_broken_rule() -> None:
    # What incident tools used to send: a $ref whose $defs were dropped, no required, no additionalProperties.
    old = {"type": "object", "properties": {"target": {"$ref": "#/$defs/Service"}, "n": {"type": "integer"}}}
    problems = check("inspect_logs", old)
    assert any("$ref '#/$defs/Service' does not resolve" in p for p in problems)
    assert any("additionalProperties: false" in p for p in problems)
    assert any("every property must be required, missing ['target', 'n']" in p for p in problems)
    assert all(p.startswith("inspect_logs: ") for p in problems)
    loose = {
        "type": "object",
        "properties": {"q": {"type": "string", "minLength": 1, "default": "x"}},
        "required": ["q"],
        "additionalProperties": False,
    }
    assert sorted(check("t", loose)) == [
        "t: $.properties.q: keyword 'default' is not supported by strict function calling",
        "t: $.properties.q: keyword 'minLength' is not supported by strict function calling",
    ]
    assert check("t", {"type": "object", "properties": {"a": {"type": "strin"}}, "required": ["a"]})[0].startswith(
        "t: not valid under the JSON Schema 2020-12 meta-schema"
    )
    assert "t: the root must be a plain object schema (type object, no anyOf)" in check("t", {"anyOf": []})
    free = {"type": "object", "properties": {"v": {}}, "required": ["v"], "additionalProperties": False}
    assert check("t", free) == ["t: $.properties.v: a schema needs a type (strict mode has no 'any value')"]
    fine = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    assert check("t", fine) == []


# -- every surface that hands out tools -----------------------------------------------------------------


@pytest.fixture(scope="module")
def rds() -> Pack:
    return load_pack("rds_postgres")


@pytest.mark.parametrize("mode", list(BackendMode))
def test_rca_tools_in_every_backend_mode(rds: Pack, mode: BackendMode) -> None:
    specs = RcaToolset(rds.scenarios[0], mode, vocabulary=rds.vocabulary).specs()
    assert [s.name for s in specs][-1] == "submit_diagnosis"
    assert check_all(specs) == []


@pytest.mark.parametrize("task_id", list(TASKS))
def test_incident_episode_tools(task_id: str) -> None:
    env = make(task_id, seed=0)
    env.reset()
    specs = EnvToolset(env).specs()
    assert len(specs) == 12  # observe + the 11 actions
    assert check_all(specs) == []


def test_rca_episode_tools_and_the_env_catalogs_mcp_tools(rds: Pack) -> None:
    catalog = TraceCatalog(TaskCatalog([rds]))
    rca_id = next(i for i in catalog.ids() if i.startswith("rca-"))
    env = catalog.make(rca_id, seed=0)
    env.reset_result()
    specs = EnvToolset(env).specs()  # type: ignore[arg-type]
    assert [s.name for s in specs] == [
        "observe",
        "inspect_alert",
        "inspect_metrics",
        "inspect_logs",
        "submit_diagnosis",
    ]
    assert check_all(specs) == []
    for task_id in (rca_id, "easy_cpu_spike"):
        assert check_all([(t.name, t.inputSchema) for t in catalog.tools(task_id)]) == []


def test_trace_query_tools() -> None:
    assert check_all(list(TRACE_QUERY_TOOLS)) == []


@pytest.fixture
async def host() -> AsyncIterator[ToolHost]:
    host = ToolHost()
    try:
        yield host
    finally:
        await host.aclose()


async def test_the_tool_servers_http_and_mcp_listings(host: ToolHost, rds: Pack) -> None:
    env = make("hard_mixed", seed=0)
    env.reset()
    rca = await host.open("run-rca", RcaToolset(rds.scenarios[0], "selective", vocabulary=rds.vocabulary), Recorder())
    episode = await host.open("run-env", EnvToolset(env), Recorder())
    async with httpx.AsyncClient(timeout=30) as http:  # 2 shared cores: a loaded machine is slow, not broken
        for access in (rca, episode):
            listed = await http.get(f"{access.tools_url}/tools", headers={"Authorization": f"Bearer {access.token}"})
            assert listed.status_code == 200
            tools = listed.json()["tools"]
            assert check_all([(t["name"], t["input_schema"]) for t in tools]) == []
    for access in (rca, episode):
        assert access.mcp_url is not None
        async with mcp_session(access.mcp_url, access.token) as session:
            listed = (await session.list_tools()).tools
            assert listed and check_all([(t.name, t.input_schema) for t in listed]) == []


# -- the schemas describe what the tools accept -----------------------------------------------------------


def _all_null(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments a strict model sends when it wants none of the optional ones: each a null."""
    return {
        name: None
        for name, prop in schema["properties"].items()
        if Draft202012Validator(prop).is_valid(None) and name not in ("metric_name", "run_id")
    }


def test_a_full_diagnosis_and_all_null_optionals_are_valid_instances(rds: Pack) -> None:
    specs = {s.name: s.input_schema for s in RcaToolset(rds.scenarios[0], "full").specs()}
    full = Diagnosis(
        root_cause="A reporting query saturated the CPU.",
        category="resource_exhaustion",
        failure_modes=["cpu_saturation"],
        causal_chain=["query", "cpu"],
        claims=[Claim(text="CPU at 99%", evidence=["aws_cloudwatch_metrics"])],
        ruled_out=[RuledOut(hypothesis="storage", reason="plenty free")],
        report="r",
    ).model_dump(mode="json")
    Draft202012Validator(specs["submit_diagnosis"]).validate(full)
    minimal = {"root_cause": "x", **{k: None for k in full if k != "root_cause"}}
    Draft202012Validator(specs["submit_diagnosis"]).validate(minimal)
    Draft202012Validator(specs["query_metrics"]).validate(
        {"metric_name": "CPU", "instance": None, "stat": None, "start": None, "end": None}
    )
    for name, schema in specs.items():
        args = _all_null(schema)
        if name == "query_metrics":
            args["metric_name"] = "CPU"
        if name != "submit_diagnosis":
            Draft202012Validator(schema).validate(args)


# -- null means not given, through each tool's real call path ----------------------------------------------


async def test_rca_tools_read_a_null_optional_argument_as_not_given(rds: Pack) -> None:
    scenario = rds.scenarios[0]

    async def both(name: str, nulls: dict[str, Any], plain: dict[str, Any]) -> tuple[Any, Any]:
        # Fresh toolsets, each with its own temporal clock.
        a = RcaToolset(scenario, "temporal", vocabulary=rds.vocabulary)
        b = RcaToolset(scenario, "temporal", vocabulary=rds.vocabulary)
        return await a.call(name, nulls), await b.call(name, plain)

    with_nulls, without = await both(
        "query_metrics",
        {"metric_name": "CPU", "instance": None, "stat": None, "start": None, "end": None},
        {"metric_name": "CPU"},
    )
    assert with_nulls == without and with_nulls["series"]
    for name, nulls in [
        ("get_events", {"start": None, "end": None, "category": None}),
        ("get_performance_insights", {"dimension": None}),
    ]:
        with_nulls, without = await both(name, nulls, {})
        assert with_nulls == without, name
    tools = RcaToolset(scenario, "full", vocabulary=rds.vocabulary)
    args = {
        "root_cause": "x",
        "category": None,
        "failure_modes": None,
        "causal_chain": None,
        "claims": [{"text": "CPU high", "evidence": None}],
        "ruled_out": [{"hypothesis": "storage", "reason": None}],
        "report": None,
    }
    assert await tools.call("submit_diagnosis", args) == {"accepted": True}
    assert tools.submitted == Diagnosis(
        root_cause="x", claims=[Claim(text="CPU high")], ruled_out=[RuledOut(hypothesis="storage")]
    )


async def test_a_null_required_or_unknown_argument_is_still_an_error(rds: Pack) -> None:
    from sredrill.trajectory import ToolError

    tools = RcaToolset(rds.scenarios[0], "full", vocabulary=rds.vocabulary)
    for name, args, says in [
        ("query_metrics", {"metric_name": None}, "metric_name"),
        ("get_events", {"categroy": None}, "unknown argument 'categroy'"),
        ("submit_diagnosis", {"root_cause": None}, "root_cause"),
    ]:
        with pytest.raises(ToolError) as caught:
            await tools.call(name, args)
        assert caught.value.code == "bad_arguments" and says in caught.value.message, caught.value.message


async def test_rca_episode_actions_read_null_as_not_given(rds: Pack) -> None:
    catalog = TaskCatalog([rds])
    rca_id = next(i for i in catalog.ids() if i.startswith("rca-"))

    async def inspection(args: dict[str, Any], name: str) -> Any:
        env = catalog.make(rca_id, seed=0)
        env.reset()
        result = await EnvToolset(env).call(name, args)
        return result["observation"]["inspection"]["evidence"]  # type: ignore[index]

    listed = await inspection({"target": None, "args": None}, "inspect_metrics")
    assert listed == await inspection({}, "inspect_metrics") and "metrics" in listed
    metric = listed["metrics"][0]["metric_name"]
    nulls = {"stat": None, "start": None, "end": None}
    assert await inspection({"target": metric, "args": nulls}, "inspect_metrics") == await inspection(
        {"target": metric}, "inspect_metrics"
    )
    # inspect_logs lists the options of both evidence tools; the other tool's are null and ignored.
    all_four = {"start": None, "end": None, "category": None, "dimension": None}
    for target in ("events", "performance_insights"):
        assert await inspection({"target": target, "args": all_four}, "inspect_logs") == await inspection(
            {"target": target}, "inspect_logs"
        )
    env = catalog.make(rca_id, seed=0)
    env.reset()
    diagnosis = {"root_cause": "x", "category": None, "failure_modes": None, "causal_chain": None}
    done = await EnvToolset(env).call(
        "submit_diagnosis", {"args": {**diagnosis, "claims": None, "ruled_out": None, "report": None}}
    )
    assert done["done"] is True  # type: ignore[index]


def test_the_env_servers_mcp_tool_call_reads_null_as_not_given(rds: Pack) -> None:
    catalog = TraceCatalog(TaskCatalog([rds]))
    rca_id = next(i for i in catalog.ids() if i.startswith("rca-"))
    all_four = {"start": None, "end": None, "category": None, "dimension": None}
    results = []
    for arguments in ({"target": "events", "args": all_four}, {"target": "events", "args": None}):
        env = catalog.make(rca_id, seed=0)
        env.reset_result()
        results.append(env.step(catalog.tool_action(rca_id, "inspect_logs", arguments)).model_dump(mode="json"))
    assert results[0] == results[1] and results[0]["observation"]["inspection"]["evidence"] is not None


async def test_trace_query_reads_null_as_not_given() -> None:
    from sredrill.traces import RunTraces, Span, SpanCollector, SpanSource, TraceQueryTools

    collector = SpanCollector()
    trace = collector.open("run-a", "t1").trace
    collector.add([
        Span(trace_id=trace.trace_id, span_id="1" * 16, parent_span_id=None, name="invoke_agent x", start_ns=0,
             end_ns=5_000_000, source=SpanSource.SREDRILL, attributes={}),
    ])  # fmt: skip
    tools = TraceQueryTools(
        RunTraces(collector=collector, run_id="run-a", agent_exports=False, otlp_url=None), timeout_s=0.05
    )
    nulls = {"run_id": "run-a", "name": None, "source": None, "limit": None}
    spans = await tools.call("get_spans", nulls)
    assert spans == await tools.call("get_spans", {"run_id": "run-a"}) and spans["total"] == 1  # type: ignore[index]
