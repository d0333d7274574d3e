"""Agent transcripts: the JSON-line steps an out-of-process agent reports, turned into steps and an answer.

A `cmd:` agent prints one step per line (DESIGN §4.1):

    {"kind": "thinking", "content": "CPU is high; check the top SQL"}
    {"kind": "tool_call", "name": "query_metrics", "args": {"metric_name": "CPUUtilization"}, "id": "c1"}
    {"kind": "tool_result", "call_id": "c1", "name": "query_metrics", "result": {"values": [97.5]}}
    {"kind": "diagnosis", "root_cause": "a runaway query saturates the CPU", "category": "resource_exhaustion"}

Any other line is plain assistant text. A line that names a step kind but has the wrong shape, or JSON nested
too deeply to parse, is kept as assistant text too, with a warning in the agent's log: a transcript never makes
a run crash. Text that is not valid Unicode (a lone surrogate such as `"\\ud800"`) is replaced with U+FFFD and
the run's `Recorder.notes` says so (`sredrill.text.REPLACED_NOTE`).

The tool calls and results a transcript records are the agent's own report (`verified=False`): shown on the
trajectory, never counted by grading. Calls made through `SREDRILL_TOOLS_URL` or MCP are recorded by the
harness as it serves them (`verified=True`).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter, ValidationError

from sredrill.agents.protocol import AgentReply
from sredrill.agents.reply import reply_from_diagnosis, reply_from_text
from sredrill.diagnosis import Diagnosis, diagnosis_text
from sredrill.text import REPLACED_NOTE, parse_json, scrub
from sredrill.trajectory import (
    AssistantStep,
    Recorder,
    ResponseStep,
    ThinkingStep,
    ToolCallStep,
    ToolResultStep,
)

__all__ = [
    "STEP_KINDS",
    "AssistantLine",
    "DiagnosisLine",
    "ResponseLine",
    "StepLine",
    "ThinkingLine",
    "ToolCallLine",
    "ToolResultLine",
    "Transcript",
    "TranscriptReply",
]

STEP_KINDS: Final = ("thinking", "assistant", "tool_call", "tool_result", "response", "diagnosis")


class _Line(BaseModel):
    # A format we own: an unknown key is a typo to report (STYLE #8), not something to ignore silently.
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ThinkingLine(_Line):
    """Reasoning; a thinking step also starts a new investigation loop."""

    kind: Literal["thinking"]
    content: str


class AssistantLine(_Line):
    """Intermediate text."""

    kind: Literal["assistant"]
    content: str


class ResponseLine(_Line):
    """The final answer as text (the original suite's `ROOT_CAUSE:` format is parsed into a Diagnosis)."""

    kind: Literal["response"]
    content: str


class ToolCallLine(_Line):
    """A tool call the agent reports (unverified: calls through `SREDRILL_TOOLS_URL` are recorded by sredrill)."""

    kind: Literal["tool_call"]
    name: str
    args: dict[str, JsonValue] = Field(default_factory=dict)
    call_id: str | None = None
    """Pairs the call with its result; `id` is accepted too; sredrill numbers calls that have neither."""
    id: str | None = None


class ToolResultLine(_Line):
    """What a tool returned, or its error."""

    kind: Literal["tool_result"]
    call_id: str | None = None
    """The call this answers; without it, the latest unanswered call of the same name."""
    name: str | None = None
    """The tool; may be left out when `call_id` names the call."""
    result: JsonValue = None
    error: str | None = None
    latency_ms: float | None = None


class DiagnosisLine(_Line):
    """The final answer as a Diagnosis: under `diagnosis`, or its fields inline next to `kind`."""

    kind: Literal["diagnosis"]
    diagnosis: Diagnosis


StepLine = Annotated[
    ThinkingLine | AssistantLine | ResponseLine | ToolCallLine | ToolResultLine | DiagnosisLine,
    Field(discriminator="kind"),
]
_step_line: TypeAdapter[StepLine] = TypeAdapter(StepLine)


_MAX_LOC_PARTS: Final = 6
_LINE_MODELS: Final[dict[str, type[BaseModel]]] = {
    "thinking": ThinkingLine,
    "assistant": AssistantLine,
    "tool_call": ToolCallLine,
    "tool_result": ToolResultLine,
    "response": ResponseLine,
}
_ANSWER_KINDS: Final = ("diagnosis", "response")


def _path(loc: tuple[int | str, ...]) -> str:
    # A deeply nested value's location runs to hundreds of parts; its start says where.
    return ".".join(str(p) for p in loc[:_MAX_LOC_PARTS]) + (".…" if len(loc) > _MAX_LOC_PARTS else "")


def _first_error(exc: ValidationError, kind: str, *, inline: bool) -> str:
    """The first problem, located as the agent wrote the line (an inline diagnosis has no `diagnosis.` level)."""
    err = exc.errors()[0]
    loc = err["loc"][1:]  # loc[0] is the union tag
    if inline and loc[:1] == ("diagnosis",):
        loc = loc[1:]
    where = _path(loc)
    text = f"{where}: {err['msg']}" if where else err["msg"]
    if err["type"] == "extra_forbidden" and loc:
        key = loc[-1]
        if len(loc) > 1:
            return f"{text} (unknown key {key!r})"
        fields = Diagnosis.model_fields if kind == "diagnosis" else _LINE_MODELS[kind].model_fields
        known = ", ".join(name for name in fields if name != "kind")
        return f"{text} (unknown key {key!r}; a {kind} line has: kind, {known})"
    return text


@dataclasses.dataclass(slots=True)
class TranscriptReply(AgentReply):
    """A reply built from a transcript; it also says why the agent's answer line was not used, when it was not."""

    rejected_answer: str | None = None
    """Set when the reply has no diagnosis although the agent sent a `diagnosis` (or `response`) line that was
    rejected: which line and why, e.g. "the agent's diagnosis line 3 was rejected: unknown key 'foo' …"."""


class Transcript:
    """One agent run's stdout, line by line: records steps as they arrive and keeps what makes the answer.

    One per run, never shared (it holds the run's pending tool calls).
    """

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.lines: list[str] = []
        """Every line as received (the reply's `raw`)."""
        self.warnings: list[str] = []
        self._texts: list[str] = []
        self._response: str | None = None
        self._diagnosis: Diagnosis | None = None
        self._names: dict[str, str] = {}
        self._open: dict[str, list[str]] = {}
        self._rejected: tuple[str, str] | None = None
        """The last answer line rejected and not answered since: (kind, what is wrong, with its line)."""

    def feed(self, line: str) -> None:
        """Record one line of output as a step."""
        line, replaced = scrub(line)
        self.lines.append(line)
        if not line.strip():
            return
        try:
            obj, escaped = parse_json(line)
        except json.JSONDecodeError:
            obj, escaped = None, False
        except ValueError as exc:  # parse_json's "nested too deeply": an error line, not a RecursionError
            self.warnings.append(f"stdout line {len(self.lines)}: not read as a step, kept as text: {exc}")
            obj, escaped = None, False
        if replaced or escaped:
            self.recorder.note(REPLACED_NOTE)
        if not isinstance(obj, dict) or "kind" not in obj:
            self._text(line)
            return
        inline = obj["kind"] == "diagnosis" and "diagnosis" not in obj
        if inline:
            obj = {"kind": "diagnosis", "diagnosis": {k: v for k, v in obj.items() if k != "kind"}}
        try:
            parsed = _step_line.validate_python(obj)
        except ValidationError as exc:
            kind = obj["kind"]
            known = kind if isinstance(kind, str) and kind in STEP_KINDS else None
            problem = (
                _first_error(exc, known, inline=inline)
                if known is not None
                else f"unknown kind {kind!r} (known: {', '.join(STEP_KINDS)})"
            )
            self.warnings.append(f"stdout line {len(self.lines)}: invalid step, kept as text: {problem}")
            if known is not None and known in _ANSWER_KINDS:
                self._rejected = (known, f"the agent's {known} line {len(self.lines)} was rejected: {problem}")
            self._text(line)
            return
        self._record(parsed, line)

    def _text(self, text: str) -> None:
        self._texts.append(text)
        self.recorder.add(AssistantStep(content=text))

    def _record(self, line: StepLine, raw: str) -> None:
        rec = self.recorder
        match line:
            case ThinkingLine(content=content):
                rec.add(ThinkingStep(content=content))
            case AssistantLine(content=content):
                self._text(content)
            case ResponseLine(content=content):
                self._response = content
                if self._rejected is not None and self._rejected[0] == "response":
                    self._rejected = None
                rec.add(ResponseStep(content=content))
            case DiagnosisLine(diagnosis=diagnosis):
                self._diagnosis = diagnosis
                self._rejected = None
                rec.add(ResponseStep(content=diagnosis_text(diagnosis)))
            case ToolCallLine():
                call_id = line.call_id or line.id or rec.new_call_id()
                self._names[call_id] = line.name
                self._open.setdefault(line.name, []).append(call_id)
                rec.add(ToolCallStep(call_id=call_id, name=line.name, args=line.args, verified=False))
            case ToolResultLine():
                self._record_result(line, raw)

    def _record_result(self, line: ToolResultLine, raw: str) -> None:
        name = line.name or (self._names.get(line.call_id) if line.call_id else None)
        if name is None:
            self.warnings.append(
                f"stdout line {len(self.lines)}: invalid step, kept as text: a tool_result needs `name` or "
                "the `call_id` of an earlier tool_call"
            )
            self._text(raw)
            return
        if line.call_id is not None:
            call_id = line.call_id
        elif self._open.get(name):
            call_id = self._open[name][-1]
        else:
            call_id = self.recorder.new_call_id()
        pending = self._open.get(name, [])
        if call_id in pending:
            pending.remove(call_id)
        size = None if line.result is None else len(json.dumps(line.result, separators=(",", ":")))
        self.recorder.add(
            ToolResultStep(
                call_id=call_id,
                name=name,
                result=line.result,
                error=line.error,
                size_bytes=size,
                latency_ms=line.latency_ms,
                verified=False,
            )
        )

    def log(self, stderr: str) -> str:
        """The agent's log: its stderr, then sredrill's warnings about its lines (`[sredrill] stdout line N: …`)."""
        notes = "\n".join(f"[sredrill] {w}" for w in self.warnings)
        return "\n".join(p for p in (stderr.rstrip("\n"), notes) if p)

    def reply(self, log: str) -> TranscriptReply:
        """The answer: the last diagnosis, else the last response, else all assistant text joined.

        When the agent sent no response or diagnosis, its joined text is recorded as the response step, so
        every finished run ends with one. When the answer has no diagnosis and an answer line was rejected
        (an unknown key, a wrong type), `rejected_answer` says which line and why, and a note says it too.
        """
        if self._diagnosis is not None:
            reply = reply_from_diagnosis(self._diagnosis)
        elif self._response is not None:
            reply = reply_from_text(self._response)
        else:
            text = "\n".join(self._texts)
            self.recorder.add(ResponseStep(content=text))
            reply = reply_from_text(text)
        rejected = None
        if reply.diagnosis is None and self._rejected is not None:
            rejected = f"{self._rejected[1]}; see the agent log"
            reply.notes.append(rejected)
        fields = {f.name: getattr(reply, f.name) for f in dataclasses.fields(AgentReply)}
        fields.update(raw=list(self.lines), log=self.log(log))
        return TranscriptReply(**fields, rejected_answer=rejected)
