"""Loading a pack: `load_pack(path_or_name)` reads and validates every scenario folder of a pack.

A pack is a folder of `NNN-slug` scenario folders (three digits or more, in the order of their numbers); other
entries (`asset.yml`, `shared/`, a README) are skipped. A broken scenario does not stop the pack: it lands in
`Pack.broken` with a `PackError` naming file, field and fix, and the other scenarios load (STYLE #16: the
per-scenario boundary).
A pack is self-contained: a file that is (or sits in a folder that is) a symlink leading out of the pack is
an error, so a pack cannot make sredrill read, and serve to an agent, any file of the machine.

The pack's domain (`pack.yml: domain`, else recognised by the scenario folders' files) says which
`scenario.yml` model applies and how each evidence source's files are read (`scenarios.domain`); this module
reads the files every domain shares (`scenario.yml`, `alert.json`, `answer.yml`) and the folders' `base:`.

It also records how each scenario is graded (`Scenario.grading`): an `answer.yml` that sets none of sredrill's
keys (`failure_modes`, `ruled_out`) is in the upstream format, graded in compatibility mode (`grading.compat`).
"""

from __future__ import annotations

import fnmatch
import functools
import importlib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TypeVar

from pydantic import BaseModel

from sredrill.diagnosis import Category
from sredrill.errors import PackError, did_you_mean
from sredrill.results import GradingMode
from sredrill.scenarios.alert import Alert
from sredrill.scenarios.answer import AnswerKey, ItemSelector
from sredrill.scenarios.domain import DOMAINS, Domain, domain_names, get_domain, recognise_domain
from sredrill.scenarios.metadata import ScenarioMetadata
from sredrill.scenarios.pack import Pack, Scenario, SourceData, TimeWindow
from sredrill.scenarios.pack_file import PackConfig
from sredrill.scenarios.reading import LINT_HINT, parse_document, read_document, read_model, validate_model
from sredrill.scenarios.vocabulary import Vocabulary, normalize_name
from sredrill.text import scrub

__all__ = ["BUILTIN_PACKS_DIR", "MEMORY_ROOT", "builtin_pack_names", "folder_order", "load_pack", "load_pack_files"]

M = TypeVar("M", bound=BaseModel)

BUILTIN_PACKS_DIR = Path(__file__).resolve().parent / "packs"
MEMORY_ROOT = Path("/dev/null")
"""The root of a pack held in memory: no file can be under it (a device is not a folder), so a pack that has no
folder is never read from one by accident (`Pack.root` is a `Path` for every pack)."""
SCENARIO_FOLDER = re.compile(r"^\d{3,}-[A-Za-z0-9][A-Za-z0-9._-]*$")
"""A scenario folder's name: `NNN-slug`, three digits or more (a generated set of 10,000 has `9999-…`)."""


def folder_order(folder: str) -> tuple[int, str]:
    """The sort key of a scenario folder: its number, then its name (`999-a` before `1000-a`)."""
    number, _, _ = folder.partition("-")
    return (int(number), folder) if number.isdigit() else (-1, folder)


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
    config: PackConfig | None = None
    rel = f"{name}/pack.yml"
    if (root / "pack.yml").is_file():
        config = read_model(PackConfig, _inside(root, root / "pack.yml", rel), rel)
    folders = sorted((p.name for p in root.iterdir() if p.is_dir() and SCENARIO_FOLDER.match(p.name)), key=folder_order)
    if not folders and config is not None and config.generated is not None:
        return _generated(root, name, config, builtin=builtin)
    if not folders:
        raise PackError(
            "no scenario folders in this pack",
            path=name,
            hint="a pack holds folders named NNN-slug (e.g. 001-replication-lag), see docs/scenarios.md",
        )
    domain = _domain(config, root, folders, rel)
    vocabulary = domain.vocabulary()
    if config is not None:
        vocabulary = config.vocabulary(vocabulary, source=rel)
    readers = (_ScenarioReader(root, name, folder, tuple(folders), vocabulary, domain) for folder in folders)
    scenarios, broken = _load_scenarios(readers)
    return Pack(
        name=name,
        root=root,
        vocabulary=vocabulary,
        scenarios=tuple(scenarios),
        broken=MappingProxyType(broken),
        builtin=builtin,
        domain=domain.name,
    )


def load_pack_files(name: str, scenarios: Iterable[tuple[str, Mapping[str, bytes]]], *, config: PackConfig) -> Pack:
    """A pack from scenario files held in memory (a generated set's): nothing is read from or written to disk.

    Every scenario is read and checked exactly as `load_pack` reads a folder (the same models, the same checks
    on each file); what only a folder on disk has is refused instead: a `base:` (a scenario held alone has no
    sibling) and file names with a path in them.

    Args:
        name: the pack's name (the first part of its tests' ids).
        scenarios: (folder name, file name -> bytes) per scenario, read one at a time.
        config: what its `pack.yml` would say; `domain` is required (there are no files to recognise it by).

    Returns:
        The pack, `root` a path nothing can be under (it has no folder; see `MEMORY_ROOT`).

    Raises:
        PackError: `config` names no domain, or an unknown one.
    """
    rel = f"{name}/pack.yml"
    if config.domain is None:
        raise PackError(
            "a pack held in memory needs its domain", path=rel, field="domain", allowed=domain_names(),
            hint="give `domain` in its pack configuration",
        )  # fmt: skip
    domain = _domain(config, MEMORY_ROOT, (), rel)
    vocabulary = config.vocabulary(domain.vocabulary(), source=rel)
    loaded: list[Scenario] = []
    broken: dict[str, PackError] = {}
    seen: set[str] = set()
    for folder, files in scenarios:
        problem = _memory_problem(folder, files, seen)
        seen.add(folder)
        if problem is not None:
            broken[folder] = PackError(problem, path=f"{name}/{folder}", hint="this is a bug in its generator")
            continue
        reader = _MemoryReader(MEMORY_ROOT, name, folder, (folder,), vocabulary, domain, memory=files)
        done, failed = _load_scenarios([reader])
        loaded += done
        broken.update(failed)
    return Pack(
        name=name,
        root=MEMORY_ROOT / name,
        vocabulary=vocabulary,
        scenarios=tuple(sorted(loaded, key=lambda s: folder_order(s.folder))),
        broken=MappingProxyType(broken),
        domain=domain.name,
    )


def _memory_problem(folder: str, files: Mapping[str, bytes], seen: set[str]) -> str | None:
    """Why a scenario held in memory cannot be a folder of a pack, or None."""
    if not SCENARIO_FOLDER.match(folder):
        return f"{folder!r} is not a scenario folder name (NNN-slug)"
    if folder in seen:
        # Not one scenario's problem: which of the two would be the pack's? A bug of whatever made them.
        raise ValueError(f"the scenario folder {folder!r} comes twice")
    bad = [f for f in files if not f or "/" in f or "\\" in f or f in (".", "..")]
    if bad:
        return f"{bad[0]!r} is not a file name (a scenario's files sit directly in its folder)"
    return None


def _load_scenarios(readers: Iterable[_ScenarioReader]) -> tuple[list[Scenario], dict[str, PackError]]:
    scenarios: list[Scenario] = []
    broken: dict[str, PackError] = {}
    for reader in readers:
        try:
            scenarios.append(reader.load())
        except PackError as exc:
            broken[reader.folder] = exc
        except Exception as exc:  # the per-scenario boundary (STYLE #16): keep the message, load the rest
            broken[reader.folder] = PackError(
                f"could not load the scenario: {type(exc).__name__}: {exc}",
                path=f"{reader.pack}/{reader.folder}",
                hint="this is likely a bug in sredrill: please report it with this scenario folder",
            )
    return scenarios, broken


def _domain(config: PackConfig | None, root: Path, folders: Sequence[str], rel: str) -> Domain:
    """The pack's domain: `pack.yml` names it, else the scenario folders' files tell (the upstream layout)."""
    if config is not None and config.domain is not None:
        if config.domain not in DOMAINS:
            hint = did_you_mean(config.domain, DOMAINS)
            raise PackError(
                f"no domain {config.domain!r}",
                path=rel,
                field="domain",
                allowed=domain_names(),
                hint=(hint + "\n  " if hint else "") + "name a registered domain (see docs/domains.md)",
            )
        return get_domain(config.domain)
    found = recognise_domain(root / f for f in folders)
    if found is None and len(DOMAINS) == 1:
        found = next(iter(DOMAINS))  # one domain registered: every pack is its
    if found is None:
        raise PackError(
            "cannot tell the pack's domain: no scenario folder holds a file of one domain's evidence sources",
            path=rel,
            field="domain",
            allowed=domain_names(),
            hint="add `domain: <name>` to pack.yml (see docs/domains.md)",
        )
    return get_domain(found)


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
    """Whether a folder is a pack: scenario folders, or a `pack.yml` naming a generated set (`rds_generated`)."""
    if any(p.is_dir() and SCENARIO_FOLDER.match(p.name) for p in folder.iterdir()):
        return True
    try:
        return "generated:" in (folder / "pack.yml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False


def _generated(root: Path, name: str, config: PackConfig, *, builtin: bool) -> Pack:
    """A pack whose `pack.yml` names a generated set and that holds no scenario folder: the set, made in
    memory once per process (`rds_generated`: 40 scenarios of a few MB each stay out of the repository).

    Raises:
        PackError: the spec does not parse, or the generator's version is not the one `pack.yml` records (the
            same spec now makes other scenarios).
    """
    from dataclasses import replace

    from sredrill.errors import InputError

    assert config.generated is not None
    # The generators sit a layer above the loader (they write scenarios in its format): imported by name, as
    # the domains are.
    generate = importlib.import_module("sredrill.generate")
    rel = f"{name}/pack.yml"
    try:
        spec = generate.parse_generate_spec(config.generated.spec)
        version = generate.generator_for(spec.domain).version
    except InputError as exc:
        raise PackError(exc.message, path=rel, field="generated.spec", hint=exc.hint) from exc
    if version != config.generated.version:
        raise PackError(
            f"it was made by generator {config.generated.generator} version {config.generated.version!r}; this "
            f"sredrill's is {version!r}, which makes other scenarios from the same spec",
            path=rel,
            field="generated.version",
            hint=f"set version: {version} after checking the set still means what it should",
        )
    return replace(_made(spec.text(), name, version), root=root, builtin=builtin)


@functools.lru_cache(maxsize=4)
def _made(spec: str, name: str, version: str) -> Pack:
    """A generated pack made once per process (a pack is immutable): the built-in `rds_generated` takes seconds
    to make, and a server, the environment's catalog and a run each load every built-in pack."""
    generate = importlib.import_module("sredrill.generate")
    pack: Pack = generate.generated_pack(generate.parse_generate_spec(spec), name=name)
    return pack


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


@dataclass(slots=True)
class _ScenarioReader:
    """Reads one scenario folder, with `base:` fallback, into a `Scenario` (and serves its domain's loaders)."""

    root: Path
    pack: str
    folder: str
    siblings: tuple[str, ...]
    vocabulary: Vocabulary
    domain: Domain
    base: str | None = None
    files: dict[str, str] = field(default_factory=dict)

    # -- `SourceFiles`, what a domain's source loaders read through ------------------------------------

    @property
    def folders(self) -> tuple[str, ...]:
        return (self.folder, self.base) if self.base else (self.folder,)

    def rel(self, folder: str, file: str) -> str:
        return f"{self.pack}/{folder}/{file}"

    def path(self, folder: str, file: str) -> Path:
        """The file's path, checked to stay inside the pack (see `_inside`)."""
        return _inside(self.root, self.root / folder / file, self.rel(folder, file))

    def exists(self, folder: str, file: str) -> bool:
        return (self.root / folder / file).is_file()

    def glob(self, folder: str, pattern: str) -> list[str]:
        names = []
        for p in (self.root / folder).iterdir():
            if not (p.is_file() and fnmatch.fnmatchcase(p.name, pattern)):
                continue
            name, undecodable = scrub(p.name)
            if undecodable:
                raise PackError(
                    "the file name is not valid UTF-8",
                    path=self.rel(folder, name),
                    hint=f"rename the file ({pattern}), {LINT_HINT}",
                )
            names.append(p.name)
        return sorted(names)

    def read(self, model: type[M], file: str, folder: str | None = None) -> M:
        if folder is None:
            folder = next((f for f in self.folders if self.exists(f, file)), None)
            if folder is None:
                raise self.missing(file, None)
        rel = self.files[file] = self.rel(folder, file)
        return validate_model(model, self.document(folder, file, rel), rel)

    def document(self, folder: str, file: str, rel: str) -> dict[str, object]:
        """The file's parsed top-level mapping (`reading.read_document`), read from the pack's folder."""
        return read_document(self.path(folder, file), rel)

    def missing(self, file: str, source: str | None) -> PackError:
        listed = source is not None
        return PackError(
            f"file is missing, but scenario.yml lists {source} in available_evidence" if listed else "file is missing",
            path=self.rel(self.folder, file),
            hint=f"add {file}"
            + (f" here or in the base folder {self.base}" if self.base else "")
            + (f", or drop {source} from available_evidence" if listed else "")
            + f", {LINT_HINT}",
        )

    # -- the scenario ----------------------------------------------------------------------------------

    def load(self) -> Scenario:
        meta_rel = self.rel(self.folder, "scenario.yml")
        raw = self.document(self.folder, "scenario.yml", meta_rel)
        self.base = base = self._base(raw, meta_rel)
        merged = {**self.document(base, "scenario.yml", self.rel(base, "scenario.yml")), **raw} if base else raw
        # The base's own `base` was checked by `_base`; the merged metadata keeps the child's.
        metadata = validate_model(self.domain.metadata, merged, meta_rel)
        alert = self.read(Alert, "alert.json")
        # The answer key is the scenario's own: never its base's (a child without one would be graded against it).
        if not self.exists(self.folder, "answer.yml"):
            raise PackError(
                "file is missing",
                path=self.rel(self.folder, "answer.yml"),
                hint="add answer.yml to this folder (a scenario's answer key is its own: it never comes from its "
                f"base), {LINT_HINT}",
            )
        key = self.read(AnswerKey, "answer.yml", self.folder)
        # Decided on the key as written: `_resolve_answer` fills `failure_modes` from scenario.yml.
        grading = GradingMode.SREDRILL if key.sets_sredrill_keys else GradingMode.COMPAT
        answer = self._resolve_answer(key, metadata, self.files, meta_rel)
        evidence: dict[str, SourceData] = {}
        for name in dict.fromkeys(metadata.available_evidence):
            source = self.domain.source(name)
            if source is None:  # the domain's metadata model lists its sources; this is a model out of step
                raise PackError(f"{name!r} is not an evidence source of the {self.domain.name} domain", path=meta_rel)
            evidence[name] = source.load(self)
        window: TimeWindow | None = next((d.window for d in evidence.values() if d.window is not None), None)
        period = next((d.period_s for d in evidence.values() if d.period_s is not None), None)
        attributes = {**self.domain.attributes, **{k: v for d in evidence.values() for k, v in d.attributes.items()}}
        return Scenario(
            pack=self.pack,
            folder=self.folder,
            domain=self.domain.name,
            metadata=metadata,
            alert=alert,
            answer=answer,
            evidence=MappingProxyType(evidence),
            files=MappingProxyType(dict(self.files)),
            window=window,
            period_s=period,
            attributes=MappingProxyType(attributes),
            grading=grading,
        )

    def _base(self, raw: dict[str, object], meta_rel: str) -> str | None:
        base = raw.get("base")
        if base is None or base == "":  # an empty base is no base (the upstream suites apply only a truthy one)
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
        base_raw = self.document(base, "scenario.yml", self.rel(base, "scenario.yml"))
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

    def _resolve_answer(
        self, answer: AnswerKey, metadata: ScenarioMetadata, files: dict[str, str], meta_rel: str
    ) -> AnswerKey:
        path = files["answer.yml"]
        v = self.vocabulary
        main = v.resolve_all([metadata.failure_mode], path=meta_rel, field="failure_mode")
        modes = v.resolve_all(answer.failure_modes, path=path, field="failure_modes") if answer.failure_modes else main
        self._known(answer.optimal_trajectory, self.domain.trajectory_actions, path, "optimal_trajectory")
        self._known(answer.required_evidence_sources, self.domain.source_names, path, "required_evidence_sources")
        return answer.model_copy(
            update={
                "failure_modes": list(modes),
                "forbidden_categories": self._modes_or_categories(
                    answer.forbidden_categories, path, "forbidden_categories"
                ),
                "ruled_out": self._modes_or_categories(answer.ruled_out, path, "ruled_out"),
                "decisive": self._keyed(answer.decisive, path, "decisive"),
                "refuting": self._keyed(answer.refuting, path, "refuting"),
            }
        )

    def _keyed(self, table: dict[str, list[ItemSelector]], path: str, field: str) -> dict[str, list[ItemSelector]]:
        """`decisive` / `refuting` with their keys made canonical (aliases resolved), entries of one name joined."""
        out: dict[str, list[ItemSelector]] = {}
        for name, selectors in table.items():
            (canonical,) = self._modes_or_categories([name], path, f"{field}.{name}")[:1] or (name,)
            out.setdefault(canonical, []).extend(selectors)
        return out

    def _known(self, names: Sequence[str], allowed: Sequence[str], path: str, field: str) -> None:
        """Refuse a name of the answer key that its domain does not declare (a tool, an action, a source)."""
        for i, name in enumerate(names):
            if name not in allowed:
                hint = did_you_mean(str(name), allowed)
                raise PackError(
                    f"{name!r} is not allowed",
                    path=path,
                    field=f"{field}[{i}]",
                    allowed=list(allowed),
                    hint=(hint + "\n  " if hint else "") + f"fix the value, {LINT_HINT}",
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


@dataclass(slots=True)
class _MemoryReader(_ScenarioReader):
    """Reads one scenario from its files in memory (`load_pack_files`): the same reading, no folder on disk."""

    memory: Mapping[str, bytes] = field(default_factory=dict)
    """File name -> bytes, of this scenario's folder only (it has no base)."""

    def path(self, folder: str, file: str) -> Path:
        raise PackError(
            "a scenario held in memory has no file on disk", path=self.rel(folder, file),
            hint="this is a bug in sredrill: please report it",
        )  # fmt: skip

    def exists(self, folder: str, file: str) -> bool:
        return folder == self.folder and file in self.memory

    def glob(self, folder: str, pattern: str) -> list[str]:
        if folder != self.folder:
            return []
        return sorted(f for f in self.memory if fnmatch.fnmatchcase(f, pattern))

    def document(self, folder: str, file: str, rel: str) -> dict[str, object]:
        data = self.memory.get(file) if folder == self.folder else None
        if data is None:
            raise PackError("file is missing", path=rel, hint=f"add {file} (see docs/scenarios.md), {LINT_HINT}")
        return parse_document(data, file, rel)
