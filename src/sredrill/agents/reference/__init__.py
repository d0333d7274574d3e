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

from dataclasses import dataclass

from sredrill.agents.protocol import Agent, AgentReply, Task
from sredrill.agents.reference.agent import ReferenceAgent
from sredrill.agents.reference.incident_agent import is_incident_task, play_incident
from sredrill.agents.spec import AgentSpec, ConnectOptions, resolve_agent
from sredrill.errors import AgentError
from sredrill.scenarios.domain import domain_of_tools, every_domain
from sredrill.trajectory import Recorder

__all__ = ["DomainReference", "ReferenceAgent", "connect", "connect_rds"]


@dataclass(frozen=True, slots=True)
class DomainReference:
    """`--agent reference`: the reference agent of each task's domain (DESIGN §4, §11.1)."""

    spec: str = "reference"

    def agent_for(self, task: Task) -> Agent:
        """The reference agent of the task's domain.

        Raises:
            AgentError: the domain names this dispatcher as its reference agent (it would never end).
        """
        # A task offering no domain's own tool (nothing to investigate) goes to the first registered domain.
        domain = domain_of_tools(t.name for t in task.tools) or every_domain()[0]
        if domain.reference_agent == self.spec or domain.reference_agent == "reference":
            raise AgentError(
                f"the {domain.name} domain names {domain.reference_agent!r} as its reference agent: name the "
                "domain's own agent (an entry of agents.spec.CONNECTORS) in its Domain.reference_agent"
            )
        return resolve_agent(domain.reference_agent)

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        """Play an incident episode with the incident policy; otherwise run the task's domain's agent."""
        if is_incident_task(task):
            return await play_incident(task, recorder)
        return await self.agent_for(task).run(task, recorder)


def connect(spec: AgentSpec, options: ConnectOptions) -> DomainReference:
    """The `reference` connector: the reference agent of each task's domain."""
    return DomainReference(spec=spec.text)


def connect_rds(spec: AgentSpec, options: ConnectOptions) -> ReferenceAgent:
    """The `rds-reference` connector: the RDS reference agent; it needs no target and no options."""
    return ReferenceAgent(spec=spec.text)
