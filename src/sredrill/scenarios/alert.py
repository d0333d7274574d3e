"""`alert.json`: the alert payload that opens an incident (a foreign format)."""

from __future__ import annotations

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

__all__ = ["Alert"]


class Alert(BaseModel):
    """The alert as the monitoring system sent it.

    Foreign format: real payloads (Grafana, Alertmanager, CloudWatch via SNS) carry many more keys, and the
    original suite's annotations vary between files. `extra="allow"` keeps them, because the whole payload
    is what an agent would see in production; blind mode (`blind_alert`) scrubs every key and value,
    including these extras, before an agent sees any of it.
    """

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True, use_attribute_docstrings=True)

    title: str
    state: str
    """`alerting`, `normal`, `ok`, `resolved`, … as the source system spells it."""
    alert_source: str
    common_labels: dict[str, str] = Field(alias="commonLabels", default_factory=dict)
    common_annotations: dict[str, str] = Field(alias="commonAnnotations", default_factory=dict)
    starts_at: AwareDatetime | None = Field(alias="startsAt", default=None)
    """When the alert fired; None = the metric window's midpoint (see `Scenario.alert_started_at`)."""
