"""Evidence sources as grading sees them: which tool call queried which source, and how claims cite them.

The table is the scenario's domain's (`Domain.tool_sources`, `Domain.citation_names`): derived from its tool
and source declarations, so grading and the toolset cannot disagree about which tool reads what. A source
counts as queried only through a call the harness served (`verified`): a call the agent merely reported read
nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from sredrill.scenarios.domain import ALERT_SOURCE, Domain
from sredrill.trajectory import Trajectory

__all__ = ["ALERT_SOURCE", "cited_source", "cited_sources", "queried_sources", "reported_sources"]


def cited_source(citation: str, domain: Domain) -> str | None:
    """The source a claim's citation names (`"Performance Insights"` -> its source id), or None.

    A claim may name a source by its id, a short form its domain declares, or a tool that reads it.
    """
    key = "_".join(citation.strip().lower().replace("-", " ").split())
    return domain.citation_names.get(key)


def queried_sources(trajectory: Trajectory, domain: Domain) -> frozenset[str]:
    """The sources read by at least one successful tool call the harness served.

    A call that returned an error read nothing; a call the agent only reported (`verified` not True) was
    never executed, so it read nothing either.
    """
    table = domain.tool_sources
    calls = trajectory.tool_calls(verified=True)
    return frozenset(table[c.name] for c in calls if c.name in table and not c.error)


def reported_sources(trajectory: Trajectory, domain: Domain) -> frozenset[str]:
    """The sources of successful calls the agent reported but the harness never served (for details)."""
    table = domain.tool_sources
    calls = trajectory.unverified_calls()
    return frozenset(table[c.name] for c in calls if c.name in table and not c.error)


def cited_sources(citations: Iterable[str], domain: Domain) -> frozenset[str]:
    """The sources a list of citations names; unknown citations are left out."""
    return frozenset(s for s in (cited_source(c, domain) for c in citations) if s is not None)
