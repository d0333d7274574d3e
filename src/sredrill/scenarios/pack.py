"""The loaded form of a pack: `Pack` and its `Scenario`s (frozen values; `load_pack` builds them).

A scenario holds its evidence by source (`Scenario.evidence`): each source's records are its domain's models,
which the core never looks into; the domain's tools, lint rules and views do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from sredrill.diagnosis import Category
from sredrill.errors import PackError, did_you_mean
from sredrill.results import GradingMode
from sredrill.scenarios.alert import Alert
from sredrill.scenarios.answer import AnswerKey
from sredrill.scenarios.metadata import ScenarioMetadata
from sredrill.scenarios.vocabulary import Vocabulary

__all__ = ["Pack", "Scenario", "SourceData", "TimeWindow"]


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A half-open time range `[start, end)`."""

    start: datetime
    end: datetime

    def __contains__(self, moment: datetime) -> bool:
        return self.start <= moment < self.end

    @property
    def midpoint(self) -> datetime:
        return self.start + (self.end - self.start) / 2


@dataclass(frozen=True, slots=True)
class SourceData:
    """A loaded evidence source of one scenario (what a domain's source loader returns)."""

    value: object
    """The domain's record model(s) for the source, as its tools and lint rules read them."""
    window: TimeWindow | None = None
    """The time window the data covers, when the source defines one (the alert's default time is its midpoint)."""
    period_s: int | None = None
    """Seconds between points, when the source is a regular series (the temporal clock's step)."""
    attributes: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    """Named views the scenario exposes as attributes (`scenario.<name>`), for the domain's own code."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """One incident snapshot: its metadata, evidence and ground truth.

    Names in `answer` are canonical (aliases resolved, `failure_modes` filled). The ground truth is here for
    grading; what an agent may see goes through `blind_alert` and the evidence toolset.

    A domain's source may expose named views of its records as attributes (`SourceData.attributes`): they read
    as `scenario.<name>` (typed `Any`; the domain's own code knows their types).
    """

    pack: str
    folder: str
    """`NNN-slug`, the scenario's id inside its pack."""
    domain: str
    """The name of its domain (`scenarios.domain.DOMAINS`)."""
    metadata: ScenarioMetadata
    """The domain's `scenario.yml` model."""
    alert: Alert
    answer: AnswerKey
    evidence: Mapping[str, SourceData]
    """Source name -> its loaded data, for each source `available_evidence` lists, in that order."""
    files: Mapping[str, str]
    """File name (`alert.json`, …) -> the path it was read from, relative to the pack's parent."""
    window: TimeWindow | None = None
    """The evidence's time window (the first source's that defines one); None when nothing defines one."""
    period_s: int | None = None
    """The evidence's period (the first source's that defines one)."""
    attributes: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    """Every source's named views, merged (see the class docstring)."""
    grading: GradingMode = GradingMode.SREDRILL
    """How its answer key is graded: `compat` when `answer.yml` sets none of sredrill's keys (`failure_modes`,
    `ruled_out`), i.e. it is in the upstream format; the loader decides it before it fills `failure_modes`."""

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: a domain's named view, or a plain AttributeError.
        try:
            views = object.__getattribute__(self, "attributes")
        except AttributeError:
            views = {}
        if name in views:
            return views[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

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
        """When the alert fired: `startsAt`, else the evidence window's midpoint, else None."""
        if self.alert.starts_at is not None:
            return self.alert.starts_at
        return self.window.midpoint if self.window is not None else None

    def has_source(self, source: str) -> bool:
        """True when `scenario.yml` lists the evidence source as available."""
        return str(source) in self.metadata.available_evidence

    def records(self, source: str) -> object | None:
        """The loaded records of a source, or None when the scenario does not have it."""
        data = self.evidence.get(str(source))
        return data.value if data is not None else None


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
    domain: str = ""
    """The name of the pack's domain (every scenario's)."""

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
