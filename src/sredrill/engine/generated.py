"""A generated set played one scenario at a time: what `sredrill run --generate SPEC` holds of it.

A run lists each scenario of the set (its index, folder and difficulty: what selecting, naming and reporting
its tests need) and keeps nothing else; each test makes its scenario when it starts (`Generator.scenario_at`),
loads it as `load_pack` reads a folder, and lets go of it when it ends. A set of 10,000 scenarios of a few MB
each runs in the memory of a few (issue 18, point 7; docs/performance.md, "Generated sets").
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from dataclasses import dataclass

from sredrill.errors import PackError, did_you_mean
from sredrill.generate import GenerateSpec, generate, generated_pack, generator_for
from sredrill.scenarios import Pack, Scenario, Vocabulary

__all__ = ["GeneratedEntry", "StreamedSet"]

_NUMBER = re.compile(r"([0-9]+)-")


@dataclass(frozen=True, slots=True)
class GeneratedEntry:
    """One scenario of a streamed set as a run lists it before making it."""

    index: int
    """Its position in the set (0-based): `Generator.scenario_at(spec, index)` makes it."""
    folder: str
    """`NNN-slug`, as the generator names it."""
    difficulty: int
    """Its difficulty, as its `scenario.yml` will say (`Generator.difficulty_at`)."""


class StreamedSet:
    """A generated set whose scenarios are made when asked for and never kept.

    `pack` is the set's pack without its scenarios (name, domain, vocabulary: what agents and grading read of
    a pack); `entries` lists the scenarios, made once each on first use and dropped but for their folder.
    """

    __slots__ = ("_entries", "pack", "spec", "version")

    def __init__(self, spec: GenerateSpec, *, name: str | None = None) -> None:
        """Raises: InputError: no generator for the spec's domain, or a fault its domain does not have."""
        self.spec = spec
        self.version = generator_for(spec.domain).version
        self.pack: Pack = generated_pack(spec, name=name, indices=())
        self._entries: tuple[GeneratedEntry, ...] | None = None

    def __repr__(self) -> str:
        return f"StreamedSet({self.name!r})"

    @property
    def name(self) -> str:
        """The set's pack name (its tests are `NAME/NNN-slug#axis`)."""
        return self.pack.name

    @property
    def vocabulary(self) -> Vocabulary:
        return self.pack.vocabulary

    @property
    def entries(self) -> tuple[GeneratedEntry, ...]:
        """Every scenario of the set, in order (made one at a time the first time they are asked for).

        Raises:
            ValueError: the generator named two scenarios alike (a bug of the generator).
        """
        if self._entries is None:
            self._entries = tuple(self._listing())
        return self._entries

    async def list_entries(self) -> tuple[GeneratedEntry, ...]:
        """`entries`, listed giving the event loop its turn after each scenario: a run whose large set is being
        listed (some minutes for 10,000) stays interruptible (Ctrl-C, SIGTERM), and a server answers meanwhile.

        Raises:
            ValueError: see `entries`.
        """
        if self._entries is None:
            listed: list[GeneratedEntry] = []
            for entry in self._listing():
                listed.append(entry)
                await asyncio.sleep(0)
            self._entries = tuple(listed)
        return self._entries

    def _listing(self) -> Iterator[GeneratedEntry]:
        generator = generator_for(self.spec.domain)
        seen: set[str] = set()
        for index, made in enumerate(generate(self.spec)):  # each scenario's files are dropped at the next
            if made.folder in seen:
                raise ValueError(f"the scenario folder {made.folder!r} comes twice")
            seen.add(made.folder)
            yield GeneratedEntry(index, made.folder, generator.difficulty_at(self.spec, index))

    @property
    def folders(self) -> tuple[str, ...]:
        """Every scenario's folder, in the set's order (what `--scenario` names)."""
        return tuple(e.folder for e in self.entries)

    def load(self, entry: GeneratedEntry) -> Scenario:
        """The entry's scenario, made and loaded now; the set keeps nothing of it.

        Raises:
            PackError: it does not load (the error `load_pack` gives a broken scenario).
            ValueError: the generator made another scenario than it listed (a bug of the generator).
        """
        scenario = self._made(entry.index)
        if (scenario.folder, scenario.difficulty) != (entry.folder, entry.difficulty):
            raise ValueError(
                f"{self.name}: scenario {entry.index} was listed as {entry.folder} (difficulty {entry.difficulty}) "
                f"and made as {scenario.folder} (difficulty {scenario.difficulty})"
            )
        return scenario

    def scenario(self, scenario_id: str) -> Scenario:
        """The scenario named by its folder (`003-payroll`) or `pack/folder`, made and loaded now, without listing
        the set (its folder's number is its index), as `Pack.scenario` finds one.

        Raises:
            PackError: no such scenario in the set, or it does not load.
        """
        folder = scenario_id.removeprefix(f"{self.name}/")
        number = _NUMBER.match(folder)
        index = int(number.group(1)) if number is not None else -1
        if 0 <= index < self.spec.count:
            scenario = self._made(index)
            if scenario.folder == folder:
                return scenario
            close = did_you_mean(folder, [scenario.folder])
        else:
            close = None
        raise PackError(
            f"no scenario {scenario_id!r} in the generated set {self.name!r}",
            path=self.name,
            hint=(close + "\n  " if close else "") + f"its scenarios are numbered 000 to {self.spec.count - 1:03d}",
        )

    def _made(self, index: int) -> Scenario:
        pack = generated_pack(self.spec, name=self.name, indices=[index])
        for error in pack.broken.values():
            raise error
        (scenario,) = pack.scenarios
        return scenario
