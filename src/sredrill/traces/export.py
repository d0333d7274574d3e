"""Exporting a run's spans over OTLP/HTTP (JSON), to the collector OpenTelemetry's own variables name.

When `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (or `OTEL_EXPORTER_OTLP_ENDPOINT`, to which `/v1/traces` is added)
is set in sredrill's environment, the engine sends every span of the run there when the run ends: sredrill's
own and those its agents exported to it, so the collector sees whole traces. `OTEL_EXPORTER_OTLP_HEADERS`
(`key=value,…`) is sent with it. A failed export is logged and changes no result: the store has the spans.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final
from urllib.parse import unquote

from pydantic import JsonValue

from .spans import Span, SpanSource, SpanStatus

if TYPE_CHECKING:
    import httpx

__all__ = ["export_endpoint", "export_spans", "otlp_json"]

logger = logging.getLogger(__name__)

_TIMEOUT_S: Final = 10.0
_STATUS_CODE: Final = {SpanStatus.UNSET: 0, SpanStatus.OK: 1, SpanStatus.ERROR: 2}


def export_endpoint(environ: Mapping[str, str] = os.environ) -> str | None:
    """Where OpenTelemetry's standard variables say spans go, or None when they do not say."""
    traces = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if traces:
        return traces
    base = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    return f"{base.rstrip('/')}/v1/traces" if base else None


def _headers(environ: Mapping[str, str]) -> dict[str, str]:
    raw = environ.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS") or environ.get("OTEL_EXPORTER_OTLP_HEADERS") or ""
    pairs = (item.split("=", 1) for item in raw.split(",") if "=" in item)
    return {unquote(k.strip()): unquote(v.strip()) for k, v in pairs}


def _any_value(value: JsonValue) -> dict[str, JsonValue]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": [{"key": k, "value": _any_value(v)} for k, v in value.items()]}}
    if value is None:
        return {}
    return {"stringValue": str(value)}


def otlp_json(spans: Sequence[Span]) -> bytes:
    """An OTLP JSON `ExportTraceServiceRequest` of `spans`; sredrill's own carry `service.name=sredrill`."""
    groups: dict[SpanSource, list[dict[str, JsonValue]]] = {}
    for span in spans:
        encoded: dict[str, JsonValue] = {
            "traceId": span.trace_id,
            "spanId": span.span_id,
            "name": span.name,
            "startTimeUnixNano": str(span.start_ns),
            "endTimeUnixNano": str(span.end_ns),
            "attributes": [{"key": k, "value": _any_value(v)} for k, v in span.attributes.items()],
            "status": {"code": _STATUS_CODE[span.status]},
        }
        if span.parent_span_id is not None:
            encoded["parentSpanId"] = span.parent_span_id
        groups.setdefault(span.source, []).append(encoded)
    resource_spans = [
        {
            "resource": {
                "attributes": [{"key": "service.name", "value": {"stringValue": "sredrill"}}]
                if source is SpanSource.SREDRILL
                else []
            },
            "scopeSpans": [{"scope": {"name": f"sredrill.{source.value}"}, "spans": encoded}],
        }
        for source, encoded in groups.items()
    ]
    return json.dumps({"resourceSpans": resource_spans}, separators=(",", ":")).encode()


async def export_spans(
    spans: Sequence[Span],
    endpoint: str,
    *,
    environ: Mapping[str, str] = os.environ,
    transport: httpx.AsyncBaseTransport | None = None,
) -> bool:
    """POST `spans` to `endpoint` as OTLP JSON; True when the collector took them, else logs why.

    Args:
        transport: an httpx transport instead of the network (tests).
    """
    if not spans:
        return True
    import httpx  # here: every worker imports this module, few export (httpx costs 0.25 s or more to import)

    headers = {**_headers(environ), "Content-Type": "application/json"}
    try:
        async with httpx.AsyncClient(timeout=_TIMEOUT_S, transport=transport) as client:
            reply = await client.post(endpoint, content=otlp_json(spans), headers=headers)
    except httpx.HTTPError as exc:
        logger.warning("exporting %d span(s) to %s failed: %s: %s", len(spans), endpoint, type(exc).__name__, exc)
        return False
    if not reply.is_success:
        logger.warning(
            "exporting %d span(s) to %s failed: HTTP %s %s", len(spans), endpoint, reply.status_code, reply.text[:200]
        )
        return False
    return True
