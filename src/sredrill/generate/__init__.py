"""Generated scenarios: packs made from a causal fault model per domain, so a test set need not be public.

A generator turns a `GenerateSpec` (domain, seed, count, difficulties, faults) into scenarios, one at a time: each
a folder name and its files, in the pack format (`docs/scenarios.md`), answer key included (derived from the
faults it injected); scenario i can be made alone (`Generator.scenario_at`). The same spec and generator version
give byte-identical files. `sredrill generate` writes them as a pack (`write_pack`); `sredrill run --generate
SPEC` runs them without writing files, making each when its test starts (`generated_pack(spec, indices=[i])`).
Design: docs/generator.md; running them: docs/generated-runs.md.

Examples:
    >>> spec = parse_generate_spec("rds:seed=7:count=20")
    >>> for scenario in generate(spec):
    ...     print(scenario.folder, sorted(scenario.files))
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

if TYPE_CHECKING:
    from sredrill.errors import InputError
    from sredrill.scenarios import Pack, PackConfig

# Names from other sredrill packages are imported inside the functions that use them: this package's face is
# exactly its `__all__` (tests/test_public_api.py).

__all__ = [
    "GENERATORS",
    "GenerateSpec",
    "GeneratedScenario",
    "Generator",
    "check_spec",
    "generate",
    "generated_pack",
    "generator_for",
    "parse_generate_spec",
    "write_pack",
]

GENERATORS: Final = {"rds": "sredrill.generate.rds:GENERATOR"}
"""Domain name -> `module:attribute` of its generator, imported when first used."""

_SPEC_FORM: Final = "DOMAIN:seed=S:count=N[:difficulty=D,D][:faults=MODE,MODE]"
_EXAMPLE: Final = "rds:seed=7:count=20"
_KEYS: Final = ("seed", "count", "difficulty", "faults")
_DIFFICULTIES: Final = (1, 2, 3, 4)


@dataclass(frozen=True, slots=True)
class GenerateSpec:
    """What to generate: `rds:seed=7:count=20[:difficulty=2,3][:faults=storage_full,cpu_saturation]`."""

    domain: str
    seed: int
    count: int
    difficulty: tuple[int, ...] = ()
    """Difficulties to draw from; empty: the generator's evaluation mix (docs/generator.md)."""
    faults: tuple[str, ...] = ()
    """Failure modes to draw from; empty: all the domain's generator knows."""

    def text(self) -> str:
        """The spec as `parse_generate_spec` reads it (what a run records)."""
        out = f"{self.domain}:seed={self.seed}:count={self.count}"
        if self.difficulty:
            out += ":difficulty=" + ",".join(map(str, self.difficulty))
        if self.faults:
            out += ":faults=" + ",".join(self.faults)
        return out


@dataclass(frozen=True, slots=True)
class GeneratedScenario:
    """One generated scenario: its folder name (`NNN-slug`) and its files (name -> bytes), answer.yml included."""

    folder: str
    files: Mapping[str, bytes]


class Generator(Protocol):
    """A domain's generator."""

    domain: str
    """The scenario domain of what it writes (`scenarios.domain.DOMAINS`): its packs' `pack.yml: domain`."""
    version: str
    """Changes whenever the same spec would give different files."""

    def scenarios(self, spec: GenerateSpec) -> Iterator[GeneratedScenario]:
        """The spec's scenarios, in order, one at a time (a large count never sits in memory at once)."""
        ...

    def scenario_at(self, spec: GenerateSpec, index: int) -> GeneratedScenario:
        """Scenario `index` alone (0-based), byte for byte what `scenarios(spec)` yields at that position: a run
        makes each scenario when its test starts (`sredrill run --generate`)."""
        ...

    def difficulty_at(self, spec: GenerateSpec, index: int) -> int:
        """Scenario `index`'s difficulty (its `scenario.yml`'s), known without making it."""
        ...


def _target(domain: str) -> str:
    """The `module:attribute` of `domain`'s generator, without importing it.

    Raises:
        InputError: no generator for that domain.
    """
    from sredrill.errors import InputError, did_you_mean

    target = GENERATORS.get(domain)
    if target is None:
        names = sorted(GENERATORS)
        raise InputError(
            f"no scenario generator for domain {domain!r}"
            + (f"; {close}" if (close := did_you_mean(domain, names)) else ""),
            field="--generate",
            allowed=names,
            hint=f"use one of: {', '.join(names)}",
        )
    return target


def generator_for(domain: str) -> Generator:
    """The generator of `domain`.

    Raises:
        InputError: no generator for that domain.
    """
    module, _, attribute = _target(domain).partition(":")
    generator: Generator = getattr(importlib.import_module(module), attribute)
    return generator


def generate(spec: GenerateSpec) -> Iterator[GeneratedScenario]:
    """The scenarios of `spec`, one at a time.

    Raises:
        InputError: no generator for the spec's domain, or a fault that is not a failure mode of its scenario
            domain (raised when this is called, before any scenario is made).
    """
    generator = generator_for(spec.domain)
    _check_faults(spec, generator)
    return generator.scenarios(spec)


def check_spec(spec: GenerateSpec) -> None:
    """Refuse, before anything is made, what `generate` would refuse (a domain without a generator, a fault
    its domain does not have).

    Raises:
        InputError: see `generate`.
    """
    _check_faults(spec, generator_for(spec.domain))


def parse_generate_spec(text: str) -> GenerateSpec:
    """Read a spec: `DOMAIN:seed=S:count=N[:difficulty=D,D][:faults=MODE,MODE]` (`rds:seed=7:count=20`).

    Difficulties and faults are kept sorted and once each, so one set has one spelling (`GenerateSpec.text()`).
    Nothing is imported or generated: an unknown domain is refused from `GENERATORS` alone.

    Raises:
        InputError: the text is not of that form: no domain, an unknown domain or key (with "did you mean"),
            a key twice, `seed` or `count` missing or not an integer, a negative seed, a count below 1, a
            difficulty outside 1-4, or an empty list.
    """
    parts = [p.strip() for p in text.strip().split(":")]
    domain, given = parts[0], parts[1:]
    if not domain:
        raise _spec_error(text, "it names no domain", f"start it with the domain: {_EXAMPLE}")
    _target(domain)
    values: dict[str, str] = {}
    for part in given:
        key, eq, value = (s.strip() for s in part.partition("="))
        if not eq or not key:
            raise _spec_error(text, f"{part!r} is not KEY=VALUE", f"write each part as KEY=VALUE: {_EXAMPLE}")
        if key not in _KEYS:
            from sredrill.errors import did_you_mean

            close = did_you_mean(key, _KEYS)
            raise _spec_error(
                text, f"unknown key {key!r}" + (f"; {close}" if close else ""), f"use the keys {', '.join(_KEYS)}"
            )
        if key in values:
            raise _spec_error(text, f"{key!r} is given twice", f"give {key} once")
        values[key] = value
    for key in ("seed", "count"):
        if key not in values:
            raise _spec_error(text, f"{key!r} is missing", f"add :{key}=N, e.g. {_EXAMPLE}")
    seed = _integer(text, "seed", values["seed"])
    if seed < 0:
        raise _spec_error(text, f"seed {seed} is negative", "give a seed of 0 or more")
    count = _integer(text, "count", values["count"])
    if count < 1:
        raise _spec_error(text, f"count {count} is not a number of scenarios", "give a count of 1 or more")
    difficulty: tuple[int, ...] = ()
    if "difficulty" in values:
        levels = {_integer(text, "difficulty", v) for v in _items(text, "difficulty", values["difficulty"])}
        outside = sorted(levels - set(_DIFFICULTIES))
        if outside:
            raise _spec_error(
                text, f"difficulty {outside[0]} is outside 1-4", "give levels from 1 to 4, e.g. difficulty=2,3"
            )
        difficulty = tuple(sorted(levels))
    faults: tuple[str, ...] = ()
    if "faults" in values:
        faults = tuple(sorted(set(_items(text, "faults", values["faults"]))))
    return GenerateSpec(domain=domain, seed=seed, count=count, difficulty=difficulty, faults=faults)


def _items(text: str, key: str, value: str) -> list[str]:
    items = [v.strip() for v in value.split(",")]
    if not all(items):
        raise _spec_error(text, f"{key} has an empty entry", f"list values with commas, e.g. {key}=a,b")
    return items


def _integer(text: str, key: str, value: str) -> int:
    try:
        return int(value, 10)
    except ValueError:
        raise _spec_error(text, f"{key} {value!r} is not an integer", f"give {key} as a whole number") from None


def _spec_error(text: str, problem: str, fix: str) -> InputError:
    from sredrill.errors import InputError

    return InputError(f"generate spec {text!r}: {problem}", field="--generate", hint=f"{fix} (the form: {_SPEC_FORM})")


def _check_faults(spec: GenerateSpec, generator: Generator) -> None:
    """Refuse a fault its generator's scenario domain does not have (aliases are accepted, as in answer keys)."""
    if not spec.faults:
        return
    from sredrill.errors import InputError, PackError
    from sredrill.scenarios import get_domain

    vocabulary = get_domain(generator.domain).vocabulary()
    for name in spec.faults:
        try:
            vocabulary.resolve(name)
        except PackError as exc:
            raise InputError(
                f"generate spec {spec.text()!r}: {name!r} is not a failure mode of the {generator.domain} domain",
                field="--generate",
                allowed=vocabulary.names,
                hint=(exc.hint + "\n  " if exc.hint else "") + "name failure modes in faults=",
            ) from exc


def generated_pack(spec: GenerateSpec, *, name: str | None = None, indices: Sequence[int] | None = None) -> Pack:
    """The spec's scenarios as a pack, held in memory: nothing is written.

    The pack's name is `name`, else the spec's text (its tests are `rds:seed=7:count=20/003-…#1`); its
    scenarios are read and checked exactly as `load_pack` reads a folder, and one that does not load is in
    `Pack.broken`.

    Args:
        indices: only the scenarios at these positions (0-based), each made alone (`Generator.scenario_at`);
            `()` gives the set's pack with no scenario (its name, domain and vocabulary). None: every one.
            `sredrill run --generate` loads one at a time this way, so a run of any count holds a few.

    Raises:
        InputError: see `generate`.
        IndexError: an index is not one of the spec's.
    """
    from sredrill.scenarios.loader import load_pack_files

    generator = generator_for(spec.domain)
    if indices is None:
        made = generate(spec)
    else:
        _check_faults(spec, generator)
        made = (generator.scenario_at(spec, i) for i in indices)
    scenarios = ((s.folder, s.files) for s in made)
    return load_pack_files(name or spec.text(), scenarios, config=_pack_config(spec, generator))


def _pack_config(spec: GenerateSpec, generator: Generator) -> PackConfig:
    from sredrill.scenarios.pack_file import PackConfig, PackGenerated

    return PackConfig(
        domain=generator.domain,
        description=f"Generated by sredrill generate ({spec.text()}, generator version {generator.version}).",
        generated=PackGenerated(generator=spec.domain, version=generator.version, spec=spec.text()),
    )


def write_pack(out_dir: str | Path, spec: GenerateSpec, *, force: bool = False) -> Path:
    """Write the spec's scenarios as a pack folder with its `pack.yml` (domain, generator, version, spec).

    Args:
        out_dir: the pack folder; created when missing. Its name is the pack's name.
        force: replace what a pack holds there (its `pack.yml` and `NNN-slug` folders; other files stay);
            without it, a folder that is not empty is refused.

    Returns:
        The pack folder.

    Raises:
        InputError: `out_dir` is a file, is not empty (without `force`), or cannot be written; see `generate`.
    """
    import shutil

    import yaml

    from sredrill.errors import InputError
    from sredrill.scenarios.loader import SCENARIO_FOLDER

    root = Path(out_dir)
    if root.exists() and not root.is_dir():
        raise InputError("is a file, not a folder", path=str(root), hint="pass a folder for the pack with --out DIR")
    if root.is_dir() and any(root.iterdir()) and not force:
        raise InputError(
            "the folder is not empty: sredrill generate writes a whole pack there",
            path=str(root),
            hint="pass an empty or new folder with --out DIR, or --force to replace the pack in it",
        )
    generator = generator_for(spec.domain)
    scenarios = generate(spec)  # a bad fault is refused here, before anything is removed
    try:
        root.mkdir(parents=True, exist_ok=True)
        if force:
            for old in root.iterdir():
                if old.name == "pack.yml" and not old.is_dir():
                    old.unlink()
                elif old.is_dir() and not old.is_symlink() and SCENARIO_FOLDER.match(old.name):
                    shutil.rmtree(old)
        config = _pack_config(spec, generator).model_dump(mode="json", exclude_defaults=True)
        (root / "pack.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
        seen: set[str] = set()
        for scenario in scenarios:
            folder = _checked_folder(scenario, seen)
            (root / folder).mkdir()
            for name, data in sorted(scenario.files.items()):
                (root / folder / name).write_bytes(data)
    except OSError as exc:
        raise InputError(
            f"cannot write the pack: {exc.strerror or exc}", path=str(root), hint="pass another folder with --out DIR"
        ) from exc
    return root


def _checked_folder(scenario: GeneratedScenario, seen: set[str]) -> str:
    """The scenario's folder name, after checking it and its file names can be written inside the pack."""
    from sredrill.scenarios.loader import SCENARIO_FOLDER

    folder = scenario.folder
    bad = [f for f in scenario.files if not f or "/" in f or "\\" in f or f in (".", "..")]
    # A generator's bug, not the user's input: it surfaces as an internal error.
    if not SCENARIO_FOLDER.match(folder) or folder in seen or bad:
        raise ValueError(f"generator wrote an invalid scenario: folder {folder!r}, files {sorted(scenario.files)}")
    seen.add(folder)
    return folder
