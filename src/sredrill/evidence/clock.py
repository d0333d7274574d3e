"""The temporal backend's clock and its one control, the `wait` tool (issue 18, point 4).

Under `temporal` the clock starts when the alert fired and moves only when the agent calls `wait(minutes)`: the
data after the alert arrives because the agent decided to wait for it, never because it made calls. A wait is
bounded by the end of the scenario's data (the clock stops there), and it costs in the efficiency score
(`grading.trajectory_score`). The tool is offered only under `temporal` (`RcaToolset.specs`): the other backends
have no clock, so calling it there is an `unknown_tool` error that says why.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final

from pydantic import Field, JsonValue, field_validator

from sredrill.evidence.arguments import ToolArgs, time_text
from sredrill.trajectory import ToolSpec, strict_schema

__all__ = ["WAIT_MAX_MINUTES", "WAIT_TOOL", "WaitArgs", "advance", "wait_spec"]

WAIT_TOOL: Final = "wait"
WAIT_MAX_MINUTES: Final = 1440
"""The longest one wait may ask for (a day); the clock stops at the end of the data anyway."""

_DESCRIPTION = (
    "Let time pass: the clock moves forward by minutes (1 to 1440), and the evidence dated up to the new time "
    "becomes visible to the other tools. Nothing else moves the clock: the evidence ends at the current time "
    "(it starts at the moment the alert fired). The clock stops at the end of the scenario's data. Waiting "
    "costs in the efficiency score: wait only when what happens next decides the diagnosis."
)


class WaitArgs(ToolArgs):
    """Arguments of `wait`."""

    minutes: int = Field(json_schema_extra={"minimum": 1, "maximum": WAIT_MAX_MINUTES})
    """How many minutes to let pass (a whole number, 1 to 1440)."""

    @field_validator("minutes")
    @classmethod
    def _bounded(cls, minutes: int) -> int:
        if not 1 <= minutes <= WAIT_MAX_MINUTES:
            raise ValueError(
                f"must be between 1 and {WAIT_MAX_MINUTES} minutes, got {minutes}: the clock only moves forward, "
                "and it stops at the end of the data anyway"
            )
        return minutes


def wait_spec() -> ToolSpec:
    """The `wait` tool as agents see it (offered under `temporal` only)."""
    schema = strict_schema(WaitArgs.model_json_schema())
    schema.pop("description", None)
    return ToolSpec(name=WAIT_TOOL, description=_DESCRIPTION, input_schema=schema)


def advance(clock: datetime, minutes: int, end: datetime | None) -> tuple[datetime, dict[str, JsonValue]]:
    """The clock after waiting `minutes` from `clock`, stopped at `end`, and what `wait` answers.

    Returns:
        The new clock and `{"clock", "waited_minutes", "data_ends_at"}`, plus `"note"` when the wait was cut
        short by the end of the data.
    """
    wanted = clock + timedelta(minutes=minutes)
    stop = wanted if end is None or wanted <= end else max(clock, end)
    waited = (stop - clock).total_seconds() / 60
    answer: dict[str, JsonValue] = {
        "clock": time_text(stop),
        "waited_minutes": round(waited, 3),
        "data_ends_at": time_text(end) if end is not None else None,
    }
    if stop < wanted:
        answer["note"] = (
            f"the data ends at {time_text(stop)}: the clock stopped there after {waited:.4g} of the {minutes} "
            "minutes asked; waiting longer shows nothing new"
        )
    return stop, answer
