"""Isolation levels: what an agent's process can reach, and which level is in force for a run (DESIGN §11.3).

`sandbox` runs agents under bubblewrap (own PID namespace, read-only system, masked packs and store, by default no
network but the tool server); `process` keeps them in processes of their own with an allow-listed environment
(disk and /proc reads are not prevented); `none` is the old behaviour. `auto` is sandbox where bubblewrap works,
else process with a warning.

Examples:
    >>> policy = resolve_isolation("auto", masked=[Path("packs/rds")])
    >>> policy.recorded
    'sandbox'
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Final

from sredrill.errors import InputError, did_you_mean

__all__ = [
    "BWRAP_INSTALL_HINT",
    "AgentNetwork",
    "Isolation",
    "IsolationPolicy",
    "IsolationUnavailable",
    "recorded_level",
    "resolve_isolation",
    "sandbox_problem",
]

BWRAP_INSTALL_HINT: Final = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"


class Isolation(StrEnum):
    """`--isolation`: how far an agent is kept from the grader's data."""

    AUTO = "auto"
    SANDBOX = "sandbox"
    PROCESS = "process"
    NONE = "none"


class AgentNetwork(StrEnum):
    """`--agent-network`: the sandboxed agent's network (`none`: its own, reaching only the tool server)."""

    NONE = "none"
    HOST = "host"


# `--require-isolation` compares levels in this order.
_RANK: Final = {Isolation.NONE: 0, Isolation.PROCESS: 1, Isolation.SANDBOX: 2}
_ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# sredrill's own in-process agents (the keys of `agents.spec.CONNECTORS` that are not user code); listed here
# because this layer sits above `agents`. tests/isolation/test_levels.py checks it against CONNECTORS.
BUILTIN_AGENTS: Final = frozenset({"reference", "rds-reference", "k8s-reference", "majority", "keyword", "random"})
BUILTIN_PREFIXES: Final = ("majority:", "redteam:", "openai:")


class IsolationUnavailable(InputError):
    """Raised when the requested or required isolation level cannot be had here; the message says why and how."""


@dataclass(frozen=True, slots=True, kw_only=True)
class IsolationPolicy:
    """The isolation in force for one run, resolved once by `resolve_isolation`."""

    level: Isolation
    """The level in force: SANDBOX, PROCESS or NONE, never AUTO."""
    network: AgentNetwork = AgentNetwork.NONE
    """The sandboxed agent's network; ignored below sandbox."""
    agent_env: tuple[str, ...] = ()
    """Extra environment variable names passed to agents (`--agent-env NAME`), e.g. an LLM key."""
    launch_dir: Path
    """The working directory when the run started: relative agent paths resolve against it."""
    agent_dir: Path | None = None
    """`--agent-dir`: the agent's code, read-only in the sandbox; None: the launch dir."""
    masked: tuple[Path, ...] = ()
    """Absolute paths an agent must not see: pack roots, built-in packs, the store, eval dirs, `~/.sredrill`."""
    warning: str | None = None
    """Why `auto` fell back to process, for the run's warning line; None when it did not."""

    @property
    def recorded(self) -> str:
        """The level as the RunReport records it: `sandbox`, `sandbox+host-network`, `process` or `none`."""
        if self.level is Isolation.SANDBOX and self.network is AgentNetwork.HOST:
            return "sandbox+host-network"
        return self.level.value

    def code_dir(self) -> Path:
        """The agent's code directory: `agent_dir`, or the launch dir."""
        return self.agent_dir if self.agent_dir is not None else self.launch_dir


def _probe_argv(bwrap: str) -> list[str]:
    # The namespaces and mounts every sandboxed run uses, so a pass here means a sandbox will start.
    return [
        bwrap,
        "--ro-bind", "/", "/",
        "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--die-with-parent",
        "--cap-drop", "ALL", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "true",
    ]  # fmt: skip


# Cached: whether bubblewrap works is a fact of the machine, the same for every run of this process.
@functools.cache
def sandbox_problem() -> str | None:
    """Why agents cannot be sandboxed here, or None when bubblewrap works.

    Returns:
        None, or a sentence naming the cause and the fix ("bwrap is not installed: apt-get install bubblewrap").
    """
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return f"bwrap is not installed: {BWRAP_INSTALL_HINT}"
    try:
        done = subprocess.run(_probe_argv(bwrap), capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap cannot be run: {exc}"
    if done.returncode != 0:
        detail = done.stderr.strip() or f"exit code {done.returncode}"
        return f"bwrap cannot create namespaces: {detail}"
    return None


def _choice(value: str, allowed: Sequence[str], flag: str) -> str:
    if value not in allowed:
        close = did_you_mean(value, allowed)
        raise InputError(
            f"{flag} {value!r} is not a known value" + (f"; {close}" if close else ""),
            field=flag,
            allowed=allowed,
            hint=f"use one of: {', '.join(allowed)}",
        )
    return value


def resolve_isolation(
    requested: str = "auto",
    *,
    require: str | None = None,
    network: str = "none",
    agent_env: Sequence[str] = (),
    agent_dir: str | Path | None = None,
    masked: Sequence[Path] = (),
    launch_dir: Path | None = None,
) -> IsolationPolicy:
    """The isolation policy in force for a run.

    Args:
        requested: `--isolation`: auto, sandbox, process or none.
        require: `--require-isolation`: the lowest level the run accepts (sandbox, process or none), if any.
        network: `--agent-network`: none or host.
        agent_env: `--agent-env` names to pass through to agents.
        agent_dir: `--agent-dir`: the agent's code directory (relative to the launch dir); None: the launch dir.
        masked: paths agents must not see (relative ones resolve against the launch dir).
        launch_dir: the run's working directory; None: the current one.

    Returns:
        The policy, its level never AUTO; `warning` is set when auto fell back to process.

    Raises:
        InputError: an unknown level or network, a malformed `--agent-env` name, a missing `--agent-dir`.
        IsolationUnavailable: `sandbox` was asked for but does not work here, or the level in force is below
            `require`.
    """
    level = Isolation(_choice(requested, [m.value for m in Isolation], "--isolation"))
    floor = None
    if require is not None:
        floor = Isolation(_choice(require, [m.value for m in _RANK], "--require-isolation"))
    net = AgentNetwork(_choice(network, [m.value for m in AgentNetwork], "--agent-network"))
    for name in agent_env:
        if not _ENV_NAME.fullmatch(name):
            raise InputError(
                f"--agent-env {name!r} is not an environment variable name",
                field="--agent-env",
                hint="pass the variable's name, not its value: --agent-env OPENAI_API_KEY",
            )
    base = (launch_dir if launch_dir is not None else Path.cwd()).resolve()
    code = None
    if agent_dir is not None:
        code = (base / agent_dir).resolve()
        if not code.is_dir():
            raise InputError(
                f"--agent-dir {str(agent_dir)!r} is not a directory ({code})",
                field="--agent-dir",
                hint="pass the directory holding the agent's code",
            )

    warning = None
    problem = sandbox_problem() if level in (Isolation.AUTO, Isolation.SANDBOX) else None
    if level is Isolation.SANDBOX and problem is not None:
        raise IsolationUnavailable(
            f"--isolation sandbox is not available here: {problem}",
            field="--isolation",
            hint="fix that, or run with --isolation process (disk and /proc reads are then not prevented)",
        )
    if level is Isolation.AUTO:
        if problem is None:
            level = Isolation.SANDBOX
        else:
            level = Isolation.PROCESS
            warning = (
                f"sandbox unavailable ({problem}); agents run at process level, "
                "where disk and /proc reads are not prevented"
            )
    if floor is not None and _RANK[level] < _RANK[floor]:
        why = f": {problem}" if problem is not None else ""
        raise IsolationUnavailable(
            f"--require-isolation {floor.value}: the level in force is {level.value}{why}",
            field="--require-isolation",
            hint=(
                f"{BWRAP_INSTALL_HINT}, or lower --require-isolation"
                if floor is Isolation.SANDBOX and problem is not None
                else f"raise --isolation to {floor.value} (or auto), or lower --require-isolation"
            ),
        )
    return IsolationPolicy(
        level=level,
        network=net,
        agent_env=tuple(dict.fromkeys(agent_env)),
        launch_dir=base,
        agent_dir=code,
        masked=tuple(dict.fromkeys((base / p).resolve() for p in masked)),
        warning=warning,
    )


def recorded_level(policy: IsolationPolicy | None, agent_spec: str) -> str:
    """The isolation a RunReport records for an agent.

    Args:
        policy: the run's policy; None when there is none (the level is then `none`).
        agent_spec: the `--agent` spec as written.

    Returns:
        `external` for `http(s)://` agents (they run elsewhere), `builtin` for sredrill's own in-process agents
        (our code, not the user's), otherwise `policy.recorded`.
    """
    if agent_spec.startswith(("http://", "https://")):
        return "external"
    if agent_spec in BUILTIN_AGENTS or agent_spec.startswith(BUILTIN_PREFIXES):
        return "builtin"
    return policy.recorded if policy is not None else Isolation.NONE.value
