"""A toolset of fixed answers, for tests of agents and connectors that do not need a scenario."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import JsonValue

from sredrill.trajectory import ToolError, ToolSpec


class StaticToolset:
    """Each tool returns its fixed value; an unknown tool raises `ToolError("unknown_tool", …)`."""

    def __init__(self, answers: Mapping[str, JsonValue]) -> None:
        self.answers = dict(answers)

    def specs(self) -> list[ToolSpec]:
        return [ToolSpec(name=name, description=f"returns a fixed {name}") for name in self.answers]

    async def call(self, name: str, args: dict[str, Any]) -> JsonValue:
        if name not in self.answers:
            raise ToolError("unknown_tool", f"no tool named {name!r}; tools: {', '.join(self.answers)}")
        return self.answers[name]
