"""Exporting spans over OTLP JSON: what is sent decodes back to the same spans; the standard variables decide."""

from __future__ import annotations

import subprocess
import sys

import httpx

from sredrill.traces import Span, SpanSource, SpanStatus, export_endpoint, export_spans, otlp_json, parse_otlp

SPANS = [
    Span(trace_id="a" * 32, span_id="1" * 16, parent_span_id=None, name="test t", start_ns=1, end_ns=9,
         source=SpanSource.SREDRILL, status=SpanStatus.OK, attributes={"sredrill.test.id": "t"}),
    Span(trace_id="a" * 32, span_id="2" * 16, parent_span_id="1" * 16, name="chat", start_ns=2, end_ns=3,
         source=SpanSource.AGENT, status=SpanStatus.ERROR,
         attributes={"gen_ai.usage.input_tokens": 7, "ratio": 0.5, "ok": True, "tags": ["x"], "m": {"k": "v"}}),
]  # fmt: skip


def test_the_otlp_json_decodes_back_to_the_same_spans() -> None:
    decoded = parse_otlp(otlp_json(SPANS), "application/json")
    ours, theirs = decoded
    assert ours.attributes == {"service.name": "sredrill", "sredrill.test.id": "t"}
    assert ours.model_dump(exclude={"source", "attributes"}) == SPANS[0].model_dump(exclude={"source", "attributes"})
    assert theirs.model_dump(exclude={"source"}) == SPANS[1].model_dump(exclude={"source"})


def test_the_endpoint_and_headers_come_from_opentelemetrys_variables() -> None:
    assert export_endpoint({}) is None
    assert export_endpoint({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"}) == "http://c:4318/v1/traces"
    both = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t/x"}
    assert export_endpoint(both) == "http://t/x"


async def test_an_export_posts_json_with_the_headers_and_survives_a_refusal() -> None:
    seen: list[httpx.Request] = []

    def collector(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200 if len(seen) == 1 else 503, json={})

    environ = {"OTEL_EXPORTER_OTLP_HEADERS": "api-key=s%20ecret,x=1"}
    transport = httpx.MockTransport(collector)
    assert await export_spans(SPANS, "http://c/v1/traces", environ=environ, transport=transport) is True
    assert await export_spans(SPANS, "http://c/v1/traces", environ=environ, transport=transport) is False
    assert seen[0].headers["api-key"] == "s ecret" and seen[0].headers["content-type"] == "application/json"
    assert len(parse_otlp(seen[0].content, "application/json")) == 2


def test_a_worker_does_not_import_httpx_until_it_exports() -> None:
    # Every body worker imports the engine and the SDK; httpx costs a quarter second or more to import.
    code = "import sys, sredrill.engine.body_workers, sredrill.sdk; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
