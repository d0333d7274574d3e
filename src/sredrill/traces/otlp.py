"""OTLP/HTTP trace exports, decoded: protobuf (`application/x-protobuf`) or JSON (`application/json`).

Both are `ExportTraceServiceRequest` (opentelemetry-proto). In JSON, trace and span ids are hex strings and
64-bit integers may be strings, as the OTLP specification says; in protobuf, ids are bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from pydantic import JsonValue

from sredrill.errors import InputError, MissingExtra

from .spans import Span, SpanSource, SpanStatus

__all__ = ["OtlpError", "parse_otlp"]

PROTOBUF: Final = "application/x-protobuf"
JSON: Final = "application/json"
_STATUS: Final = {0: SpanStatus.UNSET, 1: SpanStatus.OK, 2: SpanStatus.ERROR}
_STATUS_NAMES: Final = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


class OtlpError(InputError):
    """An OTLP export sredrill cannot read (answered 400 with the reason)."""


def _any_value(value: Mapping[str, Any]) -> JsonValue:
    """An OTLP `AnyValue` in its JSON form."""
    if "stringValue" in value:
        return str(value["stringValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "arrayValue" in value:
        return [_any_value(v) for v in value["arrayValue"].get("values", [])]
    if "kvlistValue" in value:
        return _attributes(value["kvlistValue"].get("values", []))
    if "bytesValue" in value:
        return str(value["bytesValue"])
    return None


def _attributes(items: list[Mapping[str, Any]]) -> dict[str, JsonValue]:
    return {str(item["key"]): _any_value(item.get("value", {})) for item in items}


def _status_code(status: Mapping[str, Any]) -> SpanStatus:
    code = status.get("code", 0)
    if isinstance(code, str):
        code = _STATUS_NAMES.get(code, 0)
    return _STATUS.get(int(code), SpanStatus.UNSET)


def _hex_id(value: object, digits: int, what: str) -> str:
    text = str(value or "").lower()
    if len(text) != digits or text.strip("0123456789abcdef"):
        raise ValueError(f"{what} must be {digits} hex digits, got {value!r}")
    return text


def _spans_of(request: Mapping[str, Any]) -> list[Span]:
    """Spans of an ExportTraceServiceRequest in OTLP's JSON form (ids already hex)."""
    spans: list[Span] = []
    for resource_spans in request.get("resourceSpans", []):
        resource = _attributes(resource_spans.get("resource", {}).get("attributes", []))
        for scope_spans in resource_spans.get("scopeSpans", []):
            for raw in scope_spans.get("spans", []):
                attributes = {**resource, **_attributes(raw.get("attributes", []))}
                parent = raw.get("parentSpanId")
                spans.append(
                    Span(
                        trace_id=_hex_id(raw.get("traceId"), 32, "traceId"),
                        span_id=_hex_id(raw.get("spanId"), 16, "spanId"),
                        parent_span_id=_hex_id(parent, 16, "parentSpanId") if parent else None,
                        name=str(raw.get("name", "")),
                        start_ns=int(raw.get("startTimeUnixNano", 0)),
                        end_ns=int(raw.get("endTimeUnixNano", 0)),
                        source=SpanSource.AGENT,
                        status=_status_code(raw.get("status", {})),
                        attributes=attributes,
                    )
                )
    return spans


def _proto_value(value: Any) -> JsonValue:
    """An OTLP protobuf `AnyValue`."""
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [_proto_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _proto_value(kv.value) for kv in value.kvlist_value.values}
    # protobuf ships no types: the message's fields are what the OTLP schema says they are.
    if which == "bytes_value":
        text: str = value.bytes_value.hex()
        return text
    scalar: str | bool | int | float = getattr(value, which)
    return scalar


def _spans_of_protobuf(body: bytes) -> list[Span]:
    """Spans of an ExportTraceServiceRequest in protobuf, read from the message directly (no JSON detour)."""
    try:
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError as exc:
        raise MissingExtra("receiving OTLP protobuf spans", "otel") from exc
    message = ExportTraceServiceRequest()
    try:
        message.ParseFromString(body)
    except DecodeError as exc:
        raise OtlpError(f"the body is not an OTLP ExportTraceServiceRequest in protobuf: {exc}") from exc
    spans: list[Span] = []
    for resource_spans in message.resource_spans:
        resource = {kv.key: _proto_value(kv.value) for kv in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for raw in scope_spans.spans:
                attributes = dict(resource)
                attributes.update((kv.key, _proto_value(kv.value)) for kv in raw.attributes)
                parent = raw.parent_span_id.hex()
                spans.append(
                    Span(
                        trace_id=_hex_id(raw.trace_id.hex(), 32, "trace_id"),
                        span_id=_hex_id(raw.span_id.hex(), 16, "span_id"),
                        parent_span_id=_hex_id(parent, 16, "parent_span_id") if parent else None,
                        name=raw.name,
                        start_ns=raw.start_time_unix_nano,
                        end_ns=raw.end_time_unix_nano,
                        source=SpanSource.AGENT,
                        status=_STATUS.get(raw.status.code, SpanStatus.UNSET),
                        attributes=attributes,
                    )
                )
    return spans


def parse_otlp(body: bytes, content_type: str | None) -> list[Span]:
    """The spans of one OTLP/HTTP trace export.

    Args:
        content_type: the request's Content-Type; protobuf unless it says JSON (OTLP's default is protobuf).

    Raises:
        OtlpError: the body cannot be decoded, or a span lacks its trace or span id.
        MissingExtra: a protobuf body without opentelemetry-proto installed (the `otel` extra).
    """
    kind = (content_type or PROTOBUF).split(";")[0].strip().lower()
    if kind not in (JSON, PROTOBUF):
        raise OtlpError(f"unsupported Content-Type {kind!r}: send {PROTOBUF} or {JSON}")
    try:
        return _spans_of_protobuf(body) if kind == PROTOBUF else _spans_of(_json_request(body))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise OtlpError(f"a span of the export is malformed ({type(exc).__name__}: {exc})") from exc


def _json_request(body: bytes) -> Mapping[str, Any]:
    try:
        request = json.loads(body)
    except ValueError as exc:
        raise OtlpError(f"the body is not JSON: {exc}") from exc
    if not isinstance(request, dict):
        raise OtlpError("an OTLP JSON export is an object with `resourceSpans`")
    return request
