"""`RdsGenerator`: the spec's plan (faults, difficulties) and its scenarios, one at a time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from sredrill.generate import GeneratedScenario, GenerateSpec

from .compose import VERSION, difficulty_of, pairs_possible, scenario
from .faults import FAULTS

__all__ = ["GENERATOR", "MODES", "RdsGenerator"]

MODES: Final = (*FAULTS, "healthy")
"""What the generator draws from, in its fixed order: the six faults and `healthy`."""


class RdsGenerator:
    """`sredrill.generate.Generator` for the `rds` domain."""

    domain = "rds"
    version = VERSION

    def scenarios(self, spec: GenerateSpec) -> Iterator[GeneratedScenario]:
        """The spec's scenarios in order, one at a time.

        Raises:
            InputError: the spec's faults and difficulties leave nothing to draw (difficulty 4 needs two
                faults of one category), raised here, before any scenario is made.
        """
        allowed, levels = self._plan(spec)
        return self._iterate(spec, allowed, levels)

    def scenario_at(self, spec: GenerateSpec, index: int) -> GeneratedScenario:
        """Scenario `index` of the spec alone: what `scenarios(spec)` yields at that position.

        Raises:
            IndexError: `index` is not one of the spec's (0 to count - 1).
            InputError: see `scenarios`.
        """
        if not 0 <= index < spec.count:
            raise IndexError(f"{spec.text()!r} has scenarios 0 to {spec.count - 1}, not {index}")
        allowed, levels = self._plan(spec)
        return self._at(spec, allowed, levels, index)

    def difficulty_at(self, spec: GenerateSpec, index: int) -> int:
        """Scenario `index`'s difficulty, without making it.

        Raises:
            InputError: see `scenarios`.
        """
        return difficulty_of(spec.seed, index, self._plan(spec)[1])

    def _plan(self, spec: GenerateSpec) -> tuple[tuple[str, ...], tuple[int, ...]]:
        from sredrill.errors import InputError
        from sredrill.scenarios import get_domain

        vocabulary = get_domain(self.domain).vocabulary()
        named = {vocabulary.resolve(f) for f in spec.faults}
        allowed = tuple(m for m in MODES if not named or m in named)
        if not allowed:
            raise InputError(
                f"generate spec {spec.text()!r}: the rds generator makes none of {', '.join(sorted(named))}",
                field="--generate",
                allowed=list(MODES),
                hint=f"name faults from: {', '.join(MODES)}",
            )
        levels = spec.difficulty or (1, 2, 3, 4)
        if 4 in levels and not pairs_possible(allowed):
            if spec.difficulty == (4,):
                raise InputError(
                    f"generate spec {spec.text()!r}: difficulty 4 needs two faults of one category",
                    field="--generate",
                    hint="name two or more of storage_full, cpu_saturation, connection_exhaustion, "
                    "replication_lag, checkpoint_io_storm in faults=, or drop difficulty=4",
                )
            levels = tuple(d for d in levels if d != 4)
        return allowed, levels

    def _iterate(
        self, spec: GenerateSpec, allowed: tuple[str, ...], levels: tuple[int, ...]
    ) -> Iterator[GeneratedScenario]:
        for index in range(spec.count):
            yield self._at(spec, allowed, levels, index)

    def _at(
        self, spec: GenerateSpec, allowed: tuple[str, ...], levels: tuple[int, ...], index: int
    ) -> GeneratedScenario:
        difficulty = difficulty_of(spec.seed, index, levels)
        folder, files = scenario(spec.seed, index, difficulty, allowed)
        return GeneratedScenario(folder=folder, files=files)


GENERATOR: Final = RdsGenerator()
"""The generator `sredrill.generate.GENERATORS["rds"]` names."""
