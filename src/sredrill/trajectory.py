"""Trajectory steps and tool calls: what an agent did, in order.

Every connector turns what its agent does into these steps, so matchers, metrics, grading and the UI read
one shape whatever the agent's language or transport.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated, Any, Literal, Protocol, overload

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter, create_model

__all__ = [
    "AssistantStep",
    "LLMCall",
    "Recorder",
    "ResponseStep",
    "Step",
    "StepKind",
    "ThinkingStep",
    "TokenUsage",
    "ToolCall",
    "ToolCallStep",
    "ToolError",
    "ToolResultStep",
    "ToolSpec",
    "Toolset",
    "Trajectory",
    "UserStep",
    "is_strict",
    "is_subset",
    "no_arguments",
    "step_adapter",
    "strict_schema",
    "without_nulls",
]

StepKind = Literal["user", "assistant", "thinking", "tool_call", "tool_result", "response"]


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    t_ms: float | None = None
    """Milliseconds since the agent run started, when known."""


class UserStep(_Step):
    kind: Literal["user"] = "user"
    content: str
    """The prompt (and context) the agent was given."""


class AssistantStep(_Step):
    kind: Literal["assistant"] = "assistant"
    content: str
    """Intermediate text the agent produced."""


class ThinkingStep(_Step):
    kind: Literal["thinking"] = "thinking"
    content: str
    """Reasoning the agent reported; a thinking step also separates investigation loops."""


class ToolCallStep(_Step):
    kind: Literal["tool_call"] = "tool_call"
    call_id: str
    """Pairs the call with its `tool_result` step."""
    name: str
    args: dict[str, JsonValue] = Field(default_factory=dict)
    verified: bool | None = None
    """True: the harness executed the call (`Recorder.call_tool`: in process, over HTTP or MCP, `openai:`).
    False: the agent only reported it (a `cmd:` JSON line, an agent service's steps or AG-UI events); kept
    for display, it satisfies no grading check. None: not recorded (a step stored before sredrill recorded
    it, or built by hand); it counts as not served."""


class ToolResultStep(_Step):
    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    result: JsonValue = None
    """What the tool returned (None when it failed)."""
    error: str | None = None
    """The tool's error message, when the call failed."""
    size_bytes: int | None = None
    """Size of the serialized result, when measured."""
    latency_ms: float | None = None
    verified: bool | None = None
    """As on `ToolCallStep`: True when the harness returned this result itself; a result joins only a call
    with the same value, so an agent cannot report a result for a call the harness served."""


class ResponseStep(_Step):
    kind: Literal["response"] = "response"
    content: str
    """The agent's final answer as text."""


Step = Annotated[
    UserStep | AssistantStep | ThinkingStep | ToolCallStep | ToolResultStep | ResponseStep,
    Field(discriminator="kind"),
]
step_adapter: TypeAdapter[Step] = TypeAdapter(Step)


class TokenUsage(BaseModel):
    """Tokens an agent spent, as its model reported them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt: int
    completion: int
    total: int
    cached: int | None = None
    """Input tokens served from the provider's prompt cache, counted in `prompt` too; None: not reported."""


def is_subset(expected: object, actual: object) -> bool:
    """True when `expected` is a recursive subset of `actual` (dict keys, list items in order-free match)."""
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(k in actual and is_subset(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list) and isinstance(actual, list):
        return all(any(is_subset(e, a) for a in actual) for e in expected)
    return expected == actual


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call joined with its result: the unit matchers and metrics count."""

    index: int
    """Position of the call step in the trajectory."""
    call_id: str
    name: str
    args: Mapping[str, Any]
    result: Any
    error: str | None
    latency_ms: float | None
    size_bytes: int | None
    has_result: bool
    verified: bool | None = None
    """The call step's `verified`: True only when the harness executed the call."""


class Trajectory(Sequence[Step]):
    """An immutable sequence of steps with the lookups tests need."""

    __slots__ = ("_steps",)

    def __init__(self, steps: Sequence[Step] = ()) -> None:
        self._steps: tuple[Step, ...] = tuple(steps)

    @overload
    def __getitem__(self, index: int) -> Step: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Step, ...]: ...

    def __getitem__(self, index: int | slice) -> Step | tuple[Step, ...]:
        return self._steps[index]

    def __len__(self) -> int:
        return len(self._steps)

    def __iter__(self) -> Iterator[Step]:
        return iter(self._steps)

    def __repr__(self) -> str:
        return f"Trajectory({len(self._steps)} steps)"

    def steps_of_type(self, kind: StepKind) -> list[Step]:
        """Every step of one kind, in order."""
        return [s for s in self._steps if s.kind == kind]

    def tool_calls(
        self, name: str | None = None, args: Mapping[str, Any] | None = None, *, verified: bool = False
    ) -> list[ToolCall]:
        """Tool calls joined with their results; filtered by name and a partial (recursive subset) of args.

        Args:
            name: only calls of this tool.
            args: only calls whose arguments include these (a recursive subset).
            verified: True for only the calls the harness executed (what grading reads); False for every
                call, the ones the agent only reported included.
        """
        # A result joins the call with its id *and* its provenance: a reported result never answers a
        # served call (nor a served result a reported call that reuses its id).
        results = {(s.call_id, s.verified is True): s for s in self._steps if isinstance(s, ToolResultStep)}
        calls = []
        for i, step in enumerate(self._steps):
            if not isinstance(step, ToolCallStep):
                continue
            if verified and step.verified is not True:
                continue
            if name is not None and step.name != name:
                continue
            if args is not None and not is_subset(dict(args), step.args):
                continue
            res = results.get((step.call_id, step.verified is True))
            calls.append(
                ToolCall(
                    index=i,
                    call_id=step.call_id,
                    name=step.name,
                    args=step.args,
                    result=res.result if res else None,
                    error=res.error if res else None,
                    latency_ms=res.latency_ms if res else None,
                    size_bytes=res.size_bytes if res else None,
                    has_result=res is not None,
                    verified=step.verified,
                )
            )
        return calls

    def first_tool_call(
        self, name: str | None = None, args: Mapping[str, Any] | None = None, *, verified: bool = False
    ) -> ToolCall | None:
        """The first matching tool call (with `verified=True`, the first the harness executed), or None."""
        calls = self.tool_calls(name, args, verified=verified)
        return calls[0] if calls else None

    def served(self) -> Trajectory:
        """The trajectory without the tool steps the harness did not serve: what grading reads.

        Text, thinking and response steps stay (they are what the agent said, and graded as such); a
        `tool_call` or `tool_result` step stays only when `verified` is True.
        """
        return Trajectory(
            [s for s in self._steps if not isinstance(s, ToolCallStep | ToolResultStep) or s.verified is True]
        )

    def unverified_calls(self) -> list[ToolCall]:
        """The calls the agent reported (`verified` False) that the harness never executed."""
        return [c for c in self.tool_calls() if c.verified is False]

    def unverified_note(self) -> str | None:
        """The note a result gets when the agent reported calls the harness did not serve, else None."""
        n = len(self.unverified_calls())
        if not n:
            return None
        if n == 1:
            return "1 tool call the agent reported was not served by the harness"
        return f"{n} tool calls the agent reported were not served by the harness"

    def dump(self) -> list[dict[str, Any]]:
        """The steps as JSON-ready dicts."""
        return [s.model_dump(mode="json") for s in self._steps]


def _empty_object_schema() -> dict[str, JsonValue]:
    """The schema of a tool that takes no arguments."""
    return {"type": "object", "properties": {}}


# Every built-in tool's `input_schema` is strict (`strict_schema`), so it can be sent to an LLM with OpenAI's
# `strict: true` as it is. (The docstring below is published in docs/agent-protocol.md's Task schema.)
class ToolSpec(BaseModel):
    """A tool an agent may call: its name, what it does, and a JSON Schema of its arguments."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str
    input_schema: dict[str, JsonValue] = Field(default_factory=_empty_object_schema)

    @classmethod
    def from_function(cls, name: str, fn: Callable[..., Any]) -> ToolSpec:
        """A tool from a Python function: its docstring as the description, its parameters as strict arguments.

        A parameter with a default is optional: the schema lets it be null, and a caller should drop a null
        for it before calling `fn` (null means not given).

        Raises:
            ValueError: a parameter without a type annotation, a `*args`/`**kwargs` or positional-only
                parameter, or a type strict mode cannot express (`Any`, a free-form `dict`).
        """
        fields: dict[str, Any] = {}
        for param in inspect.signature(fn, eval_str=True).parameters.values():
            if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
                raise ValueError(f"tool {name!r}: parameter {param.name!r} cannot be passed by name")
            if param.annotation is param.empty:
                raise ValueError(f"tool {name!r}: parameter {param.name!r} needs a type annotation for its schema")
            fields[param.name] = (param.annotation, ... if param.default is param.empty else param.default)
        model = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
        try:
            schema = strict_schema(model.model_json_schema())
        except ValueError as exc:
            raise ValueError(f"tool {name!r}: {exc}") from None
        return cls(name=name, description=inspect.cleandoc(fn.__doc__ or name), input_schema=schema)


def no_arguments() -> dict[str, JsonValue]:
    """A new strict schema for a tool that takes no arguments."""
    return {"type": "object", "properties": {}, "required": [], "additionalProperties": False}


# Strict function calling (OpenAI's Structured Outputs guide, "Supported schemas") accepts a subset of JSON
# Schema. Kept: the keywords every version of the guide allows, for every model (fine-tuned ones reject
# string formats, lengths, numeric bounds and array sizes). Those are written into the description instead,
# where a model still reads them, and the tool's own validation still enforces them.
_STRICT_KEYWORDS = frozenset(
    {"type", "description", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf"}
)
_DESCRIBED_KEYWORDS = frozenset(
    {
        "default",
        "examples",
        "format",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
    }
)
_SCALAR_TYPES = frozenset({"string", "number", "integer", "boolean"})
_NULL: Mapping[str, JsonValue] = MappingProxyType({"type": "null"})


def strict_schema(schema: Mapping[str, Any]) -> dict[str, JsonValue]:
    """A tool's argument schema in the form strict function calling accepts, meaning unchanged.

    The result is self-contained (every `$ref` inlined, no `$defs`); every object lists all its properties
    in `required` and sets `additionalProperties: false`; a property that was optional accepts `null`
    instead, and the tools read `null` as "not given". pydantic's titles and null defaults are dropped;
    `default`, `examples`, `format`, lengths and bounds move into the description.

    Args:
        schema: a JSON Schema of an object, e.g. a pydantic model's `model_json_schema()`.

    Returns:
        A new schema; the input is not changed.

    Raises:
        ValueError: the schema is not an object, or uses what strict mode cannot express (a free-form
            object, `oneOf`, `allOf`, `patternProperties`, a `$ref` outside `#/$defs/`, a recursive `$ref`).
    """
    defs = schema.get("$defs", {})
    out = _strict(schema, defs, ())
    if out.get("type") != "object":
        raise ValueError(f"a tool's arguments must be a JSON object schema, got type {out.get('type')!r}")
    return out


def is_strict(schema: Mapping[str, Any]) -> bool:
    """True when `schema` is already in strict form (`strict_schema` would not change it).

    A connector may send `"strict": true` exactly for these: a user's open schema would be rejected.
    """
    try:
        return strict_schema(schema) == schema
    except ValueError:
        return False


def _strict(node: Mapping[str, Any], defs: Mapping[str, Any], refs: tuple[str, ...]) -> dict[str, JsonValue]:
    node, refs = _inline(node, defs, refs)
    node = _collapse_nullable(node, defs, refs)
    out: dict[str, Any] = {}
    notes: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "$defs", "required"):
            continue  # titles are noise to a model; `required` is rebuilt below
        if key in _DESCRIBED_KEYWORDS:
            notes[key] = value
        elif key not in _STRICT_KEYWORDS:
            raise ValueError(f"{_where(refs)}{key!r} cannot be expressed in a strict tool schema")
        elif key == "properties":
            out[key] = {name: _strict(sub, defs, refs) for name, sub in value.items()}
        elif key == "items":
            out[key] = _strict(value, defs, refs)
        elif key == "anyOf":
            out[key] = [_strict(v, defs, refs) for v in value]
        elif key == "additionalProperties":
            if value is not False:
                raise ValueError(f"{_where(refs)}a free-form object cannot be expressed in a strict tool schema")
        else:
            out[key] = value
    if not {"type", "enum", "const", "anyOf"} & out.keys():
        raise ValueError(f"{_where(refs)}a schema without a type (any JSON value) cannot be expressed strictly")
    if out.get("type") == "object" or "properties" in out:
        props: dict[str, Any] = out.setdefault("properties", {})
        given = set(node.get("required", ()))
        out["properties"] = {n: s if n in given else _nullable(s) for n, s in props.items()}
        out["required"] = list(props)
        out["additionalProperties"] = False
    text = _describe_keywords(notes)
    if text:
        described = str(out.get("description", "")).rstrip()
        if not described:
            out["description"] = text[0].upper() + text[1:] + "."
        elif described.endswith("."):
            out["description"] = f"{described[:-1]} ({text})."
        else:
            out["description"] = f"{described} ({text})"
    return out


def without_nulls(model: type[BaseModel], args: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments for `model` with every null an optional field got removed, in nested models too.

    A strict schema (`strict_schema`) lists every argument as required and lets an optional one be null;
    null means "not given", so the field takes its default. A null for a required or unknown field is kept,
    for validation to name it.
    """
    out: dict[str, Any] = {}
    for name, value in args.items():
        field = model.model_fields.get(name)
        if field is None:
            out[name] = value
        elif value is None and not field.is_required():
            continue
        else:
            inner = _model_in(field.annotation)
            if inner is not None and isinstance(value, Mapping):
                value = without_nulls(inner, value)
            elif inner is not None and isinstance(value, list):
                value = [without_nulls(inner, v) if isinstance(v, Mapping) else v for v in value]
            out[name] = value
    return out


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model in `Model`, `list[Model]` or `Model | None`, else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _where(refs: tuple[str, ...]) -> str:
    return f"in $defs/{refs[-1]}: " if refs else ""


def _inline(
    node: Mapping[str, Any], defs: Mapping[str, Any], refs: tuple[str, ...]
) -> tuple[Mapping[str, Any], tuple[str, ...]]:
    while (ref := node.get("$ref")) is not None:
        name = str(ref).removeprefix("#/$defs/")
        if name == ref or name not in defs:
            raise ValueError(f"$ref {ref!r} does not point into the schema's own $defs")
        if name in refs:
            raise ValueError(f"$ref {ref!r} is recursive: a strict tool schema is inlined here, so it cannot recurse")
        # Keywords beside the $ref (a field's description) win over the definition's.
        node = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
        refs = (*refs, name)
    return node, refs


def _collapse_nullable(node: Mapping[str, Any], defs: Mapping[str, Any], refs: tuple[str, ...]) -> Mapping[str, Any]:
    """`anyOf [scalar, null]` (pydantic's `str | None`) as the guide writes it: `type: [scalar, "null"]`."""
    variants = node.get("anyOf")
    if not isinstance(variants, list) or len(variants) != 2 or dict(_NULL) not in variants:
        return node
    (other,) = [v for v in variants if v != dict(_NULL)]
    other, _ = _inline(other, defs, refs)
    if other.get("type") not in _SCALAR_TYPES or "enum" in other or "const" in other:
        return node
    return {**other, **{k: v for k, v in node.items() if k != "anyOf"}, "type": [other["type"], "null"]}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """The property schema also accepting null (an optional argument: null means not given)."""
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind) or dict(_NULL) in schema.get("anyOf", []):
        return schema
    if kind in _SCALAR_TYPES and "enum" not in schema and "const" not in schema:
        return {**schema, "type": [kind, "null"]}
    rest = {k: v for k, v in schema.items() if k != "description"}
    out: dict[str, Any] = (
        {"anyOf": [*rest["anyOf"], dict(_NULL)]} if list(rest) == ["anyOf"] else {"anyOf": [rest, dict(_NULL)]}
    )
    if "description" in schema:
        out["description"] = schema["description"]
    return out


def _describe_keywords(notes: Mapping[str, Any]) -> str:
    """What the keywords strict mode drops said, as words for the description."""
    parts = []
    low, high = notes.get("minimum"), notes.get("maximum")
    if low is not None and high is not None:
        parts.append(f"from {low} to {high}")
    elif low is not None:
        parts.append(f"at least {low}")
    elif high is not None:
        parts.append(f"at most {high}")
    if "exclusiveMinimum" in notes:
        parts.append(f"greater than {notes['exclusiveMinimum']}")
    if "exclusiveMaximum" in notes:
        parts.append(f"less than {notes['exclusiveMaximum']}")
    if notes.get("minLength") == 1:
        parts.append("not empty")
    elif "minLength" in notes:
        parts.append(f"at least {notes['minLength']} characters")
    if "maxLength" in notes:
        parts.append(f"at most {notes['maxLength']} characters")
    if "minItems" in notes:
        parts.append(f"at least {notes['minItems']} items")
    if "maxItems" in notes:
        parts.append(f"at most {notes['maxItems']} items")
    if "format" in notes:
        parts.append(f"format {notes['format']}")
    if notes.get("examples"):
        parts.append("e.g. " + ", ".join(v if isinstance(v, str) else json.dumps(v) for v in notes["examples"]))
    # An empty default ("", []) says no more than "null means not given" does.
    if notes.get("default") not in (None, "", [], {}):
        parts.append(f"default {json.dumps(notes['default'])}")
    return "; ".join(parts)


class ToolError(Exception):
    """Raised by a toolset when a call is invalid (unknown tool, bad arguments); the agent sees the message.

    Attributes:
        code: a short machine code (`unknown_tool`, `bad_arguments`, …).
    """

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(message)


class Toolset(Protocol):
    """The tools of one run (an RCA scenario's evidence, an environment's actions)."""

    def specs(self) -> list[ToolSpec]:
        """The tools, in the order agents should see them."""
        ...

    async def call(self, name: str, args: dict[str, Any]) -> JsonValue:
        """Run one tool; raises ToolError for a call the agent can correct."""
        ...


@dataclass(frozen=True, slots=True)
class LLMCall:
    """One model call an in-process agent made: becomes a GenAI `chat` span of the run's trace."""

    model: str
    t_ms: float
    """When the call started, in ms since the agent run started."""
    duration_ms: float
    usage: TokenUsage | None
    """None when the server reported no usage (unknown is not zero)."""
    finish_reason: str | None = None


class Recorder:
    """Builds one agent run's trajectory as it happens; one per `agent.run()`, never shared."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.llm_calls: list[LLMCall] = []
        self.notes: list[str] = []
        """What sredrill changed or noticed while recording (replaced text, …), once each: the result's notes."""
        self._t0 = time.perf_counter()
        self._next_id = 0

    def record_llm_call(self, call: LLMCall) -> None:
        """Note a model call (connectors that talk to a model themselves, e.g. `openai:`)."""
        self.llm_calls.append(call)

    def note(self, text: str) -> None:
        """Note something the result should say (e.g. `sredrill.text.REPLACED_NOTE`); a repeat is kept once."""
        if text not in self.notes:
            self.notes.append(text)

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self._t0) * 1000

    def add(self, step: Step) -> None:
        """Append a step (its `t_ms` is filled in when missing)."""
        if step.t_ms is None:
            step = step.model_copy(update={"t_ms": round(self.elapsed_ms(), 3)})
        self.steps.append(step)

    def new_call_id(self) -> str:
        self._next_id += 1
        return f"call_{self._next_id}"

    def _failed(self, call_id: str, name: str, error: str, start: float) -> None:
        latency = round((time.perf_counter() - start) * 1000, 3)
        self.add(ToolResultStep(call_id=call_id, name=name, error=error, latency_ms=latency, verified=True))

    async def call_tool(self, toolset: Toolset, name: str, args: dict[str, Any]) -> JsonValue:
        """Call a tool and record the call and its result (or error) on the trajectory.

        Raises:
            ToolError: the call was invalid; it is recorded before it propagates.
        """
        call_id = self.new_call_id()
        self.add(ToolCallStep(call_id=call_id, name=name, args=args, verified=True))
        start = time.perf_counter()
        try:
            result = await toolset.call(name, args)
        except ToolError as exc:
            self._failed(call_id, name, f"{exc.code}: {exc.message}", start)
            raise
        except Exception as exc:  # recorded, then re-raised: the trajectory shows the call failed
            self._failed(call_id, name, f"tool_failed: {type(exc).__name__}: {exc}", start)
            raise
        encoded = json.dumps(result, separators=(",", ":"))
        # The trajectory keeps its own copy, so an agent that changes its result cannot change the record. Read
        # back from JSON it is JSON by construction: validating it again node by node cost more than the call.
        step = ToolResultStep.model_construct(
            call_id=call_id,
            name=name,
            result=json.loads(encoded),
            size_bytes=len(encoded),
            latency_ms=round((time.perf_counter() - start) * 1000, 3),
            verified=True,
        )
        self.add(step)
        return result
