"""`RcaToolset`: the tools an RCA agent calls on one scenario, served by one backend, with an audit log.

An agent never reads fixture files (DESIGN §3): it calls `get_alert`, its domain's evidence tools and
`submit_diagnosis` on a toolset built for its run. The tools are the scenario's domain's (`scenarios.domain`);
the toolset validates each call against the declared argument model, answers `get_alert` and
`submit_diagnosis`, and hands the others to the domain's server (`evidence.serving`). The `Recorder` wraps
`call` and puts every call on the trajectory; the toolset keeps the audit log of what it answered, and the
temporal clock.

Examples:
    >>> pack = load_pack("rds_postgres")
    >>> tools = RcaToolset(pack.scenario("001-replication-lag"), BackendMode.SELECTIVE,
    ...                    vocabulary=pack.vocabulary)
    >>> await tools.call("query_metrics", {"metric_name": "replica"})      # doctest: +SKIP
    {'series': [{'metric_name': 'ReplicaLag', 'stat': 'Average', …}]}
    >>> tools.returned_metrics()                                            # doctest: +SKIP
    ('ReplicaLag',)
    >>> tools.points_served(), tools.data_budget.points                     # doctest: +SKIP
    (30, 504)
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, JsonValue

from sredrill.diagnosis import Category, Diagnosis
from sredrill.errors import did_you_mean
from sredrill.evidence.arguments import parse_arguments
from sredrill.evidence.audit import AuditEntry
from sredrill.evidence.budget import DataBudget, data_budget, series_points
from sredrill.evidence.clock import WAIT_TOOL, WaitArgs, advance, wait_spec
from sredrill.evidence.index import iso
from sredrill.evidence.items import ServedItem, merge_items
from sredrill.evidence.modes import BackendMode
from sredrill.evidence.serving import CallContext, DomainServer, ToolAnswer, server_factory
from sredrill.evidence.specs import tool_specs
from sredrill.scenarios import BlindAlert, Scenario, Vocabulary, blind_alert, normalize_name
from sredrill.scenarios.domain import ALERT_TOOL, SUBMIT_TOOL, Domain, get_domain
from sredrill.trajectory import ToolError, ToolSpec

__all__ = ["RcaToolset", "ScenarioEvidence"]


class ScenarioEvidence:
    """One scenario's evidence, prepared on first use and shared by every toolset over it.

    `sredrill run --axis2` serves each scenario twice (one toolset per axis); the index of its evidence and its
    blinded alert are the costly part of a toolset and do not depend on the backend, so both axes share them.
    Nothing here changes after it is built: a toolset's per-run state stays on the toolset.
    """

    __slots__ = ("_alerts", "_bounds", "_index", "domain", "scenario", "vocabulary")

    def __init__(self, scenario: Scenario, vocabulary: Vocabulary | None = None) -> None:
        self.scenario = scenario
        self.domain: Domain = get_domain(scenario.domain)
        self.vocabulary = vocabulary or self.domain.vocabulary()
        self._index: DomainServer | None = None
        self._alerts: dict[bool, str] = {}
        self._bounds: tuple[DataBudget, datetime | None] | None = None

    def __repr__(self) -> str:
        return f"ScenarioEvidence({self.scenario.qualified_id!r})"

    @property
    def index(self) -> DomainServer:
        """The scenario's evidence, prepared by its domain's server (built once)."""
        if self._index is None:
            self._index = server_factory(self.domain)(self.scenario)
        return self._index

    @property
    def data_budget(self) -> DataBudget:
        """The scenario's data budget (`evidence.budget`): the answer key's `data_budget`, else the default."""
        return self._measured()[0]

    @property
    def ended_at(self) -> datetime | None:
        """The latest moment of the scenario's dated evidence (where `wait` stops the clock); None if undated."""
        return self._measured()[1]

    def _measured(self) -> tuple[DataBudget, datetime | None]:
        if self._bounds is None:
            items = self.index.items()
            moments = [m for i in items for m in (i.at, *(t for t, _ in i.points[-1:])) if m is not None]
            budget = data_budget(items, self.scenario.answer.data_budget)
            self._bounds = (budget, max(moments, default=None))
        return self._bounds

    def alert_json(self, blind: bool) -> str:
        """What `get_alert` answers, as JSON: the `BlindAlert` when `blind`, else the raw alert (built once each)."""
        text = self._alerts.get(blind)
        if text is None:
            text = self._alerts[blind] = json.dumps(self._alert_payload(blind))
        return text

    def _alert_payload(self, blind: bool) -> dict[str, JsonValue]:
        scenario, started = self.scenario, self.index.started_at
        alert: BlindAlert | None = blind_alert(scenario, self.vocabulary) if blind else None
        if alert is not None:
            title, state, labels, annotations = alert.title, alert.state, alert.labels, alert.annotations
        else:
            raw = scenario.alert
            title, state, labels, annotations = raw.title, raw.state, raw.common_labels, raw.common_annotations
        return {
            "title": title,
            "state": state,
            "labels": dict(labels),
            "annotations": dict(annotations),
            "starts_at": iso(started) if started is not None else None,
        }


class RcaToolset:
    """The RCA tools over one scenario and one backend; one per agent run, never shared.

    Implements the `Toolset` protocol. Mutable state (the audit log, the temporal clock, the submitted
    diagnosis) lives on this per-run object (STYLE #10). Under `temporal` it also offers `wait`
    (`evidence.clock`), the only call that moves the clock.

    Attributes:
        mode: the backend serving the evidence.
        vocabulary: the pack's vocabulary: `submit_diagnosis` lists it and refuses a failure mode it lacks.
        submitted: the last diagnosis accepted by `submit_diagnosis`, or None.
    """

    def __init__(
        self,
        scenario: Scenario,
        mode: BackendMode | str,
        *,
        blind: bool = True,
        vocabulary: Vocabulary | None = None,
        evidence: ScenarioEvidence | None = None,
    ) -> None:
        """Build the toolset; the scenario's evidence is prepared once (or shared), so calls stay cheap.

        Args:
            scenario: the scenario whose evidence the tools serve.
            mode: `full`, `selective` or `temporal`.
            blind: when True (the default), `get_alert` returns the `BlindAlert`; False serves the raw alert
                (`--no-blind`).
            vocabulary: the scenario's pack vocabulary (`Pack.vocabulary`), whose failure-mode and category
                names blind mode scrubs from the alert; default: the built-in vocabulary, which misses any
                failure mode the pack's `pack.yml` adds, so pass it.
            evidence: the scenario's prepared evidence, shared with other toolsets over the same scenario (its
                vocabulary is the one blind mode uses); default: prepared here for this toolset alone.

        Raises:
            ValueError: `mode` is not a backend mode, or `evidence` is another scenario's.
        """
        self.mode = BackendMode(mode)
        self.submitted: Diagnosis | None = None
        if evidence is None:
            evidence = ScenarioEvidence(scenario, vocabulary)
        elif evidence.scenario is not scenario:
            raise ValueError(f"the evidence given is {evidence.scenario.qualified_id}'s, not {scenario.qualified_id}'s")
        self.domain = evidence.domain
        self.vocabulary = evidence.vocabulary
        self._index = evidence.index
        self._evidence = evidence
        self._alert_json = evidence.alert_json(blind)
        self._audit: list[AuditEntry] = []
        self._clock: datetime | None = self._index.started_at if self.mode.has_clock else None
        self._names = (*self.domain.tool_names, WAIT_TOOL) if self.mode.has_clock else self.domain.tool_names
        self._arguments: Mapping[str, type[BaseModel]] = MappingProxyType(
            {t.name: t.arguments for t in self.domain.all_tools}
        )
        # The tool arguments whose value a name query asks for (`required_queries` reads what was asked).
        self._query_arguments: Mapping[str, str] = MappingProxyType(
            {t.name: t.target_argument for t in self.domain.tools if t.target_argument}
        )

    # -- the Toolset protocol ---------------------------------------------------------------------------

    def specs(self) -> list[ToolSpec]:
        """The domain's RCA tools, in the order agents see them: the same for every scenario of a pack
        (`submit_diagnosis` lists the pack's vocabulary) and every backend, plus `wait` under `temporal`."""
        specs = tool_specs(self.domain, self.vocabulary)
        if self.mode.has_clock:  # before submit_diagnosis, the last tool
            specs.insert(len(specs) - 1, wait_spec())
        return specs

    async def call(self, name: str, args: dict[str, Any]) -> JsonValue:
        """Run one tool.

        In `temporal` mode the call sees the current clock (at first the moment the alert fired); only `wait`
        moves it, forward by the minutes asked, stopped at the end of the scenario's data.

        Args:
            name: the tool's name.
            args: its arguments as a JSON object (`None` counts as none).

        Returns:
            The tool's result: a JSON object of fresh containers.

        Raises:
            ToolError: `unknown_tool` (with "did you mean"), or `bad_arguments` naming the argument, what was
                given and what is allowed.
        """
        clock = self._clock
        model = WaitArgs if name == WAIT_TOOL and self.mode.has_clock else self._arguments.get(name)
        if model is None:
            raise self._unknown(name)
        answer = self._answer(name, parse_arguments(name, model, args))
        self._audit.append(
            AuditEntry(
                tool=name,
                args=MappingProxyType(copy.deepcopy(dict(args or {}))),
                returned_metrics=answer.returned_metrics,
                n_points=answer.n_points,
                n_events=answer.n_events,
                clock=clock,
                items=answer.items,
            )
        )
        return answer.result

    # -- what grading and the engine read -----------------------------------------------------------------

    @property
    def audit(self) -> tuple[AuditEntry, ...]:
        """Every answered call, in order (a read-only snapshot of the append-only log)."""
        return tuple(self._audit)

    @property
    def clock(self) -> datetime | None:
        """The moment the next call will see (`temporal` only; None for the other backends)."""
        return self._clock

    @property
    def alert(self) -> dict[str, JsonValue]:
        """What `get_alert` returns, without making a call: for `Task.alert`, which the agent sees anyway."""
        alert: dict[str, JsonValue] = json.loads(self._alert_json)
        return alert

    def queried_metrics(self) -> tuple[str, ...]:
        """The names the agent asked the domain's name query for (its tool with a `target_argument`, e.g. a
        metric name), exactly as asked, once each, in order."""
        queries = self._query_arguments
        asked = (e.args.get(queries[e.tool]) for e in self._audit if e.tool in queries)
        return tuple(dict.fromkeys(a for a in asked if isinstance(a, str)))

    def points_served(self) -> int:
        """The distinct series points this run's calls served (what the data budget counts, `evidence.budget`)."""
        return series_points(self.served_items().values())

    @property
    def data_budget(self) -> DataBudget:
        """The scenario's data budget (the answer key's `data_budget`, else the default of `evidence.budget`)."""
        return self._evidence.data_budget

    def returned_metrics(self) -> tuple[str, ...]:
        """The metric names returned to the agent by a selective query (`selective` or `temporal`), once each.

        Empty under `full`: there every query returns every series, so being returned proves nothing about
        what the agent chose to look at (grading's `required_queries` check, DESIGN §5).
        """
        if not self.mode.filters_by_name:
            return ()
        names = (n for e in self._audit for n in e.returned_metrics)
        return tuple(dict.fromkeys(names))

    def served_items(self) -> Mapping[str, ServedItem]:
        """Every evidence item this run's calls served, by id, with the union of the points served."""
        return merge_items(i for e in self._audit for i in e.items)

    def sources_queried(self) -> frozenset[str]:
        """The evidence sources the agent's answered calls read (the domain's source names, and `alert`)."""
        return self.domain.sources_of(e.tool for e in self._audit)

    # -- the tools ------------------------------------------------------------------------------------

    def _unknown(self, name: str) -> ToolError:
        if name == WAIT_TOOL:
            return ToolError(
                "unknown_tool",
                f"no tool named 'wait' under the {self.mode.value} backend: every point is already available, "
                "there is no clock to move (wait exists only under temporal); "
                f"tools: {', '.join(self._names)}",
            )
        hint = did_you_mean(str(name), self._names)
        return ToolError(
            "unknown_tool",
            f"no tool named {name!r}" + (f"; {hint}" if hint else "") + f"; tools: {', '.join(self._names)}",
        )

    def _answer(self, name: str, args: Any) -> ToolAnswer:
        if name == WAIT_TOOL:
            if self._clock is None:  # temporal, but nothing in the scenario is dated
                note = "nothing in this scenario is dated: there is no clock to move, all of it is visible"
                return ToolAnswer({"clock": None, "waited_minutes": 0, "data_ends_at": None, "note": note})
            self._clock, result = advance(self._clock, args.minutes, self._evidence.ended_at)
            return ToolAnswer(result)
        if name == ALERT_TOOL:
            return ToolAnswer(json.loads(self._alert_json))
        if name == SUBMIT_TOOL:
            self._check_failure_modes(args)
            self.submitted = args
            return ToolAnswer({"accepted": True})
        return self._index.answer(name, args, CallContext(self.mode.filters_by_name, self._clock))

    def _check_failure_modes(self, diagnosis: Diagnosis) -> None:
        """Refuse a diagnosis naming a failure mode the vocabulary does not know, so the agent can resubmit.

        A mode, an alias or synonym, or a set's name is known (as grading resolves them); anything else, a
        category included, is refused with what was meant and the known modes. The diagnosis is not accepted.
        """
        vocabulary = self.vocabulary
        unknown = [n for n in diagnosis.failure_modes if not vocabulary.is_failure_mode(n) and not vocabulary.is_set(n)]
        if not unknown:
            return
        known = sorted({*vocabulary.identifiers(), *vocabulary.synonyms} - {c.value for c in Category})
        notes = []
        for name in unknown:
            if vocabulary.is_category(name):
                notes.append(f"{name!r} is a category, not a failure mode (put it in category)")
            else:
                hint = did_you_mean(normalize_name(name), known)
                notes.append(f"{name!r} is not a known failure mode" + (f" ({hint})" if hint else ""))
        raise ToolError(
            "unknown_failure_mode",
            f"failure_modes: {'; '.join(notes)}; known failure modes: {', '.join(vocabulary.names)} "
            "(the submit_diagnosis failure_modes field lists their synonyms); the diagnosis was not accepted: "
            "fix the names and call submit_diagnosis again",
        )
