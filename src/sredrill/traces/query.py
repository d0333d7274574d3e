"""The `trace_query` tool pack: read-only tools over one agent run's spans, for LLM judges and evaluators.

Hard-scoped to one run: every tool takes the `run_id` it is asked about (a judge model names what it reads)
and refuses any id but its own run's, so a judge of run A can never read run B's spans (seed 001 §4.7).
The schemas are strict: every argument is required, and a null `name`, `source` or `limit` means not given.

    get_spans    {run_id, name?, source?, limit?} -> {"spans": [{name, span_id, parent_span_id, source, status,
                                                     duration_ms, attributes}, …], "total": n}
    get_metrics  {run_id}                         -> {"total_tokens", "input_tokens", "output_tokens",
                                                     "tokens_unavailable", "cost_usd", "tool_calls",
                                                     "duration_by_name_ms", "span_count"}
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import JsonValue

from sredrill.errors import TracesUnavailable
from sredrill.trajectory import ToolError, ToolSpec, strict_schema

from .access import RunTraces
from .spans import SpanSource
from .view import TraceView

__all__ = ["TRACE_QUERY_TOOLS", "TraceQueryTools"]

_RUN_ID: Final = {"type": "string", "description": "The id of the agent run being judged (the only one allowed)."}
_DEFAULT_LIMIT: Final = 200

TRACE_QUERY_TOOLS: Final = (
    ToolSpec(
        name="get_spans",
        description="The spans of the agent run being judged, in start order; filter by span name or source.",
        input_schema=strict_schema(
            {
                "type": "object",
                "properties": {
                    "run_id": _RUN_ID,
                    "name": {"type": "string", "description": "Only spans with this exact name; null: any name."},
                    "source": {
                        "type": "string",
                        "enum": [s.value for s in SpanSource],
                        "description": "Only spans of this source; null: both.",
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "description": f"At most this many spans; null: {_DEFAULT_LIMIT}.",
                    },
                },
                "required": ["run_id"],
                "additionalProperties": False,
            }
        ),
    ),
    ToolSpec(
        name="get_metrics",
        description="Token, cost, tool-call and duration rollups of the agent run being judged.",
        input_schema=strict_schema(
            {"type": "object", "properties": {"run_id": _RUN_ID}, "required": ["run_id"], "additionalProperties": False}
        ),
    ),
)
"""The tools' specs; their schemas are strict (`strict_schema`): `name`, `source`, `limit` are nullable."""


class TraceQueryTools:
    """A `Toolset` of read-only trace tools scoped to one agent run (`RunResult.trace_tools()` builds it).

    Args:
        traces: the run's spans.
        timeout_s: how long a first call waits for an out-of-process agent's spans.
    """

    def __init__(self, traces: RunTraces, *, timeout_s: float) -> None:
        self._traces = traces
        self._timeout_s = timeout_s
        self._view: TraceView | None = None

    def __repr__(self) -> str:
        return f"TraceQueryTools(run {self._traces.run_id})"

    @property
    def run_id(self) -> str:
        return self._traces.run_id

    def specs(self) -> list[ToolSpec]:
        return list(TRACE_QUERY_TOOLS)

    async def call(self, name: str, args: dict[str, Any]) -> JsonValue:
        """Run one tool.

        Raises:
            ToolError: `forbidden` for another run's id, `unknown_tool`, `bad_arguments`,
                `traces_unavailable` when the run's spans never arrived.
        """
        if name not in ("get_spans", "get_metrics"):
            raise ToolError("unknown_tool", f"no tool {name!r}; tools: get_spans, get_metrics")
        run_id = args.get("run_id")
        if run_id != self.run_id:
            raise ToolError(
                "forbidden",
                f"run_id {run_id!r} is refused: these tools read only the run being judged, {self.run_id!r}",
            )
        view = await self._load()
        if name == "get_metrics":
            unknown: str | None = None
            try:
                tokens: tuple[int | None, int | None, int | None] = (
                    view.total_tokens,
                    view.input_tokens,
                    view.output_tokens,
                )
            except TracesUnavailable as exc:
                tokens, unknown = (None, None, None), str(exc)
            return {
                "total_tokens": tokens[0],
                "input_tokens": tokens[1],
                "output_tokens": tokens[2],
                "tokens_unavailable": unknown,
                "cost_usd": view.cost_usd,
                "tool_calls": [
                    {"name": c.name, "duration_ms": c.duration_ms, "source": c.source.value, "is_error": c.is_error}
                    for c in view.tool_calls
                ],
                "duration_by_name_ms": dict(view.duration_by_name),
                "span_count": len(view.spans),
            }
        return self._spans(view, args)

    def _spans(self, view: TraceView, args: dict[str, Any]) -> JsonValue:
        unknown = set(args) - {"run_id", "name", "source", "limit"}
        if unknown:
            raise ToolError("bad_arguments", f"get_spans: unknown arguments {sorted(unknown)}")
        # Null means not given: strict schemas send every argument.
        limit = _DEFAULT_LIMIT if args.get("limit") is None else args["limit"]
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ToolError("bad_arguments", f"get_spans: limit must be a positive integer, got {limit!r}")
        raw_source = args.get("source")
        try:
            source = SpanSource(raw_source) if raw_source is not None else None
        except ValueError:
            raise ToolError(
                "bad_arguments", f"get_spans: source must be 'sredrill' or 'agent', got {raw_source!r}"
            ) from None
        spans = [
            s
            for s in view.spans
            if (args.get("name") is None or s.name == args["name"]) and (source is None or s.source is source)
        ]
        return {
            "spans": [
                {
                    "name": s.name,
                    "span_id": s.span_id,
                    "parent_span_id": s.parent_span_id,
                    "source": s.source.value,
                    "status": s.status.value,
                    "duration_ms": s.duration_ms,
                    "attributes": s.attributes,
                }
                for s in spans[:limit]
            ],
            "total": len(spans),
        }

    async def _load(self) -> TraceView:
        if self._view is None:
            try:
                self._view = await self._traces.view(self._timeout_s)
            except TracesUnavailable as exc:
                raise ToolError("traces_unavailable", str(exc)) from exc
        return self._view
