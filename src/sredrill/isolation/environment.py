"""The environment an agent process gets: an allow-list at process and sandbox level, never sredrill's secrets.

Examples:
    >>> agent_environment(policy, {"PATH": "/usr/bin", "SREDRILL_JUDGE_API_KEY": "sk-…"}, {"SREDRILL_RUN_TOKEN": "t"})
    {'PATH': '/usr/bin', 'SREDRILL_RUN_TOKEN': 't'}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from sredrill.isolation.levels import Isolation, IsolationPolicy

__all__ = ["PASSED_NAMES", "agent_environment", "is_passed"]

PASSED_NAMES: Final = frozenset(
    {
        "PATH", "HOME", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR",
        "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
        "http_proxy", "https_proxy", "no_proxy", "all_proxy",
        # How a Python agent writes its output and which environment it is: settings, not secrets.
        "PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONUTF8", "VIRTUAL_ENV",
    }
)  # fmt: skip
"""Variables of the driver's environment every agent gets (besides `LC_*` and the allowed `SREDRILL_*`)."""

# sredrill's own secrets and store pointers: an agent holding them could call the judge on our account or open
# the store, which keeps the expected answer of every past test.
_WITHHELD_PREFIXES: Final = ("SREDRILL_JUDGE_",)
_WITHHELD_NAMES: Final = frozenset({"SREDRILL_DB", "SREDRILL_DIR"})
_SECRET_WORDS: Final = ("KEY", "SECRET", "PASSWORD", "TOKEN")
# The run's bearer token is the agent's own credential for its tool server.
_AGENT_TOKEN: Final = "SREDRILL_RUN_TOKEN"


def is_passed(name: str) -> bool:
    """Whether a driver variable reaches agents at process and sandbox level (before `--agent-env`)."""
    if name in PASSED_NAMES or name.startswith("LC_"):
        return True
    if not name.startswith("SREDRILL_"):
        return False
    if name == _AGENT_TOKEN:
        return True
    if name in _WITHHELD_NAMES or name.startswith(_WITHHELD_PREFIXES):
        return False
    return not any(word in name for word in _SECRET_WORDS)


def agent_environment(
    policy: IsolationPolicy | None, base: Mapping[str, str], own: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment to start an agent process with.

    Args:
        policy: the run's isolation; None or level none passes `base` whole (the behaviour before isolation).
        base: the driver's environment (`os.environ`).
        own: what sredrill sets for this agent (`SREDRILL_TOOLS_URL`, the run token, …), applied last.

    Returns:
        A new dict: at process and sandbox level the allow-listed part of `base`, each `policy.agent_env` name
        present in `base`, then `own`.
    """
    extra = dict(own or {})
    if policy is None or policy.level is Isolation.NONE:
        return {**base, **extra}
    kept = {k: v for k, v in base.items() if is_passed(k) or k in policy.agent_env}
    return {**kept, **extra}
