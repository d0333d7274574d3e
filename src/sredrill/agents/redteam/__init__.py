"""Red-team agents: shortcuts a grading must not reward, each using the full citation protocol (issue 16).

They read only what tool results return (every item's `"id"`, a pod log's `"ids"`), cite items with facts
that hold on the points served, and fail — when they fail — on the grading's judgement of their conclusion.
`sredrill audit` runs them beside the reference agent and the baselines (`sredrill.engine.audit`).

| spec | agent |
|---|---|
| `redteam:stuffer=MODE+MODE` | the label oracle: told the true modes, stuffs every tool, citation, rule-out and word |
| `redteam:alert-only` | the alert's words → a mode; one call per tool; first item of each result cited |
| `redteam:zscore` | the most anomalous series (or counted record) → the mode its name's words point to |
| `redteam:constant=MODE` | one mode for every alert |
| `redteam:guesser` | a random mode each attempt (seed from `--seed`); run with `--retries 5` |
| `redteam:enumerator` | every series first, then the reference agent's answer: fails only Axis 2's data budget |

Examples:
    >>> from sredrill.agents import resolve_agent
    >>> resolve_agent("redteam:constant=storage_full").spec
    'redteam:constant=storage_full'
"""

from __future__ import annotations

from .connect import REDTEAM_AGENTS, RedTeamAgent, connect
from .enumerator import EnumeratorAgent
from .guesses import ConstantAgent, GuesserAgent
from .notebook import Notebook, Seen, investigate
from .oracle import StufferAgent
from .shortcuts import AlertOnlyAgent, ZScoreAgent, signal_mode

__all__ = [
    "REDTEAM_AGENTS",
    "AlertOnlyAgent",
    "ConstantAgent",
    "EnumeratorAgent",
    "GuesserAgent",
    "Notebook",
    "RedTeamAgent",
    "Seen",
    "StufferAgent",
    "ZScoreAgent",
    "connect",
    "investigate",
    "signal_mode",
]
