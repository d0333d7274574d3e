"""A `cmd:` agent that traces itself with the OpenTelemetry SDK and exports over OTLP/HTTP (protobuf).

`python otel_agent_cmd.py [silent]`: it calls its one tool through sredrill's HTTP tools inside a client span
(`gen_ai.tool.name`), "calls a model" inside a `chat` span with GenAI token usage, both in the trace of the
TRACEPARENT it was given, and exports to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT. `silent` exports nothing.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request

INPUT_TOKENS = 1200
OUTPUT_TOKENS = 345


def call_tool(name: str) -> object:
    req = urllib.request.Request(
        f"{os.environ['SREDRILL_TOOLS_URL']}/tools/{name}",
        data=b"{}",
        method="POST",
        headers={"Authorization": f"Bearer {os.environ['SREDRILL_RUN_TOKEN']}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)["result"]


def main(mode: str) -> int:
    json.load(sys.stdin)
    if mode == "silent":
        call_tool("get_alert")
        print(json.dumps({"kind": "response", "content": "done, untraced"}))
        return 0
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    provider = TracerProvider(resource=Resource.create({"service.name": "otel-sample-agent"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))  # endpoint from the environment
    tracer = provider.get_tracer("otel-sample-agent")
    parent = TraceContextTextMapPropagator().extract({"traceparent": os.environ["TRACEPARENT"]})
    with tracer.start_as_current_span("invoke_agent otel-sample-agent", context=parent):
        with tracer.start_as_current_span("execute_tool get_alert") as span:
            span.set_attribute("gen_ai.operation.name", "execute_tool")
            span.set_attribute("gen_ai.tool.name", "get_alert")
            alert = call_tool("get_alert")
        with tracer.start_as_current_span("chat fake-model") as span:
            span.set_attribute("gen_ai.operation.name", "chat")
            span.set_attribute("gen_ai.request.model", "fake-model")
            span.set_attribute("gen_ai.usage.input_tokens", INPUT_TOKENS)
            span.set_attribute("gen_ai.usage.output_tokens", OUTPUT_TOKENS)
            span.set_attribute("gen_ai.usage.cost", 0.0125)
        with tracer.start_as_current_span("execute_tool grep_notes") as span:  # a tool of its own
            span.set_attribute("gen_ai.tool.name", "grep_notes")
    provider.shutdown()  # flushes the batch before the process exits
    print(json.dumps({"kind": "response", "content": f"alert was {alert}"}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "traced"))
