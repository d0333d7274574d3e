"""The domain seam: a scenario domain (RDS, Kubernetes, …) is one `Domain` declaration, registered by name.

The core (scenarios, evidence, grading, env, engine, the UI) handles alerts, evidence records by source, tools,
vocabularies and answer keys generically; everything a domain knows is in its declaration:

- **evidence sources** (`EvidenceSourceDecl`): the name (the file stem, `aws_rds_events`), the file patterns,
  the loader that reads the files into the domain's record models, other names a claim may cite it by;
- **tools** (`ToolDecl`), each declared once: name, argument model, description, the source it reads, the
  upstream suite's trajectory action names it answers to, and the environment action that calls it. The tool
  catalogue and its JSON schemas (`evidence.tool_specs`), grading's source table (`grading.sources`), the answer
  key's trajectory names and the env's RCA actions are all derived from these;
- the **failure-mode vocabulary** as data (modes with category, description, aliases; sets); every domain
  also has the core's `healthy` (alias `recovered`) and `unknown`;
- the **agent prompt**, **lint rules**, **blinding rules** and **evidence views** (generic series, timeline,
  table and text views the UI renders);
- the **evidence server** that answers its tools and the **reference agent**, both as lazy `"module:attr"`
  strings: the core never imports a domain's code.

`DOMAINS` maps a name to the `"module:attr"` of its declaration, as `agents.spec.CONNECTORS` does for agents, so
a low layer (the loader) resolves a domain without a static import of the layer above it. A pack names its
domain in `pack.yml` (`domain: rds`); a pack without one is recognised by its scenario folders' files.

Examples:
    >>> rds = get_domain("rds")
    >>> rds.tool_names[:3]
    ('get_alert', 'list_metrics', 'query_metrics')
    >>> rds.tool_source("get_events")
    'aws_rds_events'
"""

from __future__ import annotations

import dataclasses
import fnmatch
import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Final, Literal, Protocol, TypeVar

from pydantic import BaseModel

from sredrill.diagnosis import Category, Diagnosis
from sredrill.errors import PackError, did_you_mean
from sredrill.scenarios.findings import Finding
from sredrill.scenarios.metadata import ScenarioMetadata
from sredrill.scenarios.pack import Scenario, SourceData
from sredrill.scenarios.vocabulary import FailureMode, Vocabulary

__all__ = [
    "ALERT_SOURCE",
    "ALERT_TOOL",
    "DOMAINS",
    "SUBMIT_TOOL",
    "BlindRules",
    "Domain",
    "EvidenceSourceDecl",
    "LintRule",
    "SourceData",
    "SourceFiles",
    "ToolDecl",
    "View",
    "ViewSpec",
    "all_action_targets",
    "combined_vocabulary",
    "domain_names",
    "domain_of_tools",
    "every_domain",
    "get_domain",
    "recognise_domain",
    "submit_description",
]

M = TypeVar("M", bound=BaseModel)

ALERT_SOURCE: Final = "alert"
"""The alert is evidence of every domain, though it has no file stem of its own."""
ALERT_TOOL: Final = "get_alert"
SUBMIT_TOOL: Final = "submit_diagnosis"

DOMAINS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "k8s": "sredrill.domains.k8s:DOMAIN",
        "rds": "sredrill.domains.rds:DOMAIN",
    }
)
"""Domain name -> `"module:attr"` of its `Domain` declaration, imported on first use."""


class SourceFiles(Protocol):
    """What a source's loader reads a scenario folder through (the loader implements it).

    Files are looked up in the scenario's own folder first, then in its `base:` folder; every file read is
    recorded for the scenario's `files`, and every error is a `PackError` naming file, field and fix.
    """

    @property
    def folders(self) -> tuple[str, ...]:
        """The scenario's folder, then its base folder (when it has one)."""
        ...

    def rel(self, folder: str, file: str) -> str:
        """The file's path relative to the pack's parent (for messages and `Scenario.files`)."""
        ...

    def exists(self, folder: str, file: str) -> bool:
        """True when `folder` holds the file."""
        ...

    def glob(self, folder: str, pattern: str) -> list[str]:
        """The file names of `folder` matching `pattern`, sorted (undecodable names refused)."""
        ...

    def read(self, model: type[M], file: str, folder: str | None = None) -> M:
        """Read and validate a file (from `folder`, or the scenario's folder then its base), recording it."""
        ...

    def missing(self, file: str, source: str) -> PackError:
        """The error for a file `available_evidence` promises and no folder holds."""
        ...


@dataclass(frozen=True, slots=True)
class EvidenceSourceDecl:
    """One evidence source of a domain: a file family of the scenario folder and how to read it."""

    name: str
    """The source id: the file stem (`aws_rds_events`); claims cite it, answer keys require it."""
    description: str
    files: tuple[str, ...]
    """The file names or glob patterns of the source (`aws_cloudwatch_metrics*.json`): recognition and docs."""
    load: Callable[[SourceFiles], SourceData]
    """Reads the source's files of one scenario (called only when `available_evidence` lists it)."""
    citations: tuple[str, ...] = ()
    """Other names a claim may cite the source by (`cloudwatch`, `metrics`), besides its id and its tools."""


@dataclass(frozen=True, slots=True)
class ToolDecl:
    """One tool of a domain, declared once: everything else about it is derived from this."""

    name: str
    description: str
    """What the agent is told the tool does."""
    arguments: type[BaseModel]
    """The model its arguments are validated against; its JSON Schema is what agents see."""
    source: str
    """The evidence source it reads (`ALERT_SOURCE` for the alert)."""
    legacy: tuple[str, ...] = ()
    """The upstream suite's trajectory action names that stand for this tool (`query_grafana_metrics`)."""
    action: str | None = None
    """The environment action that calls it (`inspect_metrics`); None: not reachable from the env."""
    target: str | None = None
    """The action's `target` value that picks this tool (`events`), when several tools share the action."""
    target_argument: str | None = None
    """The argument the action's free `target` fills (`metric_name`); the tool with it is the one for a target."""


class LintRule(Protocol):
    """A domain's lint check of one loaded scenario."""

    def __call__(self, scenario: Scenario, vocabulary: Vocabulary, /) -> Iterable[Finding]: ...


@dataclass(frozen=True, slots=True)
class View:
    """What the UI renders for one evidence view of a scenario (one of the four generic kinds)."""

    kind: Literal["series", "timeline", "table", "text"]
    title: str
    series: tuple[tuple[str, str, tuple[tuple[datetime, float], ...]], ...] = ()
    """`series`: (title, unit, points) per chart."""
    events: tuple[tuple[datetime, str], ...] = ()
    """`timeline`: (moment, text) per event."""
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    """`table`: the header and the rows (text cells)."""
    text: str = ""
    """`text`: preformatted text."""


@dataclass(frozen=True, slots=True)
class ViewSpec:
    """An evidence view a domain declares for the UI: a title, the source it shows, and how to build it."""

    title: str
    source: str
    build: Callable[[Scenario], View]


@dataclass(frozen=True, slots=True)
class BlindRules:
    """A domain's additions to blind mode (the core's rules apply to every domain)."""

    answer_keys: tuple[str, ...] = ()
    """Alert label or annotation keys that carry the answer whatever their value (`rds_failure_mode`)."""


# The alert is every domain's; so is the diagnosis. Their declarations are the core's.
_ALERT_DESCRIPTION = (
    "The alert that opened the incident: title, state, labels, annotations, and when it started "
    "(starts_at, ISO-8601 UTC)."
)


@dataclass(frozen=True, slots=True, eq=False)
class Domain:
    """One scenario domain: its sources, tools, vocabulary, prompt, rules, views, server and reference agent."""

    name: str
    title: str
    """A few words for people (`Amazon RDS for PostgreSQL`)."""
    metadata: type[ScenarioMetadata]
    """Its `scenario.yml` model (the shared keys plus the domain's own)."""
    sources: tuple[EvidenceSourceDecl, ...]
    tools: tuple[ToolDecl, ...]
    """Its evidence tools, in the order agents see them (`get_alert` comes first, `submit_diagnosis` last)."""
    failure_modes: tuple[FailureMode, ...]
    """Its failure modes (the core's `healthy` and `unknown` are added)."""
    prompt: str
    """What every agent is asked; it names no scenario, folder or failure mode (blind mode)."""
    server: str
    """`"module:attr"` of the class that serves its tools over one scenario (see `evidence.serving`)."""
    reference_agent: str
    """The agent spec of its reference agent (`reference`)."""
    failure_mode_sets: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    """Names that stand for several failure modes (`dual_resource_exhaustion`)."""
    alert_legacy: tuple[str, ...] = ()
    """The upstream suite's trajectory action names that stand for `get_alert`."""
    resource_kinds: tuple[str, ...] = ()
    """The kinds of resource its scenarios are about (`db-instance`)."""
    lint: tuple[LintRule, ...] = ()
    visible_text: Callable[[Scenario], Iterator[tuple[str, str, str]]] | None = None
    """(file, field, text) of every string of its evidence an agent can see: lint's leak rule reads them."""
    blinding: BlindRules = BlindRules()
    views: tuple[ViewSpec, ...] = ()
    attributes: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    """The default of each scenario attribute its sources expose (`SourceData.attributes`), for a scenario
    without that source."""
    keyword_aliases: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    """Keyword -> spellings a grader accepts for it, in every pack of the domain (a pack's `pack.yml` adds more)."""
    compat_categories: Mapping[str, tuple[Category, ...]] = field(default_factory=lambda: MappingProxyType({}))
    """Failure mode -> the categories compatibility grading (answer keys in the upstream format) also accepts for
    a scenario of that mode, beside its key's own category."""

    # -- derived: tools ---------------------------------------------------------------------------------

    @property
    def all_tools(self) -> tuple[ToolDecl, ...]:
        """`get_alert`, the domain's tools, then `submit_diagnosis`: the toolset agents see, in order."""
        return _all_tools(self)

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The names of `all_tools`, in order."""
        return tuple(t.name for t in self.all_tools)

    def tool(self, name: str) -> ToolDecl | None:
        """The tool of that name, or None."""
        return next((t for t in self.all_tools if t.name == name), None)

    def tool_source(self, name: str) -> str | None:
        """The evidence source a tool reads; None for `submit_diagnosis` and unknown names."""
        tool = self.tool(name)
        return tool.source if tool is not None and tool.name != SUBMIT_TOOL else None

    @property
    def tool_sources(self) -> Mapping[str, str]:
        """Tool name -> the evidence source it reads (`submit_diagnosis` reads nothing)."""
        return MappingProxyType({t.name: t.source for t in self.all_tools if t.name != SUBMIT_TOOL})

    @property
    def legacy_actions(self) -> Mapping[str, tuple[str, ...]]:
        """The upstream suite's trajectory action names -> the tools each stands for, in tool order."""
        out: dict[str, list[str]] = {}
        for tool in self.all_tools:
            for name in tool.legacy:
                out.setdefault(name, []).append(tool.name)
        return MappingProxyType({k: tuple(v) for k, v in sorted(out.items())})

    @property
    def trajectory_actions(self) -> tuple[str, ...]:
        """Every name an answer key's `optimal_trajectory` may use: the tools, then the legacy names."""
        return (*self.tool_names, *self.legacy_actions)

    def trajectory_tools(self, actions: Iterable[str]) -> frozenset[str]:
        """The tool names a list of trajectory actions stands for, the upstream suite's names mapped."""
        legacy = self.legacy_actions
        return frozenset(tool for a in actions for tool in legacy.get(a, (a,)))

    def action_targets(self, action: str) -> tuple[str, ...]:
        """The `target` values of an environment action that pick one tool each (`inspect_logs`: events, …)."""
        return tuple(t.target for t in self.all_tools if t.action == action and t.target is not None)

    def action_tool(self, action: str, target: str | None) -> tuple[ToolDecl, str | None]:
        """The tool an environment action with this target calls, and the argument the target fills (or None).

        A target among the action's `action_targets` picks its tool; any other target goes to the action's tool
        with a `target_argument`; no target, to its tool without one.

        Raises:
            KeyError: the action calls no tool of this domain.
        """
        tools = [t for t in self.all_tools if t.action == action]
        if not tools:
            raise KeyError(action)
        for t in tools:
            if target is not None and t.target == target:
                return t, None
        if target is not None:
            for t in tools:
                if t.target_argument:
                    return t, t.target_argument
        return next((t for t in tools if t.target is None and not t.target_argument), tools[0]), None

    # -- derived: sources -----------------------------------------------------------------------------

    @property
    def source_names(self) -> tuple[str, ...]:
        """The domain's evidence sources (file stems), in declaration order."""
        return tuple(s.name for s in self.sources)

    def source(self, name: str) -> EvidenceSourceDecl | None:
        """The source of that name, or None."""
        return next((s for s in self.sources if s.name == name), None)

    def sources_of(self, tools: Iterable[str]) -> frozenset[str]:
        """The evidence sources a set of tool calls read (unknown names read nothing)."""
        table = self.tool_sources
        return frozenset(table[t] for t in tools if t in table)

    @property
    def citation_names(self) -> Mapping[str, str]:
        """Accepted citation (normalised: lower case, spaces and hyphens as `_`) -> source id.

        A claim may cite a source by its id, its declared short forms, or a tool that reads it.
        """
        out: dict[str, str] = dict(self.tool_sources)
        for s in self.sources:
            out.update({c: s.name for c in s.citations})
        out.update({s: s for s in (ALERT_SOURCE, *self.source_names)})
        return MappingProxyType(out)

    # -- derived: the vocabulary and the identifiers ---------------------------------------------------

    def vocabulary(self) -> Vocabulary:
        """The domain's built-in vocabulary (a fresh object)."""
        vocabulary = Vocabulary.builtin(self.failure_modes, self.failure_mode_sets)
        if self.keyword_aliases:
            vocabulary = vocabulary.extended(keyword_aliases=self.keyword_aliases, source=f"the {self.name} domain")
        return vocabulary

    def task_prompt(self, vocabulary: Vocabulary | None = None) -> str:
        """What every agent of a pack of this domain is asked: `prompt`, then the published vocabulary.

        Args:
            vocabulary: the pack's vocabulary (`Pack.vocabulary`, which adds its `pack.yml`'s modes); default:
                the domain's.

        Returns:
            The same text for every scenario of the pack: it names failure modes, but none of one scenario's
            (DESIGN §2, amended by issue 16).
        """
        return f"{self.prompt}\n\n{(vocabulary or self.vocabulary()).catalogue()}"

    def identifiers(self) -> frozenset[str]:
        """Every name the domain declares that the core must never spell: its sources, its tools (not the core's
        `get_alert` and `submit_diagnosis`), their legacy names, its failure modes, aliases and sets, its resource
        kinds, its scenario attributes and its own `scenario.yml` keys."""
        names = {*self.source_names, *self.resource_kinds, *self.legacy_actions, *self.attributes}
        names.update(t.name for t in self.tools)
        for mode in self.failure_modes:
            names.update((mode.name, *mode.aliases))  # not the synonyms: ordinary words (`FailureMode.synonyms`)
        names.update(self.failure_mode_sets)
        names.update(set(self.metadata.model_fields) - set(ScenarioMetadata.model_fields))
        return frozenset(names)

    def recognises(self, folder: Path) -> bool:
        """True when a scenario folder holds a file of one of the domain's sources (the upstream layout)."""
        try:
            names = [p.name for p in folder.iterdir() if p.is_file()]
        except OSError:
            return False
        return any(fnmatch.fnmatchcase(n, pattern) for s in self.sources for pattern in s.files for n in names)


@cache
def _all_tools(domain: Domain) -> tuple[ToolDecl, ...]:
    # The evidence layer's `NoArgs` (strict, no arguments) is above this module: looked up on first use.
    no_args: type[BaseModel] = importlib.import_module("sredrill.evidence.arguments").NoArgs
    alert = ToolDecl(
        ALERT_TOOL, _ALERT_DESCRIPTION, no_args, ALERT_SOURCE, legacy=domain.alert_legacy, action="inspect_alert"
    )
    submit = ToolDecl(SUBMIT_TOOL, submit_description(domain), Diagnosis, "", action=SUBMIT_TOOL)
    return (alert, *domain.tools, submit)


_SUBMIT_EXAMPLE = (
    '{"root_cause": "...", "failure_modes": ["<mode>"], "claims": [{"text": "...", "evidence": [{"item": '
    '"event-0a1b2c3d4e", "fact": "present"}], "supports": ["<mode>"]}], '
    '"ruled_out": [{"hypothesis": "<other mode>", "reason": "...", "evidence": ["log-5d6e7f8a9b"]}], '
    '"location": ["<resource>"]}'
)


def submit_description(domain: Domain) -> str:
    """What `submit_diagnosis` tells every agent of the domain: what a diagnosis holds and how to cite evidence.

    The vocabulary itself is in the `failure_modes` field's description (`evidence.tool_specs`) and in the task
    prompt (`Domain.task_prompt`), from the pack's vocabulary. At most 1024 characters: the longest tool
    description some OpenAI-compatible servers accept.
    """
    kinds = ", ".join(domain.resource_kinds) or "resource"
    return (
        "Submit your diagnosis (it ends the run). An invalid one (an unknown failure mode, say) is rejected with "
        "what to fix: fix it and resubmit. failure_modes: names from that field's list. Cite the items tool "
        'results name by their "id": an id, or {item, fact, value, start, end} with fact rising, falling, flat (the '
        "trend of the points you got), above/below value (all points), absent (no point) or present; "
        "start/end narrow it to a window. At most 3 per claim, 8 distinct items in all, each served in "
        "this run. supports: the modes a claim backs (empty: all). ruled_out[].evidence: citations refuting the "
        f"hypothesis. location: the resources at fault ({kinds}) as the evidence names them. "
        f"Example: {_SUBMIT_EXAMPLE}"
    )


def domain_names() -> tuple[str, ...]:
    """The registered domains, sorted."""
    return tuple(sorted(DOMAINS))


@cache
def get_domain(name: str) -> Domain:
    """The declaration of a registered domain, imported on first use.

    Raises:
        PackError: no such domain (with "did you mean" and the registered names).
    """
    target = DOMAINS.get(name)
    if target is None:
        hint = did_you_mean(str(name), DOMAINS)
        raise PackError(
            f"no domain {name!r}",
            field="domain",
            allowed=domain_names(),
            hint=(hint + "\n  " if hint else "") + "name a registered domain in pack.yml (see docs/domains.md)",
        )
    module, attr = target.split(":")
    domain: Domain = getattr(importlib.import_module(module), attr)
    if domain.name != name:
        raise PackError(f"the domain registered as {name!r} declares the name {domain.name!r}", field="domain")
    return domain


def every_domain() -> tuple[Domain, ...]:
    """Every registered domain, in the registry's order."""
    return tuple(get_domain(name) for name in domain_names())


def domain_of_tools(names: Iterable[str]) -> Domain | None:
    """The domain whose tools these are: the most of its own tools named and the fewest others (the first
    registered on a tie); None when no name is a domain's own tool (only `get_alert`, `submit_diagnosis`)."""
    named = set(names)
    shared = {ALERT_TOOL, SUBMIT_TOOL}
    domains = [d for d in every_domain() if named & (set(d.tool_names) - shared)]
    if not domains:
        return None
    return max(
        domains, key=lambda d: (len(named & set(d.tool_names)) - len(named - set(d.tool_names)), -domains.index(d))
    )


def all_action_targets(action: str) -> tuple[str, ...]:
    """The targets an environment action takes in any registered domain, each once: what a static action
    schema lists before a task (and so its domain) is known."""
    return tuple(dict.fromkeys(t for domain in every_domain() for t in domain.action_targets(action)))


def combined_vocabulary() -> Vocabulary:
    """Every registered domain's failure modes and sets in one vocabulary (a mode two domains share is the first
    one's): what a baseline reads when it is given no pack's vocabulary."""
    modes: dict[str, FailureMode] = {}
    sets: dict[str, tuple[str, ...]] = {}
    taken: set[str] = set()
    for domain in every_domain():
        for mode in domain.failure_modes:
            if mode.name in taken:
                continue
            # An alias another domain already uses (as a name or an alias) stays that domain's.
            aliases = tuple(a for a in mode.aliases if a not in taken)
            synonyms = tuple(a for a in mode.synonyms if a not in taken)
            modes[mode.name] = dataclasses.replace(mode, aliases=aliases, synonyms=synonyms)
            taken.update((mode.name, *aliases, *synonyms))
        for name, members in domain.failure_mode_sets.items():
            sets.setdefault(name, members)
    return Vocabulary.builtin(modes.values(), sets)


def recognise_domain(folders: Iterable[Path]) -> str | None:
    """The domain whose source files the scenario folders hold (the first folder that tells), or None."""
    for folder in folders:
        matches = [n for n in domain_names() if get_domain(n).recognises(folder)]
        if len(matches) == 1:
            return matches[0]
    return None
