"""`redteam:NAME[=MODES]`: the connector of the red-team agents (one line in `agents.spec.CONNECTORS`)."""

from __future__ import annotations

from sredrill.agents.spec import AgentSpec, ConnectOptions
from sredrill.errors import AgentSpecError, did_you_mean
from sredrill.scenarios import Pack, Vocabulary
from sredrill.scenarios.domain import combined_vocabulary

from .enumerator import EnumeratorAgent
from .guesses import ConstantAgent, GuesserAgent
from .oracle import StufferAgent
from .shortcuts import AlertOnlyAgent, ZScoreAgent

__all__ = ["REDTEAM_AGENTS", "RedTeamAgent", "connect"]

REDTEAM_AGENTS = ("stuffer=MODE[+MODE]", "alert-only", "zscore", "constant=MODE", "guesser", "enumerator")
"""The targets `redteam:` accepts."""

RedTeamAgent = StufferAgent | AlertOnlyAgent | ZScoreAgent | ConstantAgent | GuesserAgent | EnumeratorAgent


def _vocabulary(options: ConnectOptions) -> Vocabulary:
    """The run's pack's vocabulary (a pack may add modes); with none or several packs, every domain's."""
    packs = [p for p in options.packs if isinstance(p, Pack)]
    return packs[0].vocabulary if len(packs) == 1 else combined_vocabulary()


def _modes(text: str, spec: AgentSpec, options: ConnectOptions) -> list[str]:
    """The canonical failure modes `MODE+MODE` names, each checked against the vocabulary."""
    vocabulary = _vocabulary(options)
    names = [n.strip() for n in text.split("+") if n.strip()]
    if not names:
        raise AgentSpecError(f"{spec.text!r} names no failure mode", field="--agent", hint="e.g. MODE or MODE+MODE")
    for name in names:
        if not vocabulary.is_failure_mode(name):
            raise AgentSpecError(
                f"{spec.text!r}: {name!r} is not a failure mode of the run's packs",
                field="--agent",
                allowed=vocabulary.names,
                hint=did_you_mean(name, vocabulary.names) or "name a mode of the pack's vocabulary",
            )
    return [vocabulary.resolve(n) for n in names]


def connect(spec: AgentSpec, options: ConnectOptions) -> RedTeamAgent:
    """`redteam:NAME[=MODES]`: one of `REDTEAM_AGENTS`, built for the run's packs (their vocabulary).

    Raises:
        AgentSpecError: an unknown red-team agent, or a mode the run's packs do not know.
    """
    name, _, arg = spec.target.partition("=")
    packs = options.packs
    if name == "stuffer" and arg:
        return StufferAgent(_modes(arg, spec, options), packs=packs, spec=spec.text)
    if name == "constant" and arg:
        return ConstantAgent(_modes(arg, spec, options)[0], packs=packs, spec=spec.text)
    if name == "alert-only" and not arg:
        return AlertOnlyAgent(packs=packs, spec=spec.text)
    if name == "zscore" and not arg:
        return ZScoreAgent(packs=packs, spec=spec.text)
    if name == "enumerator" and not arg:
        return EnumeratorAgent(spec=spec.text)
    if name == "guesser" and not arg:
        return GuesserAgent(options.seed if options.seed is not None else 0, packs=packs, spec=spec.text)
    hint = did_you_mean(name, [r.partition("=")[0] for r in REDTEAM_AGENTS])
    raise AgentSpecError(
        f"unknown red-team agent {spec.text!r}",
        field="--agent",
        allowed=[f"redteam:{r}" for r in REDTEAM_AGENTS],
        hint=hint or "stuffer and constant take their modes after '=' (redteam:constant=MODE)",
    )
