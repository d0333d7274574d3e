"""Generated scenarios: packs made from a causal fault model per domain, so a test set need not be public.

A generator turns a `GenerateSpec` (domain, seed, count, difficulties, faults) into scenarios, one at a time: each
a folder name and its files, in the pack format (`docs/scenarios.md`), answer key included (derived from the
faults it injected). The same spec and generator version give byte-identical files. `sredrill generate` writes
them as a pack; `sredrill run --generate SPEC` runs them without writing files. Design: docs/generator.md.

Examples:
    >>> spec = parse_generate_spec("rds:seed=7:count=20")
    >>> for scenario in generate(spec):
    ...     print(scenario.folder, sorted(scenario.files))
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final, Protocol

__all__ = ["GENERATORS", "GenerateSpec", "GeneratedScenario", "Generator", "generate", "generator_for"]

GENERATORS: Final = {"rds": "sredrill.generate.rds:GENERATOR"}
"""Domain name -> `module:attribute` of its generator, imported when first used."""


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
    version: str
    """Changes whenever the same spec would give different files."""

    def scenarios(self, spec: GenerateSpec) -> Iterator[GeneratedScenario]:
        """The spec's scenarios, in order, one at a time (a large count never sits in memory at once)."""
        ...


def generator_for(domain: str) -> Generator:
    """The generator of `domain`.

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
    module, _, attribute = target.partition(":")
    generator: Generator = getattr(importlib.import_module(module), attribute)
    return generator


def generate(spec: GenerateSpec) -> Iterator[GeneratedScenario]:
    """The scenarios of `spec`, one at a time."""
    return generator_for(spec.domain).scenarios(spec)
