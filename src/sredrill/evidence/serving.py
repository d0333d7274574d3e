"""How a domain serves its tools over one scenario: the `DomainServer` protocol and what a tool call answers.

A domain declares its tools (`scenarios.domain.ToolDecl`) and names the class that answers them
(`Domain.server`, a `"module:attr"` string imported on first use, so this layer never imports a domain). The
toolset (`evidence.toolset`) validates the arguments against the declared model, keeps the clock and the audit
log, answers `get_alert` and `submit_diagnosis` itself, and hands every other call to the server.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import Any, Protocol

from pydantic import BaseModel, JsonValue

from sredrill.evidence.items import ServedItem
from sredrill.scenarios import Scenario
from sredrill.scenarios.domain import Domain

__all__ = ["CallContext", "DomainServer", "ServerFactory", "ToolAnswer", "server_factory"]

DEFAULT_PERIOD_S = 60
"""The clock step when a scenario's evidence has no period of its own."""


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """A tool's result plus what the audit log records about it."""

    result: dict[str, JsonValue]
    returned_metrics: tuple[str, ...] = ()
    """The names `required_queries` is checked against: the series a name query returned, or, for a domain whose
    answer keys require tools rather than metrics, the tool's own and legacy names."""
    n_points: int = 0
    n_events: int = 0
    items: tuple[ServedItem, ...] = ()
    """The evidence items the result names (each with an `id` in the result), with the points it served."""


@dataclass(frozen=True, slots=True)
class CallContext:
    """What one call may see: whether a name query filters (`selective`, `temporal`) and the temporal clock."""

    filters_by_name: bool
    clock: datetime | None


class DomainServer(Protocol):
    """One scenario's evidence prepared for a domain's tools; shared by every toolset over the scenario.

    Nothing on it changes after it is built: per-run state (the clock, the audit log) lives on the toolset.
    """

    @property
    def started_at(self) -> datetime | None:
        """When the alert fired: the temporal clock's start (None when nothing is dated)."""
        ...

    @property
    def step(self) -> timedelta:
        """One period of the evidence (the temporal clock no longer steps by it: only `wait` moves the clock)."""
        ...

    def answer(self, tool: str, args: Any, context: CallContext) -> ToolAnswer:
        """Answer one call of one of the domain's tools, its arguments validated against the declared model."""
        ...

    def items(self) -> tuple[ServedItem, ...]:
        """Every evidence item of the scenario with all its points, as the `full` backend would serve it
        (what answer-key selectors are checked against; never served to an agent as such)."""
        ...


class ServerFactory(Protocol):
    """`Domain.server` points at one: it prepares a scenario's evidence."""

    def __call__(self, scenario: Scenario, /) -> DomainServer: ...


@cache
def server_factory(domain: Domain) -> ServerFactory:
    """The domain's server class, imported on first use."""
    module, attr = domain.server.split(":")
    factory: ServerFactory = getattr(importlib.import_module(module), attr)
    return factory


def declared_arguments(domain: Domain, tool: str) -> type[BaseModel] | None:
    """The argument model a domain declares for a tool, or None for an unknown tool."""
    decl = domain.tool(tool)
    return decl.arguments if decl is not None else None
