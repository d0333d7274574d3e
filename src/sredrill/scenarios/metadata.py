"""`scenario.yml`: what a scenario is about (instance, engine, difficulty, adversarial signals)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

__all__ = ["EvidenceSource", "ScenarioMetadata"]


class EvidenceSource(StrEnum):
    """The evidence files of a scenario, by file stem (DESIGN §3)."""

    CLOUDWATCH_METRICS = "aws_cloudwatch_metrics"
    RDS_EVENTS = "aws_rds_events"
    PERFORMANCE_INSIGHTS = "aws_performance_insights"


def _as_text(value: object) -> object:
    # YAML reads `engine_version: 15` as an int and `schema_version: 1.0` as a float; both mean the text.
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


_Text = Annotated[str, BeforeValidator(_as_text)]


class ScenarioMetadata(BaseModel):
    """The keys of `scenario.yml`.

    Extras policy: `extra="forbid"`. The model declares every key the original suite's scenario.yml uses
    (Tracer-Cloud/opensre `tests/synthetic/rds_postgres`, commit db65347: schema_version … depends_on,
    base), so those files load unmodified, while a typo in one of ours (`scenario_dificulty`) is an error
    with a "did you mean" instead of a silently ignored key.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    schema_version: _Text = "1.0"
    scenario_id: str
    """Usually the folder name (`003-storage-full`)."""
    engine: Literal["postgres", "mysql", "aurora-postgres", "aurora-mysql", "mariadb"]
    engine_version: _Text
    instance_class: str
    region: str
    db_instance_identifier: str
    db_cluster: str = ""
    failure_mode: str
    """The scenario's main failure mode; `answer.yml: failure_modes` is the full truth (default: this one)."""
    severity: Literal["info", "warning", "critical"]
    scenario_difficulty: Literal[1, 2, 3, 4] = 1
    """1 single signal, 2 one confounder, 3 absent or indirect evidence, 4 compositional fault."""
    adversarial_signals: list[str] = Field(default_factory=list)
    """Metric names or free sentences describing the trap."""
    available_evidence: list[EvidenceSource] = Field(min_length=1)
    depends_on: str | None = None
    """A free flag of the original suite (e.g. `healthy_rca_state`), not a scenario."""
    base: str | None = None
    """A sibling scenario folder this one extends (shallow merge; missing files fall back to it)."""
