"""`--agent reference`: the dispatcher that runs each task's domain's reference agent (see the package docstring)."""

from __future__ import annotations

from dataclasses import dataclass

from sredrill.agents.protocol import Agent, AgentReply, Task
from sredrill.agents.reference.agent import ReferenceAgent
from sredrill.agents.reference.incident_agent import is_incident_task, play_incident
from sredrill.agents.spec import AgentSpec, ConnectOptions, resolve_agent
from sredrill.errors import AgentError
from sredrill.scenarios.domain import domain_of_tools, every_domain
from sredrill.trajectory import Recorder

__all__ = ["DomainReference", "connect", "connect_rds"]


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
