"""`RcaToolset`: the tools an RCA agent calls on one scenario, served by one backend, with an audit log.

An agent never reads fixture files (DESIGN §3): it calls `get_alert`, `list_metrics`, `query_metrics`,
`get_events`, `get_performance_insights` and `submit_diagnosis` on a toolset built for its run. The
`Recorder` wraps `call` and puts every call on the trajectory; the toolset keeps the audit log of what it
answered, and the temporal clock.

Examples:
    >>> pack = load_pack("rds_postgres")
    >>> tools = RcaToolset(pack.scenario("001-replication-lag"), BackendMode.SELECTIVE,
    ...                    vocabulary=pack.vocabulary)
    >>> await tools.call("query_metrics", {"metric_name": "replica"})      # doctest: +SKIP
    {'series': [{'metric_name': 'ReplicaLag', 'stat': 'Average', …}]}
    >>> tools.returned_metrics()                                            # doctest: +SKIP
    ('ReplicaLag',)
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any

from pydantic import JsonValue

from sredrill.diagnosis import Diagnosis
from sredrill.errors import did_you_mean
from sredrill.evidence.arguments import (
    PI_DIMENSIONS,
    EventsArgs,
    NoArgs,
    PerformanceInsightsArgs,
    QueryMetricsArgs,
    parse_arguments,
)
from sredrill.evidence.audit import AuditEntry
from sredrill.evidence.index import EvidenceIndex, TimeFilter, iso
from sredrill.evidence.modes import BackendMode
from sredrill.evidence.specs import TOOL_ARGUMENTS, TOOL_NAMES, sources_of, tool_specs
from sredrill.scenarios import BlindAlert, Scenario, Vocabulary, blind_alert
from sredrill.trajectory import ToolError, ToolSpec

__all__ = ["RcaToolset", "ScenarioEvidence"]


class ScenarioEvidence:
    """One scenario's evidence, prepared on first use and shared by every toolset over it.

    `sredrill run --axis2` serves each scenario twice (one toolset per axis); the index of its evidence and its
    blinded alert are the costly part of a toolset and do not depend on the backend, so both axes share them.
    Nothing here changes after it is built: a toolset's per-run state stays on the toolset.
    """

    __slots__ = ("_alerts", "_index", "scenario", "vocabulary")

    def __init__(self, scenario: Scenario, vocabulary: Vocabulary | None = None) -> None:
        self.scenario = scenario
        self.vocabulary = vocabulary or Vocabulary.builtin()
        self._index: EvidenceIndex | None = None
        self._alerts: dict[bool, str] = {}

    def __repr__(self) -> str:
        return f"ScenarioEvidence({self.scenario.qualified_id!r})"

    @property
    def index(self) -> EvidenceIndex:
        """The scenario's evidence, sorted and sliceable (built once)."""
        if self._index is None:
            self._index = EvidenceIndex.build(self.scenario)
        return self._index

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


@dataclass(frozen=True, slots=True)
class _Answer:
    """A tool's result plus what the audit log records about it."""

    result: dict[str, JsonValue]
    returned_metrics: tuple[str, ...] = ()
    n_points: int = 0
    n_events: int = 0


class RcaToolset:
    """The RCA tools over one scenario and one backend; one per agent run, never shared.

    Implements the `Toolset` protocol. Mutable state (the audit log, the temporal clock, the submitted
    diagnosis) lives on this per-run object (STYLE #10).

    Attributes:
        mode: the backend serving the evidence.
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
        self._index = evidence.index
        self._alert_json = evidence.alert_json(blind)
        self._audit: list[AuditEntry] = []
        self._clock: datetime | None = self._index.started_at if self.mode.has_clock else None
        self._handlers: Mapping[str, Callable[[Any], _Answer]] = MappingProxyType(
            {
                "get_alert": self._get_alert,
                "list_metrics": self._list_metrics,
                "query_metrics": self._query_metrics,
                "get_events": self._get_events,
                "get_performance_insights": self._get_performance_insights,
                "submit_diagnosis": self._submit_diagnosis,
            }
        )

    # -- the Toolset protocol ---------------------------------------------------------------------------

    def specs(self) -> list[ToolSpec]:
        """The six RCA tools, in the order agents see them (the same for every scenario and backend)."""
        return tool_specs()

    async def call(self, name: str, args: dict[str, Any]) -> JsonValue:
        """Run one tool.

        In `temporal` mode the call sees the current clock, then the clock advances one metric period: after
        answering, so the first call sees the evidence up to the moment the alert fired. Every call advances
        it, answered or rejected, so the n-th call of a trajectory (from 0) sees `starts_at + n·period`.

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
        try:
            handler = self._handlers.get(name)
            if handler is None:
                hint = did_you_mean(str(name), TOOL_NAMES)
                raise ToolError(
                    "unknown_tool",
                    f"no tool named {name!r}" + (f"; {hint}" if hint else "") + f"; tools: {', '.join(TOOL_NAMES)}",
                )
            answer = handler(parse_arguments(name, TOOL_ARGUMENTS[name], args))
        finally:
            if self._clock is not None:
                self._clock += self._index.step
        self._audit.append(
            AuditEntry(
                tool=name,
                args=MappingProxyType(copy.deepcopy(dict(args or {}))),
                returned_metrics=answer.returned_metrics,
                n_points=answer.n_points,
                n_events=answer.n_events,
                clock=clock,
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
        """The metric names the agent asked `query_metrics` for, exactly as asked, once each, in order."""
        asked = (e.args.get("metric_name") for e in self._audit if e.tool == "query_metrics")
        return tuple(dict.fromkeys(a for a in asked if isinstance(a, str)))

    def returned_metrics(self) -> tuple[str, ...]:
        """The metric names returned to the agent by a selective query (`selective` or `temporal`), once each.

        Empty under `full`: there every query returns every series, so being returned proves nothing about
        what the agent chose to look at (grading's `required_queries` check, DESIGN §5).
        """
        if not self.mode.filters_by_name:
            return ()
        names = (n for e in self._audit if e.tool == "query_metrics" for n in e.returned_metrics)
        return tuple(dict.fromkeys(names))

    def sources_queried(self) -> frozenset[str]:
        """The evidence sources the agent's answered calls read (`aws_cloudwatch_metrics`, …, `alert`)."""
        return sources_of(e.tool for e in self._audit)

    # -- the tools ------------------------------------------------------------------------------------

    def _get_alert(self, _: NoArgs) -> _Answer:
        return _Answer(json.loads(self._alert_json))

    def _list_metrics(self, _: NoArgs) -> _Answer:
        idx = self._index
        window: JsonValue = None
        if idx.window is not None:
            start, end = idx.window
            # Under the clock the data ends "now": the window must not promise points that are not there yet.
            if self._clock is not None and self._clock < end:
                end = max(start, self._clock)
            window = {"start": iso(start), "end": iso(end)}
        return _Answer(
            {
                "period": int(idx.step.total_seconds()),
                "window": window,
                "metrics": [s.header() for s in idx.series],
            }
        )

    def _query_metrics(self, args: QueryMetricsArgs) -> _Answer:
        window = TimeFilter(args.start, args.end, self._clock)
        key = args.metric_name.strip().casefold()
        out: list[JsonValue] = []
        names: dict[str, None] = {}
        n_points = 0
        for entry in self._index.series:
            if not entry.matches(key if self.mode.filters_by_name else "", args.stat):
                continue
            timestamps, values = entry.points.select(window)
            out.append({**entry.header(), "timestamps": timestamps, "values": values})
            names[entry.metric_name] = None
            n_points += len(values)
        return _Answer({"series": out}, returned_metrics=tuple(names), n_points=n_points)

    def _get_events(self, args: EventsArgs) -> _Answer:
        window = TimeFilter(args.start, args.end, self._clock)
        wanted = args.category.strip().casefold() if args.category is not None else None
        events: list[JsonValue] = [
            json.loads(e.payload_json)
            for e in self._index.events
            if window.admits(e.date) and (wanted is None or wanted in e.categories)
        ]
        return _Answer({"events": events}, n_events=len(events))

    def _get_performance_insights(self, args: PerformanceInsightsArgs) -> _Answer:
        pi = self._index.insights
        doc: dict[str, JsonValue]
        n_points = 0
        if pi is None:
            # No Performance Insights for this database: the same shape, with nothing in it.
            doc = {"db_instance_identifier": None, "start_time": None, "end_time": None, "db_load": None}
            doc.update({d: [] for d in PI_DIMENSIONS if d != "db_load"})
        else:
            timestamps, values = pi.db_load.select(TimeFilter(until=self._clock))
            n_points = len(values)
            end = pi.end_time if self._clock is None or self._clock >= pi.end_time else max(pi.start_time, self._clock)
            doc = {
                "db_instance_identifier": pi.instance,
                "start_time": iso(pi.start_time),
                "end_time": iso(end),
                "db_load": {"timestamps": timestamps, "values": values, "unit": pi.db_load_unit},
                # The top_* lists are aggregates over the whole window; there is nothing to clip them by.
                **json.loads(pi.tops_json),
            }
        if args.dimension is not None:
            doc = {args.dimension: doc[args.dimension]}
            n_points = n_points if args.dimension == "db_load" else 0
        return _Answer(doc, n_points=n_points)

    def _submit_diagnosis(self, diagnosis: Diagnosis) -> _Answer:
        self.submitted = diagnosis
        return _Answer({"accepted": True})
