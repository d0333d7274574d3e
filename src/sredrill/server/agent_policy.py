"""Which agents the runs API and the web UI may start: the built-in ones, and specs `--allow-agent` opens.

An agent spec is code: `cmd:` runs a command, `py:` imports a module (which runs its top level), `http(s)://`
makes the server send requests where the caller says, and `openai:` with a `base_url` sends the model's
conversation there. A request to `POST /api/runs` is not the operator typing a command line, so by default
the server starts only sredrill's own agents (the `CONNECTORS` entries that are whole specs: `reference`
and the baselines) and `openai:MODEL` without a `base_url` (OpenAI's API). `sredrill serve --allow-agent PATTERN`
(repeatable; a glob matched against the whole spec, e.g. `'cmd:*'`, `'py:myagents.*'`,
`'http://127.0.0.1:9000/*'`, `'openai:*'`) opens more; a request naming its own `base_url` needs a pattern
that matches its spec. The check runs before the spec is resolved, so a refused spec is never imported,
started or contacted.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Final

from sredrill.agents import CONNECTORS, parse_agent_spec
from sredrill.errors import AgentSpecError, InputError
from sredrill.server.wire import ErrorBody, error_body

__all__ = ["BUILTIN_AGENTS", "AgentPolicy"]

# spec.py's convention: a key ending in ":" or "://" is a prefix; any other key is a built-in agent's name.
BUILTIN_AGENTS: Final = tuple(sorted(k for k in CONNECTORS if not k.endswith((":", "://"))))


@dataclass(frozen=True, slots=True)
class AgentPolicy:
    """The `--allow-agent` patterns of one server.

    Args:
        patterns: glob patterns (`fnmatch`, case-sensitive) matched against the whole agent spec.
    """

    patterns: tuple[str, ...] = ()

    @classmethod
    def of(cls, patterns: Iterable[str]) -> AgentPolicy:
        """The policy of `--allow-agent` values.

        Raises:
            InputError: an empty pattern.
        """
        checked = []
        for pattern in patterns:
            if not pattern.strip():
                raise InputError(
                    "--allow-agent needs a pattern, got an empty one", hint="e.g. --allow-agent 'cmd:./my-agent *'"
                )
            checked.append(pattern.strip())
        return cls(tuple(checked))

    def is_allowed(self, spec: str, *, base_url: str | None = None) -> bool:
        """True when the runs API may start `spec` (with `base_url`, when the request names one)."""
        return self.refusal(spec, base_url=base_url) is None

    def refusal(self, spec: str, *, base_url: str | None = None) -> ErrorBody | None:
        """None when `spec` may run; else the 403 body naming `--allow-agent` and what is allowed.

        A spec no connector accepts is left to the engine, whose error lists the accepted forms (it is never
        resolved, so never run).
        """
        try:
            parsed = parse_agent_spec(spec)
        except AgentSpecError:
            return None
        if any(fnmatchcase(parsed.text, pattern) for pattern in self.patterns):
            return None
        builtin = parsed.prefix in BUILTIN_AGENTS or parsed.prefix == "openai:"
        if builtin and base_url is None:
            return None
        given = ", ".join(repr(p) for p in self.patterns) if self.patterns else "none"
        what = f"agent {parsed.text!r}" + (f" with base_url {base_url!r}" if base_url is not None else "")
        return error_body(
            "agent_not_allowed",
            ["body", "base_url" if builtin else "agent"],
            f"{what} is not allowed on this server: its runs API starts only the built-in agents "
            f"({', '.join(BUILTIN_AGENTS)}), openai:MODEL without a base_url, and specs matching a "
            f"`sredrill serve --allow-agent PATTERN` (patterns given: {given})",
            allowed=[*BUILTIN_AGENTS, "openai:MODEL", *self.patterns],
            hint=f"to run it, restart the server with --allow-agent {shlex.quote(parsed.text)} (a glob pattern, "
            f"e.g. '{parsed.prefix}*'; repeatable)",
        )
