"""Agent specs: resolving `--agent SPEC` (`py:mod:attr`, `cmd:./agent`, …) to an `Agent`.

Each connector is one line in `CONNECTORS` (STYLE #29): a spec prefix, the form users write, and a lazy
`"module:attr"` string naming the connector's `connect(spec, options) -> Agent` factory, so resolving a
`py:` spec never imports the code of the others.

Examples:
    >>> agent = resolve_agent("py:examples.agents.echo_agent:agent")
    >>> agent.spec
    'py:examples.agents.echo_agent:agent'
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Protocol

from sredrill.agents.protocol import Agent
from sredrill.errors import AgentSpecError, did_you_mean

if TYPE_CHECKING:
    from sredrill.isolation import IsolationPolicy

__all__ = [
    "CONNECTORS",
    "AgentSpec",
    "ConnectOptions",
    "Connector",
    "ConnectorEntry",
    "parse_agent_spec",
    "resolve_agent",
]


@dataclass(frozen=True, slots=True)
class ConnectorEntry:
    """One line of `CONNECTORS`: how the spec is written, and where its factory lives."""

    form: str
    """The spec's shape, for error messages (`py:MODULE:ATTR`)."""
    factory: str
    """`"module:attr"` of the connector's `connect(spec, options) -> Agent`, imported on first use."""


# A key ending in ":" or "://" is a prefix: the rest of the spec is the connector's target. Any other key is
# a whole spec (a built-in agent's name). "openai:" (the built-in LLM agent) reads `ConnectOptions.base_url`
# and `api_key`. "reference" runs the reference agent of the task's domain: each domain names its own
# (`Domain.reference_agent`, one of the entries after it).
CONNECTORS: Final[Mapping[str, ConnectorEntry]] = MappingProxyType(
    {
        "py:": ConnectorEntry("py:MODULE:ATTR", "sredrill.agents.connectors.py:connect"),
        "cmd:": ConnectorEntry("cmd:COMMAND", "sredrill.agents.connectors.cmd:connect"),
        "http://": ConnectorEntry("http://HOST[:PORT]/PATH", "sredrill.agents.connectors.http:connect"),
        "https://": ConnectorEntry("https://HOST[:PORT]/PATH", "sredrill.agents.connectors.http:connect"),
        "openai:": ConnectorEntry("openai:MODEL", "sredrill.agents.connectors.openai:connect"),
        "reference": ConnectorEntry("reference", "sredrill.agents.reference:connect"),
        "rds-reference": ConnectorEntry("rds-reference", "sredrill.agents.reference:connect_rds"),
        "k8s-reference": ConnectorEntry("k8s-reference", "sredrill.agents.k8s_reference:connect"),
        "majority": ConnectorEntry("majority", "sredrill.agents.baselines:connect_majority"),
        "majority:": ConnectorEntry("majority:TRAINING_PACK", "sredrill.agents.baselines:connect_majority"),
        "keyword": ConnectorEntry("keyword", "sredrill.agents.baselines:connect_keyword"),
        "random": ConnectorEntry("random", "sredrill.agents.baselines:connect_random"),
        "redteam:": ConnectorEntry("redteam:NAME[=MODE]", "sredrill.agents.redteam:connect"),
    }
)


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """A parsed `--agent SPEC`: which connector, and what it connects to.

    Stored with each run, so `--resume` and `runs compare` know which agent produced a result.
    """

    text: str
    """The spec as the user wrote it (`py:examples.agents.echo_agent:agent`)."""
    prefix: str
    """The `CONNECTORS` key it matched (`py:`, `cmd:`, `reference`)."""
    target: str
    """What follows the prefix (`examples.agents.echo_agent:agent`); "" for a bare name."""


@dataclass(frozen=True, slots=True)
class ConnectOptions:
    """Run-wide settings a connector may need; each connector reads only its own."""

    base_url: str | None = None
    """OpenAI-compatible endpoint for `openai:` agents (`--base-url` / `OPENAI_BASE_URL`)."""
    api_key: str | None = field(default=None, repr=False)
    """Key for that endpoint; never shown in a repr or a log."""
    packs: tuple[Any, ...] = ()
    """The scenario packs of the run (`sredrill.scenarios.Pack`), for baselines built from a pack (`majority`)."""
    seed: int | None = None
    """Seed for seeded agents (`random`), from `--seed`."""
    isolation: IsolationPolicy | None = None
    """The run's isolation policy, for connectors that start the user's code (`cmd:`, `py:`); None: level none."""


class Connector(Protocol):
    """The factory each `CONNECTORS` entry names: checks the target now, so a bad spec fails before any run."""

    def __call__(self, spec: AgentSpec, options: ConnectOptions, /) -> Agent: ...


def _is_prefix(key: str) -> bool:
    return key.endswith(":") or key.endswith("://")


def _suggestion(text: str) -> str:
    """The closest accepted form to a spec nobody recognised, as a "did you mean" phrase or ""."""
    head, sep, rest = text.partition(":")
    # Compare connector names only (`pyy` with `py`): a long target would make every candidate look alike.
    for key in CONNECTORS:
        if did_you_mean(head, [key.rstrip(":/")]):
            return f"did you mean {key + rest if _is_prefix(key) and sep else key!r}?"
    if "://" in text:
        return ""
    # Two common slips: a Python target or a command without its prefix.
    if sep and rest and "/" not in text and " " not in text:
        return f"did you mean {'py:' + text!r}?"
    if "/" in text or " " in text:
        return f"did you mean {'cmd:' + text!r}?"
    return ""


def parse_agent_spec(text: str) -> AgentSpec:
    """Split an agent spec into its connector prefix and target.

    Args:
        text: the spec, e.g. `py:pkg.module:attr` or `cmd:python agent.py`.

    Returns:
        The parsed spec; the target is not checked yet (`resolve_agent` does that).

    Raises:
        AgentSpecError: no connector accepts the spec; the message lists the accepted forms.
    """
    stripped = text.strip()
    for key in CONNECTORS:
        if _is_prefix(key) and stripped.startswith(key):
            return AgentSpec(text=stripped, prefix=key, target=stripped[len(key) :])
        if not _is_prefix(key) and stripped == key:
            return AgentSpec(text=stripped, prefix=key, target="")
    what = f"unknown agent spec {text!r}" if stripped else "the agent spec is empty"
    hint = " ".join(p for p in (_suggestion(stripped), "pass --agent in one of the allowed forms") if p)
    raise AgentSpecError(what, field="--agent", allowed=[entry.form for entry in CONNECTORS.values()], hint=hint)


def _load_connector(spec: AgentSpec) -> Connector:
    module_name, _, attr = CONNECTORS[spec.prefix].factory.partition(":")
    connector: Connector = getattr(importlib.import_module(module_name), attr)
    return connector


def resolve_agent(
    spec: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    packs: Sequence[Any] = (),
    seed: int | None = None,
    isolation: IsolationPolicy | None = None,
) -> Agent:
    """Resolve an `--agent SPEC` into a ready agent, checking its target now rather than mid-run.

    Args:
        spec: `py:MODULE:ATTR` (an async Python callable), `cmd:COMMAND` (a subprocess), `http(s)://…` (an
            agent service), `openai:MODEL` (the built-in LLM agent), or a built-in agent's name (DESIGN §4).
        base_url: OpenAI-compatible endpoint, for connectors that talk to a model.
        api_key: key for that endpoint.
        packs: the run's scenario packs, for agents built from a pack (the `majority` baseline).
        seed: for seeded agents (the `random` baseline).
        isolation: the run's isolation policy (`sredrill.isolation.resolve_isolation`); None: level none.

    Returns:
        An `Agent` whose `spec` is the spec as given.

    Raises:
        AgentSpecError: the spec is unknown, or its target cannot be used (module not importable,
            attribute missing or not async, command empty or not found); the message says how to fix it.
    """
    parsed = parse_agent_spec(spec)
    options = ConnectOptions(base_url=base_url, api_key=api_key, packs=tuple(packs), seed=seed, isolation=isolation)
    return _load_connector(parsed)(parsed, options)
