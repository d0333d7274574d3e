"""OTLP/HTTP exports decoded: JSON (hex ids, string integers) and protobuf give the same spans."""

from __future__ import annotations

import json

import pytest

from sredrill.traces import OtlpError, SpanSource, SpanStatus, parse_otlp

TRACE = "5b8efff798038103d269b633813fc60c"


def export(**span: object) -> dict:
    base = {
        "traceId": TRACE.upper(),
        "spanId": "eee19b7ec3c1b174",
        "parentSpanId": "",
        "name": "chat m",
        "startTimeUnixNano": "1000000000",
        "endTimeUnixNano": "1250000000",
        "attributes": [
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "12"}},
            {"key": "gen_ai.request.model", "value": {"stringValue": "m"}},
            {"key": "flags", "value": {"arrayValue": {"values": [{"boolValue": True}]}}},
        ],
        "status": {"code": 2},
    }
    base.update(span)
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "agent"}}]},
                "scopeSpans": [{"spans": [base]}],
            }
        ]
    }


def test_json_exports_decode_with_resource_attributes_and_hex_ids() -> None:
    (span,) = parse_otlp(json.dumps(export()).encode(), "application/json; charset=utf-8")
    assert (span.trace_id, span.span_id, span.parent_span_id) == (TRACE, "eee19b7ec3c1b174", None)
    assert span.duration_ms == 250.0
    assert span.source is SpanSource.AGENT and span.status is SpanStatus.ERROR
    assert span.attributes == {
        "service.name": "agent",
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.request.model": "m",
        "flags": [True],
    }


def test_protobuf_exports_decode_like_json() -> None:
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    as_json = export()
    # protobuf's JSON mapping takes bytes as base64, OTLP's JSON takes hex: build the message from bytes
    raw = as_json["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    import base64

    for key in ("traceId", "spanId"):
        raw[key] = base64.b64encode(bytes.fromhex(raw[key])).decode()
    del raw["parentSpanId"]
    message = ParseDict(as_json, ExportTraceServiceRequest())
    (span,) = parse_otlp(message.SerializeToString(), "application/x-protobuf")
    (expected,) = parse_otlp(json.dumps(export()).encode(), "application/json")
    assert span == expected


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        (b"{not json", "application/json", "not JSON"),
        (b"[]", "application/json", "an object with `resourceSpans`"),
        (b"\xff\xff\xff", "application/x-protobuf", "not an OTLP ExportTraceServiceRequest"),
        (b"{}", "text/plain", "unsupported Content-Type 'text/plain'"),
        (json.dumps(export(traceId=None)).encode(), "application/json", "traceId must be 32 hex digits"),
    ],
)
def test_unreadable_exports_say_why(body: bytes, content_type: str, message: str) -> None:
    with pytest.raises(OtlpError, match=message):
        parse_otlp(body, content_type)
