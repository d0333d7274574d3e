"""The evidence backends: how much of a scenario a metrics query may see (DESIGN §3)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["BackendMode"]


class BackendMode(StrEnum):
    """Which backend serves a run's evidence.

    - `full`: every metrics query returns every series of the scenario, whatever name was asked (the
      original suite's FixtureGrafanaBackend; Axis 1).
    - `selective`: a metrics query returns only the series whose metric name contains the query,
      case-insensitively (the original suite's SelectiveGrafanaBackend with its filtering switched on; Axis 2).
    - `temporal`: `selective`, plus a clock that starts when the alert fired and moves only when the agent
      calls `wait(minutes)` (`evidence.clock`); nothing dated after the clock is returned.
    """

    FULL = "full"
    SELECTIVE = "selective"
    TEMPORAL = "temporal"

    @property
    def filters_by_name(self) -> bool:
        """True when a metrics query returns only the series whose name matches it."""
        return self is not BackendMode.FULL

    @property
    def has_clock(self) -> bool:
        """True when evidence is revealed as time passes, which only `wait` makes it do."""
        return self is BackendMode.TEMPORAL
