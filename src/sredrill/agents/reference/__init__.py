"""The reference agent (`--agent reference`): an offline, deterministic, evidence-driven RCA agent.

Plan → investigate → diagnose through the RCA tools only: it profiles every metric series, places the RDS
events relative to the alert, reads Performance Insights' waits and top SQL, assesses every failure mode of
the vocabulary against that evidence (root cause, symptom, side effect, recovered, ruled out, or not
assessable), and writes a diagnosis whose claims cite their sources. It knows RDS and PostgreSQL, not the
scenarios: `docs/reference-agent.md` describes how it reasons and where it stops.

Examples:
    >>> from sredrill.agents import resolve_agent
    >>> agent = resolve_agent("reference")
    >>> agent.spec
    'reference'
"""

from __future__ import annotations

from sredrill.agents.reference.agent import ReferenceAgent, connect

__all__ = ["ReferenceAgent", "connect"]
