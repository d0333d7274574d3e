"""The loaded form of a pack: `Pack` and its `Scenario`s (frozen values; `load_pack` builds them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sredrill.diagnosis import Category
from sredrill.errors import PackError, did_you_mean
from sredrill.scenarios.alert import Alert
from sredrill.scenarios.answer import AnswerKey
from sredrill.scenarios.metadata import EvidenceSource, ScenarioMetadata
from sredrill.scenarios.telemetry import MetricEnvelope, MetricSeries, PerformanceInsights, RdsEvent
from sredrill.scenarios.vocabulary import Vocabulary

__all__ = ["Pack", "Scenario", "SeriesLocation", "TimeWindow"]


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A half-open time range `[start, end)`."""

    start: datetime
    end: datetime

    def __contains__(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


@dataclass(frozen=True, slots=True)
class SeriesLocation:
    """Where a metric series was read from: the file (relative to the pack's parent) and the field prefix."""

    path: str
    field: str
    """`metric_data_results[3]` in a consolidated file, "" in a split `aws_cloudwatch_metrics_<Metric>.json`."""

    def at(self, name: str) -> str:
        return f"{self.field}.{name}" if self.field else name


@dataclass(frozen=True, slots=True)
class Scenario:
    """One incident snapshot: its metadata, evidence and ground truth.

    Names in `answer` are canonical (aliases resolved, `failure_modes` filled). The ground truth is here for
    grading; what an agent may see goes through `blind_alert` and the evidence toolset.
    """

    pack: str
    folder: str
    """`NNN-slug`, the scenario's id inside its pack."""
    metadata: ScenarioMetadata
    alert: Alert
    answer: AnswerKey
    metrics: tuple[MetricSeries, ...]
    """Every CloudWatch series, in file order; empty when the scenario has no metrics file."""
    metric_window: MetricEnvelope | None
    """Namespace, period and window of the metrics; None when the scenario has no metrics file."""
    events: tuple[RdsEvent, ...]
    """RDS events in file order; empty when the scenario has none (see `has_source`)."""
    event_window: TimeWindow | None
    """The window the events were requested for, when the events file says so."""
    performance_insights: PerformanceInsights | None
    files: Mapping[str, str]
    """File name (`alert.json`, …) -> the path it was read from, relative to the pack's parent."""
    series_locations: tuple[SeriesLocation, ...]
    """Where each item of `metrics` was read from (same order)."""

    @property
    def id(self) -> str:
        """The folder name: how a scenario is named on the command line."""
        return self.folder

    @property
    def qualified_id(self) -> str:
        """`pack/folder`."""
        return f"{self.pack}/{self.folder}"

    @property
    def slug(self) -> str:
        """The folder name without its number (`storage-full`)."""
        return self.folder[4:]

    @property
    def difficulty(self) -> int:
        return self.metadata.scenario_difficulty

    @property
    def category(self) -> Category:
        return self.answer.root_cause_category

    @property
    def failure_modes(self) -> tuple[str, ...]:
        """The true failure modes, canonical and sorted."""
        return self.answer.expected_failure_modes

    @property
    def is_axis2(self) -> bool:
        """True when the answer defines Axis 2 checks (ruling out, required queries)."""
        return self.answer.is_axis2

    @property
    def alert_started_at(self) -> datetime | None:
        """When the alert fired: `startsAt`, else the metric window's midpoint, else None."""
        if self.alert.starts_at is not None:
            return self.alert.starts_at
        return self.metric_window.midpoint if self.metric_window is not None else None

    @property
    def metric_names(self) -> tuple[str, ...]:
        """The distinct metric names, sorted."""
        return tuple(sorted({s.metric_name for s in self.metrics}))

    def has_source(self, source: EvidenceSource | str) -> bool:
        """True when `scenario.yml` lists the evidence source as available."""
        return EvidenceSource(source) in self.metadata.available_evidence


@dataclass(frozen=True, slots=True)
class Pack:
    """A loaded pack: the scenarios that loaded, and one error per scenario that did not."""

    name: str
    root: Path
    vocabulary: Vocabulary
    scenarios: tuple[Scenario, ...]
    broken: Mapping[str, PackError]
    """Folder name -> why that scenario could not load (it is reported `errored`; the rest still run)."""
    builtin: bool = False

    @property
    def errors(self) -> tuple[PackError, ...]:
        """One error per broken scenario, in folder order."""
        return tuple(self.broken[f] for f in sorted(self.broken))

    @property
    def folders(self) -> tuple[str, ...]:
        """Every scenario folder of the pack, loaded or broken, sorted."""
        return tuple(sorted({*(s.folder for s in self.scenarios), *self.broken}))

    def scenario(self, scenario_id: str) -> Scenario:
        """The scenario named by its folder (`003-storage-full`) or `pack/folder`.

        Raises:
            PackError: no such scenario (with "did you mean"), or the scenario is broken (its own error).
        """
        folder = scenario_id.removeprefix(f"{self.name}/")
        if folder in self.broken:
            raise self.broken[folder]
        for s in self.scenarios:
            if s.folder == folder:
                return s
        hint = did_you_mean(folder, self.folders)
        raise PackError(
            f"no scenario {scenario_id!r} in pack {self.name!r}",
            path=self.name,
            allowed=self.folders,
            hint=(hint + "\n  " if hint else "") + f"list them with: sredrill scenarios list --pack {self.name}",
        )
