"""The tool specs agents see, the evidence-source and trajectory-action tables, and the package's public face."""

from __future__ import annotations

import json

import sredrill.evidence as evidence
from sredrill.diagnosis import Diagnosis
from sredrill.domains.rds import DOMAIN as RDS
from sredrill.domains.rds import EvidenceSource
from sredrill.evidence import tool_specs as domain_tool_specs
from sredrill.scenarios.domain import submit_description
from sredrill.trajectory import ToolSpec

TOOL_NAMES = RDS.tool_names


def tool_specs() -> list[ToolSpec]:
    return domain_tool_specs(RDS)


def test_all_is_sorted_and_resolves() -> None:
    assert list(evidence.__all__) == sorted(evidence.__all__)
    for name in evidence.__all__:
        assert getattr(evidence, name) is not None


def test_specs_are_the_seven_tools_in_order() -> None:
    assert [s.name for s in tool_specs()] == [
        "get_alert",
        "list_metrics",
        "query_metrics",
        "get_events",
        "get_performance_insights",
        "search_logs",
        "submit_diagnosis",
    ]
    assert list(TOOL_NAMES) == [s.name for s in tool_specs()]


def test_each_schema_matches_the_model_that_validates_the_arguments() -> None:
    for spec in tool_specs():
        decl = RDS.tool(spec.name)
        assert decl is not None
        model = decl.arguments
        schema = spec.input_schema
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert list(schema["properties"]) == list(model.model_fields)  # type: ignore[arg-type]
        assert schema["required"] == list(model.model_fields)  # strict: every argument is listed
        for name, field in model.model_fields.items():
            prop = json.dumps(schema["properties"][name])  # type: ignore[index]
            # An optional argument accepts null (= not given); a required one does not.
            assert ('"null"' in prop) is (not field.is_required()), (spec.name, name)
        text = json.dumps(schema)
        assert '"title"' not in text  # pydantic's generated titles are noise to a model
        assert '"$ref"' not in text and '"$defs"' not in text


def test_query_metrics_schema() -> None:
    (spec,) = [s for s in tool_specs() if s.name == "query_metrics"]
    props = spec.input_schema["properties"]
    assert props["metric_name"]["type"] == "string"  # type: ignore[index]
    assert props["start"]["type"] == ["string", "null"]  # type: ignore[index]
    # `format` and `examples` are not strict-mode keywords: they are words in the description.
    assert "format date-time; e.g. 2024-05-01T10:00:00Z" in props["start"]["description"]  # type: ignore[index]
    assert "(not empty)" in props["metric_name"]["description"]  # type: ignore[index]
    assert spec.input_schema["required"] == ["metric_name", "instance", "stat", "start", "end"]
    assert props["instance"]["type"] == ["string", "null"]  # type: ignore[index]


def test_performance_insights_schema_lists_the_dimensions() -> None:
    (spec,) = [s for s in tool_specs() if s.name == "get_performance_insights"]
    assert spec.input_schema["properties"]["dimension"]["anyOf"][0]["enum"] == [  # type: ignore[index]
        "db_load",
        "top_sql",
        "top_wait_events",
        "top_users",
        "top_hosts",
    ]


def test_submit_diagnosis_takes_the_diagnosis_fields() -> None:
    (spec,) = [s for s in tool_specs() if s.name == "submit_diagnosis"]
    assert list(spec.input_schema["properties"]) == list(Diagnosis.model_fields)  # type: ignore[arg-type]


def test_submit_diagnosis_says_how_to_cite_and_lists_the_vocabulary() -> None:
    (spec,) = [s for s in tool_specs() if s.name == "submit_diagnosis"]
    assert spec.description == submit_description(RDS)
    modes = spec.input_schema["properties"]["failure_modes"]["description"]  # type: ignore[index]
    assert RDS.vocabulary().catalogue() in modes  # type: ignore[operator]
    assert "- storage_full [resource_exhaustion]: allocated storage runs out (also: " in modes  # type: ignore[operator]


def test_specs_are_fresh_copies() -> None:
    first = tool_specs()
    first[2].input_schema["properties"].clear()  # type: ignore[union-attr]
    assert tool_specs()[2].input_schema["properties"]


def test_evidence_sources_are_the_file_stems_plus_the_alert() -> None:
    sources = set(RDS.tool_sources.values())
    assert sources == {*(s.value for s in EvidenceSource), "alert"}
    assert sorted(RDS.tool_sources) == sorted(set(TOOL_NAMES) - {"submit_diagnosis"})
    assert RDS.sources_of(["query_metrics", "submit_diagnosis", "unknown"]) == {"aws_cloudwatch_metrics"}
    assert RDS.sources_of(TOOL_NAMES) == sources


def test_trajectory_actions_agree_with_the_scenarios_answer_format() -> None:
    expected = {
        "query_grafana_metrics": ("list_metrics", "query_metrics"),
        "query_grafana_logs": ("get_events", "get_performance_insights", "search_logs"),
        "query_grafana_alert_rules": ("get_alert",),
    }
    assert dict(RDS.legacy_actions) == expected
    for action, tools in RDS.legacy_actions.items():
        assert RDS.trajectory_tools([action]) == set(tools)
        assert set(tools) <= set(TOOL_NAMES)
