"""The OTLP/HTTP trace receiver: `POST /v1/traces`, protobuf or JSON, into a `SpanCollector`.

Served by the engine's tool server for the duration of a run (for agents outside the process) and by
`sredrill serve`. Spans of a trace no agent run was given are refused and counted in OTLP's
`partialSuccess.rejectedSpans`, with the reason: a run's traces hold only that run's spans.
"""

# No `from __future__ import annotations`: FastAPI reads the route's annotations at run time.

from typing import TYPE_CHECKING, Any, Final

from sredrill.errors import MissingExtra

from .collector import SpanCollector
from .otlp import JSON, PROTOBUF, OtlpError, parse_otlp

if TYPE_CHECKING:
    from fastapi import APIRouter

__all__ = ["OTLP_TRACES_PATH", "otlp_routes"]

OTLP_TRACES_PATH: Final = "/v1/traces"
_MAX_BODY_BYTES: Final = 16 * 1024 * 1024
_REJECTED: Final = (
    "{n} span(s) belong to no agent run of this server: export with the TRACEPARENT (or traceparent header) "
    "sredrill gave the run, while its test runs"
)


def _answer(kind: str, rejected: int, status: int = 200, message: str = "") -> Any:
    from fastapi.responses import Response

    text = message or (_REJECTED.format(n=rejected) if rejected else "")
    if kind == PROTOBUF and status == 200:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

        reply = ExportTraceServiceResponse()
        if rejected:
            reply.partial_success.rejected_spans = rejected
            reply.partial_success.error_message = text
        return Response(content=reply.SerializeToString(), status_code=status, media_type=PROTOBUF)
    import json

    if status != 200:
        body: dict[str, Any] = {"code": 3, "message": text}  # google.rpc.Status, INVALID_ARGUMENT
    elif rejected:
        body = {"partialSuccess": {"rejectedSpans": rejected, "errorMessage": text}}
    else:
        body = {}
    return Response(content=json.dumps(body), status_code=status, media_type=JSON)


def otlp_routes(collector: SpanCollector) -> "APIRouter":
    """`POST /v1/traces` into `collector`, as a FastAPI router.

    Raises:
        MissingExtra: fastapi is not installed (the `server` extra).
    """
    try:
        from fastapi import APIRouter, Request
    except ImportError as exc:
        raise MissingExtra("receiving OTLP spans", "server") from exc

    router = APIRouter()

    @router.post(OTLP_TRACES_PATH, tags=["traces"], summary="OTLP/HTTP trace export (protobuf or JSON)")
    async def export_traces(request: Request) -> Any:
        """Spans an agent exports in the trace of the `traceparent` sredrill gave it."""
        content_type = request.headers.get("content-type")
        kind = JSON if (content_type or "").split(";")[0].strip().lower() == JSON else PROTOBUF
        body = await request.body()
        if len(body) > _MAX_BODY_BYTES:
            return _answer(kind, 0, 413, f"the export is over {_MAX_BODY_BYTES} bytes: send smaller batches")
        try:
            spans = parse_otlp(body, content_type)
        except OtlpError as exc:
            return _answer(kind, 0, 400, exc.message)
        acceptance = collector.add(spans)
        return _answer(kind, acceptance.rejected)

    return router
