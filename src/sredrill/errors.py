"""The error tree: every error sredrill raises on purpose.

    SredrillError
    ├── InputError            the user must fix something (CLI: exit 2, no traceback; HTTP: 400)
    │   ├── PackError         a scenario pack or scenario file is malformed
    │   ├── EvalFileError     an eval file cannot be loaded or registers something invalid
    │   ├── AgentSpecError    an `--agent SPEC` cannot be resolved
    │   ├── ActionError       an environment action is invalid
    │   ├── ConfigError       a configuration value is invalid
    │   ├── MissingExtra      an optional dependency is not installed
    │   └── NothingSelected   the filters selected no test, so nothing ran (CLI: exit 5, as pytest's)
    ├── AgentError            the agent crashed, hung, or replied with something unusable
    ├── JudgeError            a judge could not produce a verdict (server error, bad reply)
    ├── StateError            a call made in the wrong order (`agent.run()` twice, `step` before `reset`)
    ├── StoreError            the SQLite store cannot be written (disk full, read-only, I/O error): the run goes
    │                         on in memory, its report is printed, the CLI exits 3
    └── TracesUnavailable     no spans for a run within the wait (never silent zeros)

    ExpectationFailed(AssertionError)   a hard `expect` failed: the test is `failed`, not `errored`

Errors carry their context as attributes (`path`, `field`, `allowed`, `hint`) so the CLI and the server
render them; nobody parses messages.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from enum import IntEnum

__all__ = [
    "ActionError",
    "AgentError",
    "AgentSpecError",
    "ConfigError",
    "EvalFileError",
    "ExitCode",
    "ExpectationFailed",
    "InputError",
    "JudgeError",
    "MissingExtra",
    "NothingSelected",
    "PackError",
    "SredrillError",
    "StateError",
    "StoreError",
    "TracesUnavailable",
    "did_you_mean",
]


class ExitCode(IntEnum):
    """Process exit codes (DESIGN §8); 3 (some errored) wins over 1 (some failed); 5 as pytest's."""

    OK = 0
    TESTS_FAILED = 1
    USAGE_ERROR = 2
    TESTS_ERRORED = 3
    INTERNAL_ERROR = 4
    NOTHING_SELECTED = 5
    """The filters (`--scenario`, `--difficulty`, `--grep`, `--label`, `--last-failed`) selected no test."""


def did_you_mean(value: str, allowed: Iterable[str]) -> str:
    """A "did you mean 'x'?" phrase for an unknown name, or "" when nothing is close."""
    close = difflib.get_close_matches(value, list(allowed), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else ""


class SredrillError(Exception):
    """Base of every error sredrill raises on purpose."""


class InputError(SredrillError):
    """Raised when user input (a file, a flag, a request) is invalid; the message says how to fix it.

    Attributes:
        path: the file (relative to its pack or eval root) or route the error is about, if any.
        field: the location inside it (`failure_modes[0]`), if any.
        allowed: the valid values, when the error is an unknown name.
        hint: the next step for the user.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        field: str | None = None,
        allowed: Iterable[str] | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.path = path
        self.field = field
        self.allowed = sorted(allowed) if allowed is not None else None
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        """The full message: where, what, the valid values and the fix, one per line."""
        where = ": ".join(p for p in (self.path, self.field) if p)
        lines = [f"{where}: {self.message}" if where else self.message]
        if self.allowed:
            shown = ", ".join(self.allowed[:12]) + (", …" if len(self.allowed) > 12 else "")
            lines.append(f"  allowed: {shown}")
        if self.hint:
            lines.append(f"  {self.hint}")
        return "\n".join(lines)


class PackError(InputError):
    """Raised when a scenario pack or one of its files is malformed."""


class EvalFileError(InputError):
    """Raised when an eval file cannot be imported or registers an invalid test."""


class AgentSpecError(InputError):
    """Raised when an agent spec (`--agent SPEC`) cannot be resolved."""


class ActionError(InputError):
    """Raised when an environment action is not one the environment accepts."""


class ConfigError(InputError):
    """Raised when a configuration value (file, environment or flag) is invalid."""


class MissingExtra(InputError):
    """Raised when a capability needs an optional dependency that is not installed."""

    def __init__(self, feature: str, extra: str) -> None:
        self.extra = extra
        super().__init__(
            f"{feature} needs the {extra!r} extra",
            hint=f"install it with: pip install 'sredrill[{extra}]'",
        )


class NothingSelected(InputError):
    """Raised when the filters of a run (`--scenario`, `--difficulty`, `--grep`, `--label`, `--last-failed`)
    or its eval files select no test: nothing ran and no run is stored.

    An `InputError` (the server answers 400), but the CLI exits 5 (`ExitCode.NOTHING_SELECTED`), as pytest
    does when it collects nothing, so a CI job notices a filter that matches nothing.
    """

    def render(self) -> str:
        """`no tests selected: <why>, nothing ran`, then the fix."""
        lines = [f"no tests selected: {self.message}, nothing ran"]
        if self.allowed:
            lines.append(f"  allowed: {', '.join(self.allowed[:12])}" + (", …" if len(self.allowed) > 12 else ""))
        if self.hint:
            lines.append(f"  {self.hint}")
        return "\n".join(lines)


class AgentError(SredrillError):
    """Raised when an agent crashes, times out, or replies with something that cannot be used."""


class JudgeError(SredrillError):
    """Raised when a judge cannot produce a verdict (unreachable server, malformed reply)."""


class StateError(SredrillError):
    """Raised when a call is made in the wrong order; the message names the call to make first."""


class StoreError(SredrillError):
    """Raised when the store cannot be read or written (disk full, read-only file or folder, disk I/O error).

    Not a usage error: the engine keeps running in memory, prints the report, and the CLI exits 3 with this
    message.

    Attributes:
        path: the database file.
        hint: the fix (free space, make the folder writable, `--db PATH`).
    """

    def __init__(self, message: str, *, path: str, hint: str) -> None:
        self.message = message
        self.path = path
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        """The full message: the database, what failed, then the fix."""
        return f"{self.path}: {self.message}\n  {self.hint}"


class TracesUnavailable(SredrillError):
    """Raised when a run's spans did not arrive within the bounded wait; the reason says why."""


class ExpectationFailed(AssertionError):
    """Raised by a hard `expect` that failed: the test's status becomes `failed`."""
