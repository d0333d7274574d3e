"""Loading a pack: `load_pack(path_or_name)` reads and validates every scenario folder of a pack.

A pack is a folder of `NNN-slug` scenario folders (three digits, sorted); other entries (`asset.yml`,
`shared/`, a README) are skipped. A broken scenario does not stop the pack: it lands in `Pack.broken` with a
`PackError` naming file, field and fix, and the other scenarios load (STYLE #16: the per-scenario boundary).
A pack is self-contained: a file that is (or sits in a folder that is) a symlink leading out of the pack is
an error, so a pack cannot make sredrill read, and serve to an agent, any file of the machine.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from sredrill.diagnosis import Category
from sredrill.errors import PackError, did_you_mean
from sredrill.scenarios.alert import Alert
from sredrill.scenarios.answer import AnswerKey
from sredrill.scenarios.metadata import EvidenceSource, ScenarioMetadata
from sredrill.scenarios.pack import Pack, Scenario, SeriesLocation, TimeWindow
from sredrill.scenarios.pack_file import PackConfig
from sredrill.scenarios.reading import LINT_HINT, read_document, read_model, validate_model
from sredrill.scenarios.telemetry import (
    CloudWatchMetrics,
    MetricEnvelope,
    MetricSeries,
    PerformanceInsights,
    RdsEvent,
    RdsEvents,
)
from sredrill.scenarios.vocabulary import Vocabulary, normalize_name
from sredrill.text import scrub

__all__ = ["BUILTIN_PACKS_DIR", "builtin_pack_names", "load_pack"]

BUILTIN_PACKS_DIR = Path(__file__).resolve().parent / "packs"
SCENARIO_FOLDER = re.compile(r"^\d{3}-[A-Za-z0-9][A-Za-z0-9._-]*$")
_METRICS = "aws_cloudwatch_metrics.json"
_ENVELOPE = "aws_cloudwatch_metrics_envelope.json"
_CATEGORIES = frozenset(c.value for c in Category)


def builtin_pack_names() -> tuple[str, ...]:
    """The packs shipped as package data (`sredrill/scenarios/packs/<pack>/`), sorted."""
    if not BUILTIN_PACKS_DIR.is_dir():
        return ()
    return tuple(sorted(p.name for p in BUILTIN_PACKS_DIR.iterdir() if p.is_dir() and _has_scenarios(p)))


def load_pack(path_or_name: str | os.PathLike[str]) -> Pack:
    """Load and validate a pack: a built-in pack name first (`rds_postgres`), else a folder path.

    Args:
        path_or_name: a built-in pack name or the path of a pack folder.

    Returns:
        The pack: the scenarios that loaded, and one `PackError` per scenario that did not.

    Raises:
        PackError: no such pack, the folder holds no scenario folder, or `pack.yml` is malformed.
    """
    root, builtin = _locate(path_or_name)
    name = scrub(root.name)[0]  # a folder name of undecodable bytes must still print
    vocabulary = Vocabulary.builtin()
    if (root / "pack.yml").is_file():
        rel = f"{name}/pack.yml"
        vocabulary = read_model(PackConfig, _inside(root, root / "pack.yml", rel), rel).vocabulary(source=rel)
    folders = sorted(p.name for p in root.iterdir() if p.is_dir() and SCENARIO_FOLDER.match(p.name))
    if not folders:
        raise PackError(
            "no scenario folders in this pack",
            path=name,
            hint="a pack holds folders named NNN-slug (e.g. 001-replication-lag), see docs/scenarios.md",
        )
    scenarios: list[Scenario] = []
    broken: dict[str, PackError] = {}
    for folder in folders:
        reader = _ScenarioReader(root, name, folder, tuple(folders), vocabulary)
        try:
            scenarios.append(reader.load())
        except PackError as exc:
            broken[folder] = exc
        except Exception as exc:  # the per-scenario boundary (STYLE #16): keep the message, load the rest
            broken[folder] = PackError(
                f"could not load the scenario: {type(exc).__name__}: {exc}",
                path=f"{name}/{folder}",
                hint="this is likely a bug in sredrill: please report it with this scenario folder",
            )
    return Pack(
        name=name,
        root=root,
        vocabulary=vocabulary,
        scenarios=tuple(scenarios),
        broken=MappingProxyType(broken),
        builtin=builtin,
    )


def _inside(root: Path, path: Path, rel: str) -> Path:
    """`path`, after checking that it does not lead out of the pack `root` (resolved) through a symlink.

    Raises:
        PackError: it resolves outside `root`, or cannot be resolved (a symlink loop).
    """
    if _plainly_inside(root, path):
        return path
    try:
        real = path.resolve(strict=True)
    except FileNotFoundError:
        return path  # reported as a missing file by whoever reads it
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop (Python 3.11)
        raise PackError(
            f"cannot resolve the file: {exc}", path=rel, hint=f"replace the symlink with the file, {LINT_HINT}"
        ) from exc
    if not real.is_relative_to(root):
        raise PackError(
            f"the file is a symlink that leads out of the pack (to {scrub(str(real))[0]})",
            path=rel,
            hint="copy the file into the pack: a pack must be self-contained, and a link out of it would let "
            f"a pack read any file of the machine, {LINT_HINT}",
        )
    return path


def _plainly_inside(root: Path, path: Path) -> bool:
    """True when `path` is spelled under `root` without `..` and no part of it below `root` is a symlink.

    One `lstat` per level (two for a scenario's file) instead of resolving the whole path: loading a pack
    checks every file it reads. Anything else takes the full check.
    """
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    if ".." in parts:
        return False
    node = path
    for _ in parts:
        if node.is_symlink():
            return False
        node = node.parent
    return True


def _has_scenarios(folder: Path) -> bool:
    return any(p.is_dir() and SCENARIO_FOLDER.match(p.name) for p in folder.iterdir())


def _locate(path_or_name: str | os.PathLike[str]) -> tuple[Path, bool]:
    builtins = builtin_pack_names()
    text = os.fspath(path_or_name)
    if text in builtins:
        return BUILTIN_PACKS_DIR / text, True
    path = Path(text).expanduser()
    if path.is_dir():
        return path.resolve(), False
    if path.exists():
        raise PackError("is a file, not a pack folder", path=text, hint="pass the folder that holds NNN-slug folders")
    hint = did_you_mean(text, builtins)
    raise PackError(
        f"no pack {text!r}: not a built-in pack name and no such folder",
        path=text,
        allowed=builtins,
        hint=(hint + "\n  " if hint else "") + "pass a built-in pack name or the path of a pack folder",
    )


@dataclass(frozen=True, slots=True)
class _ScenarioReader:
    """Reads one scenario folder, with `base:` fallback, into a `Scenario`."""

    root: Path
    pack: str
    folder: str
    siblings: tuple[str, ...]
    vocabulary: Vocabulary

    def rel(self, folder: str, file: str) -> str:
        return f"{self.pack}/{folder}/{file}"

    def path(self, folder: str, file: str) -> Path:
        """The file's path, checked to stay inside the pack (see `_inside`)."""
        return _inside(self.root, self.root / folder / file, self.rel(folder, file))

    def load(self) -> Scenario:
        meta_rel = self.rel(self.folder, "scenario.yml")
        raw = read_document(self.path(self.folder, "scenario.yml"), meta_rel)
        base = self._base(raw, meta_rel)
        merged = (
            {**read_document(self.path(base, "scenario.yml"), self.rel(base, "scenario.yml")), **raw} if base else raw
        )
        # The base's own `base` was checked by `_base`; the merged metadata keeps the child's.
        metadata = validate_model(ScenarioMetadata, merged, meta_rel)
        folders = (self.folder, base) if base else (self.folder,)
        files: dict[str, str] = {}

        def find(file: str) -> tuple[Path, str]:
            for folder in folders:
                if (self.root / folder / file).is_file():
                    files[file] = self.rel(folder, file)
                    return self.path(folder, file), files[file]
            source = file.removesuffix(".json")
            listed = source in {e.value for e in EvidenceSource}
            raise PackError(
                f"file is missing, but scenario.yml lists {source} in available_evidence"
                if listed
                else "file is missing",
                path=self.rel(self.folder, file),
                hint=f"add {file}"
                + (f" here or in the base folder {base}" if base else "")
                + (f", or drop {source} from available_evidence" if listed else "")
                + f", {LINT_HINT}",
            )

        alert = read_model(Alert, *find("alert.json"))
        answer = self._resolve_answer(read_model(AnswerKey, *find("answer.yml")), metadata, files, meta_rel)
        available = set(metadata.available_evidence)
        metrics: tuple[MetricSeries, ...] = ()
        window: MetricEnvelope | None = None
        locations: tuple[SeriesLocation, ...] = ()
        if EvidenceSource.CLOUDWATCH_METRICS in available:
            window, metrics, locations = self._metrics(folders, files)
        events: tuple[RdsEvent, ...] = ()
        event_window: TimeWindow | None = None
        if EvidenceSource.RDS_EVENTS in available:
            rds = read_model(RdsEvents, *find("aws_rds_events.json"))
            events = tuple(rds.events)
            if rds.start_time is not None and rds.end_time is not None:
                event_window = TimeWindow(rds.start_time, rds.end_time)
        insights = None
        if EvidenceSource.PERFORMANCE_INSIGHTS in available:
            insights = read_model(PerformanceInsights, *find("aws_performance_insights.json"))
        return Scenario(
            pack=self.pack,
            folder=self.folder,
            metadata=metadata,
            alert=alert,
            answer=answer,
            metrics=metrics,
            metric_window=window,
            events=events,
            event_window=event_window,
            performance_insights=insights,
            files=MappingProxyType(files),
            series_locations=locations,
        )

    def _base(self, raw: dict[str, object], meta_rel: str) -> str | None:
        base = raw.get("base")
        if base is None:
            return None
        if not isinstance(base, str) or base not in self.siblings or base == self.folder:
            others = [s for s in self.siblings if s != self.folder]
            hint = did_you_mean(str(base), others)
            raise PackError(
                f"base {base!r} is not another scenario folder of this pack",
                path=meta_rel,
                field="base",
                allowed=others,
                hint=(hint + "\n  " if hint else "") + f"name a sibling NNN-slug folder, {LINT_HINT}",
            )
        base_raw = read_document(self.path(base, "scenario.yml"), self.rel(base, "scenario.yml"))
        if base_raw.get("base") == self.folder:
            raise PackError(
                f"base loop: {self.folder} extends {base}, which extends {self.folder}",
                path=meta_rel,
                field="base",
                hint=f"drop base from one of the two scenario.yml files (a base may not have a base), {LINT_HINT}",
            )
        if base_raw.get("base") is not None:
            raise PackError(
                f"chained base: {self.folder} extends {base}, which extends {base_raw['base']!r}; "
                "only one level of base is allowed",
                path=meta_rel,
                field="base",
                hint=f"point base at a scenario without a base (e.g. {base_raw['base']!r}), {LINT_HINT}",
            )
        return base

    def _metrics(
        self, folders: tuple[str, ...], files: dict[str, str]
    ) -> tuple[MetricEnvelope, tuple[MetricSeries, ...], tuple[SeriesLocation, ...]]:
        # Consolidated file first, then the split variant; the scenario's own folder before its base.
        for folder in folders:
            here = self.root / folder
            if (here / _METRICS).is_file():
                rel = files[_METRICS] = self.rel(folder, _METRICS)
                data = read_model(CloudWatchMetrics, self.path(folder, _METRICS), rel)
                envelope = MetricEnvelope.model_validate({k: getattr(data, k) for k in MetricEnvelope.model_fields})
                locs = tuple(
                    SeriesLocation(rel, f"metric_data_results[{i}]") for i in range(len(data.metric_data_results))
                )
                return envelope, tuple(data.metric_data_results), locs
            parts = sorted(p for p in here.glob("aws_cloudwatch_metrics_*.json") if p.name != _ENVELOPE)
            if parts or (here / _ENVELOPE).is_file():
                env_rel = files[_ENVELOPE] = self.rel(folder, _ENVELOPE)
                envelope = read_model(MetricEnvelope, self.path(folder, _ENVELOPE), env_rel)
                if not parts:
                    raise PackError(
                        "the split metrics envelope has no aws_cloudwatch_metrics_<Metric>.json beside it",
                        path=env_rel,
                        hint=f"add one file per series, or use a single {_METRICS}, {LINT_HINT}",
                    )
                series: list[MetricSeries] = []
                split_locs: list[SeriesLocation] = []
                for p in parts:
                    name, undecodable = scrub(p.name)
                    if undecodable:
                        raise PackError(
                            "the file name is not valid UTF-8",
                            path=self.rel(folder, name),
                            hint=f"rename the file (aws_cloudwatch_metrics_<Metric>.json), {LINT_HINT}",
                        )
                    rel = files[p.name] = self.rel(folder, p.name)
                    series.append(read_model(MetricSeries, self.path(folder, p.name), rel))
                    split_locs.append(SeriesLocation(rel, ""))
                return envelope, tuple(series), tuple(split_locs)
        raise PackError(
            "file is missing",
            path=self.rel(self.folder, _METRICS),
            hint=f"add {_METRICS} (or the split {_ENVELOPE} + aws_cloudwatch_metrics_<Metric>.json files), "
            "or drop aws_cloudwatch_metrics from available_evidence in scenario.yml",
        )

    def _resolve_answer(
        self, answer: AnswerKey, metadata: ScenarioMetadata, files: dict[str, str], meta_rel: str
    ) -> AnswerKey:
        path = files["answer.yml"]
        v = self.vocabulary
        main = v.resolve_all([metadata.failure_mode], path=meta_rel, field="failure_mode")
        modes = v.resolve_all(answer.failure_modes, path=path, field="failure_modes") if answer.failure_modes else main
        return answer.model_copy(
            update={
                "failure_modes": list(modes),
                "forbidden_categories": self._modes_or_categories(
                    answer.forbidden_categories, path, "forbidden_categories"
                ),
                "ruled_out": self._modes_or_categories(answer.ruled_out, path, "ruled_out"),
            }
        )

    def _modes_or_categories(self, names: list[str], path: str, field: str) -> list[str]:
        out: list[str] = []
        for i, name in enumerate(names):
            n = normalize_name(name)
            if n in _CATEGORIES:
                out.append(n)
                continue
            try:
                out.extend(self.vocabulary.resolve_all([name]))
            except PackError as exc:
                known = [*_CATEGORIES, *self.vocabulary.identifiers()]
                hint = did_you_mean(n, known)
                raise PackError(
                    f"{name!r} is neither a category nor a known failure mode",
                    path=path,
                    field=f"{field}[{i}]",
                    allowed=sorted({*_CATEGORIES, *self.vocabulary.names}),
                    hint=(hint + "\n  " if hint else "") + f"fix the value or add it to pack.yml, {LINT_HINT}",
                ) from exc
        return list(dict.fromkeys(out))
