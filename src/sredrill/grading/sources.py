"""Evidence sources as grading sees them: which tool call queried which source, and how claims cite them.

The toolset of DESIGN §3 serves one evidence file per tool family; grading reads only the trajectory, so
the mapping lives here rather than being imported from `evidence` (which serves the data, not the names).
A source counts as queried only through a call the harness served (`verified`): a call the agent merely
reported read nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from sredrill.trajectory import Trajectory

__all__ = [
    "ALERT_SOURCE",
    "CITATION_NAMES",
    "TOOL_SOURCES",
    "cited_source",
    "cited_sources",
    "queried_sources",
    "reported_sources",
]

ALERT_SOURCE = "alert"
"""The alert is evidence too, though it has no file stem of its own."""

TOOL_SOURCES: Mapping[str, str] = MappingProxyType(
    {
        "get_alert": ALERT_SOURCE,
        "list_metrics": "aws_cloudwatch_metrics",
        "query_metrics": "aws_cloudwatch_metrics",
        "get_events": "aws_rds_events",
        "get_performance_insights": "aws_performance_insights",
    }
)
"""Tool name -> the evidence source it reads (DESIGN §3). `submit_diagnosis` reads nothing."""

# What a claim may write in its `evidence` list for each source: the source id itself (added below), the
# id without `aws_`, an obvious short form, and the tools that read it. Anything else cites nothing.
_SHORT_FORMS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "aws_cloudwatch_metrics": ("cloudwatch_metrics", "cloudwatch", "metrics"),
        "aws_rds_events": ("rds_events", "events"),
        "aws_performance_insights": ("performance_insights", "pi"),
        ALERT_SOURCE: (),
    }
)
CITATION_NAMES: Mapping[str, str] = MappingProxyType(
    {
        **TOOL_SOURCES,
        **{short: source for source, shorts in _SHORT_FORMS.items() for short in shorts},
        **{source: source for source in _SHORT_FORMS},
    }
)
"""Accepted citation (normalised: lower case, spaces and hyphens as `_`) -> source id."""


def cited_source(citation: str) -> str | None:
    """The source a claim's citation names (`"Performance Insights"` -> `aws_performance_insights`), or None."""
    key = "_".join(citation.strip().lower().replace("-", " ").split())
    return CITATION_NAMES.get(key)


def queried_sources(trajectory: Trajectory) -> frozenset[str]:
    """The sources read by at least one successful tool call the harness served.

    A call that returned an error read nothing; a call the agent only reported (`verified` not True) was
    never executed, so it read nothing either.
    """
    calls = trajectory.tool_calls(verified=True)
    return frozenset(TOOL_SOURCES[c.name] for c in calls if c.name in TOOL_SOURCES and not c.error)


def reported_sources(trajectory: Trajectory) -> frozenset[str]:
    """The sources of successful calls the agent reported but the harness never served (for details)."""
    calls = trajectory.unverified_calls()
    return frozenset(TOOL_SOURCES[c.name] for c in calls if c.name in TOOL_SOURCES and not c.error)


def cited_sources(citations: Iterable[str]) -> frozenset[str]:
    """The sources a list of citations names; unknown citations are left out."""
    return frozenset(s for s in map(cited_source, citations) if s is not None)
