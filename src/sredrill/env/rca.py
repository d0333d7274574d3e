"""RCA scenarios as environment tasks: opaque ids, their actions, and an episode over the evidence toolset.

Actions map onto the scenario's domain's tools (DESIGN §6), as each tool declares (`ToolDecl.action`,
`target`, `target_argument`): `inspect_alert` → `get_alert`; `inspect_metrics` with a name → the domain's
name query (no target → its listing); `inspect_logs` with one of the domain's log targets → the tool of that
target; `submit_diagnosis` with a Diagnosis as `args` ends the episode. Inspection actions may pass the tool's
optional arguments in `args`. The evidence is served by the `selective` backend and graded as Axis 2, so what
the agent chose to query counts. The reward is 0 until submission, then the fraction of gate checks passed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter, ValidationError

from sredrill.diagnosis import Diagnosis
from sredrill.env.episode import EpisodeEnd, Transition
from sredrill.env.models import Inspection, Observation
from sredrill.errors import ActionError, StateError, did_you_mean
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.grading import grade_diagnosis
from sredrill.grading.checks import refuse_conflicts
from sredrill.incidents import Action, validate_envelope
from sredrill.scenarios import Domain, Pack, Scenario, Vocabulary, get_domain
from sredrill.scenarios.domain import all_action_targets
from sredrill.trajectory import ToolCallStep, ToolError, ToolResultStep, Trajectory, without_nulls

__all__ = [
    "RCA_ACTIONS",
    "RCA_DESCRIPTION",
    "RCA_MAX_STEPS",
    "RcaAction",
    "RcaEpisode",
    "RcaInspectAlert",
    "RcaInspectLogs",
    "RcaInspectMetrics",
    "RcaTask",
    "SubmitDiagnosis",
    "parse_rca_action",
    "rca_action_adapter",
    "rca_action_schema",
    "rca_description",
    "rca_task_id",
]

RCA_MAX_STEPS = 20
"""Actions an RCA episode allows before it ends without a diagnosis."""
RCA_DESCRIPTION = (
    "An alert fired on a production system. Investigate with inspect_alert, inspect_metrics and inspect_logs "
    "(the targets each takes are the task's: its description and action schema list them), then "
    "submit_diagnosis with a Diagnosis as args: root cause, category, failure modes, causal chain, claims citing "
    "the evidence items they rest on (the ids inspections return, each with a fact that holds on what was "
    "served), the hypotheses you ruled out with the items that refute them, and the location of the fault. "
    "The reward at submission is the fraction of grading gates passed."
)
"""What every RCA task says, whatever its domain; `rca_description` adds what the domain's inspections read."""
_INSPECTIONS = ("inspect_metrics", "inspect_logs")
_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)


class _RcaTyped(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RcaInspectAlert(_RcaTyped):
    """Read the (blinded) alert."""

    action_type: Literal["inspect_alert"] = "inspect_alert"
    target: None = None
    value: None = None
    args: None = None


class RcaInspectMetrics(_RcaTyped):
    """Read metric series whose name contains `target`; without a target, list the metrics."""

    action_type: Literal["inspect_metrics"] = "inspect_metrics"
    target: str | None = None
    value: None = None
    args: dict[str, JsonValue] | None = None
    """Optional `stat`, `start`, `end` (ISO-8601)."""


class RcaInspectLogs(_RcaTyped):
    """Read one of the system's log sources (events, logs, profiles: the domain's log targets)."""

    action_type: Literal["inspect_logs"] = "inspect_logs"
    target: str = Field(json_schema_extra={"enum": list(all_action_targets("inspect_logs"))})
    """One of the task's domain's log targets (`Domain.action_targets("inspect_logs")`; the static schema lists
    every registered domain's)."""
    value: None = None
    args: dict[str, JsonValue] | None = None
    """Optional: the target tool's own optional arguments."""


class SubmitDiagnosis(_RcaTyped):
    """Submit the diagnosis; the episode ends."""

    action_type: Literal["submit_diagnosis"] = "submit_diagnosis"
    target: None = None
    value: None = None
    args: Diagnosis


RcaAction = Annotated[
    RcaInspectAlert | RcaInspectMetrics | RcaInspectLogs | SubmitDiagnosis, Field(discriminator="action_type")
]
rca_action_adapter: TypeAdapter[RcaAction] = TypeAdapter(RcaAction)
RCA_ACTIONS: tuple[str, ...] = ("inspect_alert", "inspect_metrics", "inspect_logs", "submit_diagnosis")


def parse_rca_action(data: Action | Mapping[str, Any], domain: Domain | None = None) -> RcaAction:
    """Validate an RCA task's action and return its typed variant (the log targets are `domain`'s; default:
    those of any registered domain).

    Raises:
        ActionError: naming the wrong field, with the allowed values (and, for a Diagnosis, the field
            inside `args` that is wrong).
    """
    action = validate_envelope(data)
    kind = action.action_type
    if kind not in RCA_ACTIONS:
        hint = did_you_mean(kind, RCA_ACTIONS)
        raise ActionError(
            f"an RCA task has no action {kind!r}" + (f"; {hint}" if hint else ""),
            field="action_type",
            allowed=RCA_ACTIONS,
        )
    if action.value is not None:
        raise ActionError(f"{kind} takes no value, got {action.value!r}", field="value", hint="send value: null")
    if kind in ("inspect_alert", "submit_diagnosis") and action.target is not None:
        raise ActionError(f"{kind} takes no target, got {action.target!r}", field="target", hint="send target: null")
    if kind == "inspect_alert":
        if action.args is not None:
            raise ActionError("inspect_alert takes no args", field="args", hint="send args: null")
        return RcaInspectAlert()
    if kind == "inspect_logs":
        targets = domain.action_targets("inspect_logs") if domain is not None else all_action_targets("inspect_logs")
        if action.target not in targets:
            hint = did_you_mean(str(action.target), targets)
            raise ActionError(
                f"inspect_logs needs target {' or '.join(targets)}, got {action.target!r}"
                + (f"; {hint}" if hint else ""),
                field="target",
                allowed=targets,
            )
        return RcaInspectLogs(target=str(action.target), args=action.args)
    if kind == "inspect_metrics":
        return RcaInspectMetrics(target=action.target, args=action.args)
    if action.args is None:
        raise ActionError(
            "submit_diagnosis needs the Diagnosis as args",
            field="args",
            hint='e.g. {"action_type": "submit_diagnosis", "args": {"root_cause": "…", "failure_modes": ["…"]}}',
        )
    try:
        return SubmitDiagnosis(args=Diagnosis.model_validate(without_nulls(Diagnosis, action.args)))
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in ("args", *first["loc"]))
        raise ActionError(f"not a valid Diagnosis: {first['msg']}", field=where) from None


def rca_task_id(pack: str, folder: str) -> str:
    """The opaque task id of a scenario: a digest, so the id names neither the scenario nor its failure mode."""
    return "rca-" + hashlib.sha256(f"{pack}/{folder}".encode()).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class RcaTask:
    """An RCA scenario as an environment task."""

    task_id: str
    pack: Pack
    scenario: Scenario
    max_steps: int = RCA_MAX_STEPS

    @classmethod
    def of(cls, pack: Pack, scenario: Scenario) -> RcaTask:
        return cls(rca_task_id(pack.name, scenario.folder), pack, scenario)

    @property
    def domain(self) -> Domain:
        """The scenario's domain: its tools are what the task's inspections call."""
        return get_domain(self.scenario.domain)


def rca_description(domain: Domain, vocabulary: Vocabulary | None = None) -> str:
    """An RCA task's description: `RCA_DESCRIPTION`, then what each inspection of the domain reads, from its
    tools' declarations (the target that picks each tool, or the argument a free target fills), then the pack's
    published vocabulary (the same for every scenario of the pack)."""
    reads = []
    for action in _INSPECTIONS:
        for tool in domain.tools:
            if tool.action != action:
                continue
            what = tool.description.split(". ", 1)[0].rstrip(".")
            if tool.target is not None:
                reads.append(f"{action} target {tool.target}: {what}")
            elif tool.target_argument:
                reads.append(f"{action} with a target (the tool's {tool.target_argument}): {what}")
            else:
                reads.append(f"{action} without a target: {what}")
    text = f"{RCA_DESCRIPTION} What the inspections read ({domain.title}): " + "; ".join(reads) + "."
    return text + "\n\n" + (vocabulary or domain.vocabulary()).catalogue()


@cache
def rca_action_schema(domain: Domain | None = None) -> str:
    """JSON Schema (as JSON text) of the actions an RCA task of `domain` accepts: `inspect_logs`' target
    enumerates that domain's log targets; None: every registered domain's (the static schema)."""
    schema: dict[str, Any] = rca_action_adapter.json_schema()
    if domain is not None:
        target = schema["$defs"][RcaInspectLogs.__name__]["properties"]["target"]
        target["enum"] = list(domain.action_targets("inspect_logs"))
    return json.dumps(schema)


def _run(coro: Coroutine[Any, Any, JsonValue]) -> JsonValue:
    """Run a coroutine that never suspends (the toolset's `call` is async only to fit the `Toolset` protocol).

    Library code never starts an event loop (STYLE #17), and the evidence tools are pure computation.
    """
    try:
        coro.send(None)
    except StopIteration as finished:
        value: JsonValue = finished.value  # what the coroutine returned (typed Any on StopIteration)
        return value
    coro.close()
    raise StateError("the evidence toolset suspended; an RCA episode needs tools that do not await")


class RcaEpisode:
    """An episode of an RCA task: the evidence toolset behind the wire models, graded at submission."""

    def __init__(self, task: RcaTask, seed: int) -> None:
        # A key no diagnosis can pass is refused when the episode starts, not when the agent submits.
        refuse_conflicts(task.scenario)
        # The evidence is fixed data: the seed changes nothing here, but it is kept for the state's sake.
        self.task = task
        self.seed = seed
        self.toolset = RcaToolset(task.scenario, BackendMode.SELECTIVE, vocabulary=task.pack.vocabulary)
        self.domain = task.domain
        self.steps = 0
        self.episode_reward = 0.0
        self._trajectory: list[ToolCallStep | ToolResultStep] = []
        self._grade: float | None = None
        self._resolved = False
        started = task.scenario.alert_started_at
        self._start = started if started is not None else _EPOCH
        self._alerts = [str(self.toolset.alert["title"])]

    def observation(self, inspection: Inspection | None = None) -> Observation:
        return Observation(
            step=self.steps,
            max_steps=self.task.max_steps,
            timestamp=(self._start + timedelta(minutes=self.steps)).astimezone(UTC).isoformat().replace("+00:00", "Z"),
            services={},
            alerts=list(self._alerts),
            inspection=inspection,
        )

    def step(self, action: Action | Mapping[str, Any]) -> Transition:
        typed = parse_rca_action(action, self.domain)
        reward = 0.0
        if isinstance(typed, SubmitDiagnosis):
            self._call("submit_diagnosis", typed.args.model_dump(mode="json"), "args")
            grade = grade_diagnosis(
                self.task.scenario,
                typed.args,
                Trajectory(self._trajectory),
                axis=2,
                returned_metrics=set(self.toolset.returned_metrics()),
                served=self.toolset.served_items(),
                budget=self.toolset.data_budget,
                vocabulary=self.task.pack.vocabulary,
            )
            self._grade = reward = grade.gate_fraction
            self._resolved = grade.passed
            message = f"diagnosis submitted: {reward:.0%} of the grading gates passed"
            inspection = None
        else:
            name, args, field = _tool_call(typed, self.domain)
            result = self._call(name, args, field)
            inspection = Inspection(action_type=typed.action_type, target=typed.target, evidence=result)
            message = f"called {name}"
        self.steps += 1
        self.episode_reward += reward
        done = self._grade is not None or self.steps >= self.task.max_steps
        return Transition(self.observation(inspection), reward, done, message)

    def _call(self, name: str, args: dict[str, JsonValue], field: str) -> dict[str, JsonValue]:
        call_id = f"call_{len(self._trajectory) // 2 + 1}"
        try:
            result = _run(self.toolset.call(name, args))
        except ToolError as exc:
            raise ActionError(exc.message, field=field) from None
        self._trajectory.append(ToolCallStep(call_id=call_id, name=name, args=args, verified=True))
        self._trajectory.append(ToolResultStep(call_id=call_id, name=name, result=result, verified=True))
        return cast(dict[str, JsonValue], result)  # every RCA tool returns a JSON object

    def end(self) -> EpisodeEnd:
        grade = self._grade if self._grade is not None else 0.0
        return EpisodeEnd(
            normalized_reward=grade,
            grade=grade,
            resolved=self._resolved,
            truncated=self._grade is None and self.steps >= self.task.max_steps,
        )


def _tool_call(
    action: RcaInspectAlert | RcaInspectMetrics | RcaInspectLogs, domain: Domain
) -> tuple[str, dict[str, JsonValue], str]:
    """(tool, arguments, the action field a tool error is about) for an inspection."""
    if isinstance(action, RcaInspectAlert):
        return "get_alert", {}, "action_type"
    # A null argument is not given (strict tool schemas send every argument): the tool takes its default.
    extra: dict[str, JsonValue] = {k: v for k, v in (action.args or {}).items() if v is not None}
    tool, argument = domain.action_tool(action.action_type, action.target)
    if argument is not None:
        return tool.name, {**extra, argument: action.target}, "args" if extra else "target"
    return tool.name, extra, "args"
