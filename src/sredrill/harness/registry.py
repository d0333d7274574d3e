"""What loading an eval file collects: the registered tests (TestDef), their scopes and the file's Suite.

The SDK's decorators (`sredrill.sdk.registry`) write into the Suite that `collecting` makes current; the
engine's loader reads it once the file is imported. Registration is discovery only (seed 001 §3.5).
"""

from __future__ import annotations

import contextvars
import inspect
import linecache
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sredrill.agents import ContextItem
from sredrill.errors import EvalFileError
from sredrill.harness.paths import display_path

__all__ = ["BUILTIN_FIXTURES", "Fixture", "Scope", "Suite", "TestDef", "collecting", "collecting_suite"]

BUILTIN_FIXTURES = ("agent", "judge", "test_info")
"""The fixtures every test may ask for by parameter name; the engine gives their values."""

Fixture = Callable[..., Any]


@dataclass(eq=False, slots=True)
class Scope:
    """A file or `describe` block: its hooks apply to every test inside it."""

    name: str
    parent: Scope | None = None
    before_all: list[Callable[..., Any]] = field(default_factory=list)
    after_all: list[Callable[..., Any]] = field(default_factory=list)
    before_each: list[Callable[..., Any]] = field(default_factory=list)
    after_each: list[Callable[..., Any]] = field(default_factory=list)

    def chain(self) -> list[Scope]:
        """Outermost first."""
        out: list[Scope] = []
        node: Scope | None = self
        while node is not None:
            out.append(node)
            node = node.parent
        return out[::-1]

    def path(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.chain()[1:])


@dataclass(frozen=True, slots=True)
class TestDef:
    """A registered test: metadata, body, fixtures and scope. Immutable once loaded."""

    __test__ = False

    id: str
    name: str
    file: str
    line: int
    describe_path: tuple[str, ...]
    labels: tuple[str, ...]
    timeout_s: float
    prompt: str | None
    context: tuple[ContextItem, ...]
    skip_judge: bool
    description: str | None
    body: Callable[..., Any]
    fixtures: Mapping[str, Fixture]
    scope: Scope
    content_hash: str

    @property
    def difficulty(self) -> int | None:
        """From a `difficulty:N` label, when N is an integer."""
        for label in self.labels:
            key, _, value = label.partition(":")
            if key == "difficulty" and value.strip().isdigit():
                return int(value)
        return None


@dataclass(slots=True)
class Suite:
    """What loading one eval file collected: its tests, evaluators and root scope."""

    file: Path
    display: str
    root: Scope
    tests: list[TestDef] = field(default_factory=list)
    evaluators: dict[str, Callable[..., Any]] = field(default_factory=dict)
    scope: Scope | None = None
    ids: set[str] = field(default_factory=set)
    sources: dict[tuple[str, int], str] = field(default_factory=dict)
    """Body source by (file, line): tests made in a loop share one body, read once."""
    displays: dict[str, str] = field(default_factory=dict)
    """How each defining file is shown (resolving a path per test was a third of registration time)."""

    def display_of(self, file: str) -> str:
        if file not in self.displays:
            self.displays[file] = display_path(file) if file != "?" else self.display
        return self.displays[file]

    def source_of(self, body: Callable[..., Any], file: str, line: int) -> str:
        key = (file, line)
        if key not in self.sources:
            lines = linecache.getlines(file)
            try:
                self.sources[key] = "".join(inspect.getblock(lines[line - 1 :])) if lines else ""
            except (IndexError, SyntaxError):
                self.sources[key] = ""
        return self.sources[key] or getattr(body, "__qualname__", "")

    def current_scope(self) -> Scope:
        return self.scope or self.root


_collecting: contextvars.ContextVar[Suite | None] = contextvars.ContextVar("sredrill_collecting", default=None)


@contextmanager
def collecting(file: Path, display: str) -> Iterator[Suite]:
    """Engine side: collect what importing `file` registers."""
    suite = Suite(file=file, display=display, root=Scope(name=display))
    token = _collecting.set(suite)
    try:
        yield suite
    finally:
        _collecting.reset(token)


def collecting_suite(what: str) -> Suite:
    """The Suite an eval file's import is registering into; `what` names the caller in the error."""
    suite = _collecting.get()
    if suite is None:
        raise EvalFileError(
            f"{what} registers tests only while sredrill loads an eval file",
            hint="run the file with: sredrill test PATH (or list it with: sredrill list PATH)",
        )
    return suite
