"""The tool specs agents see, the evidence-source and trajectory-action tables, and the package's public face."""

from __future__ import annotations

import json

import sredrill.evidence as evidence
from sredrill.diagnosis import Diagnosis
from sredrill.evidence import EVIDENCE_SOURCES, TOOL_NAMES, TRAJECTORY_ACTIONS, sources_of, tool_specs
from sredrill.evidence.specs import TOOL_ARGUMENTS
from sredrill.scenarios import EvidenceSource, trajectory_tools


def test_all_is_sorted_and_resolves() -> None:
    assert list(evidence.__all__) == sorted(evidence.__all__)
    for name in evidence.__all__:
        assert getattr(evidence, name) is not None


def test_specs_are_the_six_tools_in_order() -> None:
    assert [s.name for s in tool_specs()] == [
        "get_alert",
        "list_metrics",
        "query_metrics",
        "get_events",
        "get_performance_insights",
        "submit_diagnosis",
    ]
    assert list(TOOL_NAMES) == [s.name for s in tool_specs()]


def test_each_schema_matches_the_model_that_validates_the_arguments() -> None:
    for spec in tool_specs():
        model = TOOL_ARGUMENTS[spec.name]
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
    assert spec.input_schema["required"] == ["metric_name", "stat", "start", "end"]


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


def test_specs_are_fresh_copies() -> None:
    first = tool_specs()
    first[2].input_schema["properties"].clear()  # type: ignore[union-attr]
    assert tool_specs()[2].input_schema["properties"]


def test_evidence_sources_are_the_file_stems_plus_the_alert() -> None:
    assert set(EVIDENCE_SOURCES) == {*(s.value for s in EvidenceSource), "alert"}
    readers = [t for tools in EVIDENCE_SOURCES.values() for t in tools]
    assert sorted(readers) == sorted(set(TOOL_NAMES) - {"submit_diagnosis"})
    assert sources_of(["query_metrics", "submit_diagnosis", "unknown"]) == {"aws_cloudwatch_metrics"}
    assert sources_of(TOOL_NAMES) == set(EVIDENCE_SOURCES)


def test_trajectory_actions_agree_with_the_scenarios_answer_format() -> None:
    expected = {
        "query_grafana_metrics": {"list_metrics", "query_metrics"},
        "query_grafana_logs": {"get_events", "get_performance_insights"},
        "query_grafana_alert_rules": {"get_alert"},
    }
    assert dict(TRAJECTORY_ACTIONS) == expected
    for action, tools in TRAJECTORY_ACTIONS.items():
        assert trajectory_tools([action]) == tools
        assert tools <= set(TOOL_NAMES)
