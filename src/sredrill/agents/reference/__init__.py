"""The reference agents: `--agent reference` runs the reference agent of the task's domain.

Each domain names its own reference agent (`Domain.reference_agent`, an agent spec): this package's
`ReferenceAgent` for RDS (`rds-reference`), `agents.k8s_reference` for Kubernetes (`k8s-reference`).
`reference` picks, per task, the domain whose tools the task offers (`scenarios.domain.domain_of_tools`), and
runs that domain's agent; an incident episode (its tools are the environment's actions) is played by the
incident policy. Results keep saying `reference`: the spec is the one the user gave.

The RDS agent: plan → investigate → diagnose through the RCA tools only: it profiles every metric series,
places the RDS events relative to the alert, reads Performance Insights' waits and top SQL, assesses every
failure mode of the vocabulary against that evidence (root cause, symptom, side effect, recovered, ruled out,
or not assessable), and writes a diagnosis whose claims cite their sources. It knows RDS and PostgreSQL, not
the scenarios: `docs/reference-agent.md` describes how it reasons and where it stops.

Examples:
    >>> from sredrill.agents import resolve_agent
    >>> agent = resolve_agent("reference")
    >>> agent.spec
    'reference'
"""

from __future__ import annotations

from sredrill.agents.reference.agent import ReferenceAgent
from sredrill.agents.reference.dispatch import DomainReference, connect, connect_rds

__all__ = ["DomainReference", "ReferenceAgent", "connect", "connect_rds"]
