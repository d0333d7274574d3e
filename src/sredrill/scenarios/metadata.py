"""`scenario.yml`: what a scenario is about (difficulty, severity, failure mode, evidence), whatever its domain.

The core declares the keys every domain shares; a domain subclasses `ScenarioMetadata` with its own (the
resource a scenario is about: an RDS instance's engine and class, a Kubernetes workload) and narrows
`available_evidence` to its sources (`scenarios.domain`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

__all__ = ["ScenarioMetadata", "Text"]


def _as_text(value: object) -> object:
    # YAML reads `engine_version: 15` as an int and `schema_version: 1.0` as a float; both mean the text.
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


Text = Annotated[str, BeforeValidator(_as_text)]
"""A string field that also takes what YAML reads as a number (`1.0`, `15`)."""


class ScenarioMetadata(BaseModel):
    """The keys of `scenario.yml` every domain shares.

    Extras policy: `extra="forbid"`. A domain's subclass declares every other key its upstream suite's
    scenario.yml uses, so those files load unmodified, while a typo in one of ours (`scenario_dificulty`) is an
    error with a "did you mean" instead of a silently ignored key.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    schema_version: Text = "1.0"
    scenario_id: str
    """Usually the folder name (`003-storage-full`)."""
    failure_mode: str
    """The scenario's main failure mode; `answer.yml: failure_modes` is the full truth (default: this one)."""
    severity: Literal["info", "warning", "critical"]
    scenario_difficulty: Literal[0, 1, 2, 3, 4] = 1
    """0 a healthy baseline (the upstream Kubernetes suite's), 1 single signal, 2 one confounder, 3 absent or
    indirect evidence, 4 compositional fault."""
    adversarial_signals: list[str] = Field(default_factory=list)
    """Metric names or free sentences describing the trap."""
    available_evidence: Sequence[str] = Field(min_length=1)
    """The evidence sources of the scenario (its domain's source names); a domain narrows the type."""
    depends_on: str | None = None
    """A free flag of the original suite (e.g. `healthy_rca_state`), not a scenario."""
    base: str | None = None
    """A sibling scenario folder this one extends (shallow merge; missing files fall back to it)."""

    if TYPE_CHECKING:
        # A domain's keys (its subclass's fields) read through the shared type; pydantic serves them at run time.
        def __getattr__(self, name: str) -> Any: ...
