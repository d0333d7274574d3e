"""Evidence sources: which calls queried which source, and which citations name which source."""

from __future__ import annotations

import pytest

from sredrill.domains.rds import DOMAIN as RDS
from sredrill.grading import cited_source, cited_sources, queried_sources
from tests.grading.agent_output import trajectory


@pytest.mark.parametrize(
    ("citation", "source"),
    [
        ("aws_cloudwatch_metrics", "aws_cloudwatch_metrics"),
        ("metrics", "aws_cloudwatch_metrics"),
        ("CloudWatch", "aws_cloudwatch_metrics"),
        ("query_metrics", "aws_cloudwatch_metrics"),
        ("aws_rds_events", "aws_rds_events"),
        ("RDS events", "aws_rds_events"),
        ("events", "aws_rds_events"),
        ("aws_performance_insights", "aws_performance_insights"),
        ("Performance Insights", "aws_performance_insights"),
        ("PI", "aws_performance_insights"),
        ("alert", "alert"),
        ("grafana_logs", None),
        ("my hunch", None),
    ],
)
def test_cited_source_accepts_ids_short_forms_and_tool_names(citation: str, source: str | None) -> None:
    assert cited_source(citation, RDS) == source


def test_cited_sources_drops_unknown_citations() -> None:
    assert cited_sources(["pi", "nonsense", "events"], RDS) == {"aws_performance_insights", "aws_rds_events"}


def test_queried_sources_maps_tools_and_skips_failed_calls() -> None:
    t = trajectory("get_alert", "list_metrics", "get_events", "submit_diagnosis", error={"get_events"})
    assert queried_sources(t, RDS) == {"alert", "aws_cloudwatch_metrics"}


def test_every_tool_but_submit_reads_a_source() -> None:
    assert set(RDS.tool_sources) == {
        "get_alert",
        "list_metrics",
        "query_metrics",
        "get_events",
        "get_performance_insights",
        "search_logs",
    }
