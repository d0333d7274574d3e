#!/usr/bin/env python3
"""An agent as an HTTP service (standard library only): sredrill POSTs each Task, the service answers JSON.

    python examples/agents/http_agent_service.py --port 8001 &
    sredrill run --pack rds_postgres --agent http://127.0.0.1:8001/

For each agent run sredrill POSTs the Task (docs/agent-protocol.md) with a `traceparent` header. The Task's
`tools_url` and `token` reach this run's tools over HTTP; sredrill records those calls itself. The reply is
`{"output"?, "diagnosis"?, "steps"?}`: here a diagnosis, and `thinking` steps saying why.

The reasoning is deliberately simple (which resource the alert names, and whether its metric really moved):
replace `investigate` with your agent. `--port 0` picks a free port; the first line on stdout is the URL.
"""

import argparse
import json
import sys
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Alert metric -> the failure mode it points at when it really moved.
MODES = {
    "ReplicaLag": "replication_lag",
    "DatabaseConnections": "connection_exhaustion",
    "FreeStorageSpace": "storage_full",
    "CPUUtilization": "cpu_saturation",
}


class Tools:
    """This run's tools over HTTP, with its bearer token."""

    def __init__(self, task: dict) -> None:
        self.url, self.token = task["tools_url"], task["token"]

    def __call__(self, name: str, **args: object) -> dict:
        req = urllib.request.Request(
            f"{self.url}/tools/{name}",
            data=json.dumps(args).encode(),
            method="POST",
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return json.load(resp)["result"]
        except urllib.error.HTTPError as err:  # {"error": {"code", "message"}}: the agent could correct it
            return {"error": json.load(err)["error"]}


def investigate(task: dict) -> dict:
    """One investigation: returns the reply body."""
    if not task.get("tools_url"):
        return {"output": "no tools were served for this run, so no investigation was possible"}
    call = Tools(task)
    alert = call("get_alert")
    metric = alert.get("annotations", {}).get("metric_name", "")
    steps = [{"kind": "thinking", "content": f"the alert is about {metric or 'an unnamed metric'}"}]
    series = call("query_metrics", metric_name=metric).get("series", []) if metric else []
    values = [v for s in series if s["metric_name"] == metric for v in s["values"]]
    moved = bool(values) and max(values) != min(values)
    waits = call("get_performance_insights", dimension="top_wait_events").get("top_wait_events", [])
    top_wait = waits[0]["name"] if waits else "no wait event"
    steps.append({"kind": "thinking", "content": f"{metric} moved: {moved}; top wait event: {top_wait}"})
    mode = MODES.get(metric, "unknown") if moved else "unknown"
    return {
        "steps": steps,
        "diagnosis": {
            "root_cause": f"{metric} left its normal range ({mode}); sessions mostly wait on {top_wait}",
            "category": "resource_exhaustion" if mode != "unknown" else "unknown",
            "failure_modes": [mode],
            "claims": [
                {
                    "text": f"{metric} ranged {min(values, default=0):g} to {max(values, default=0):g}",
                    "evidence": ["aws_cloudwatch_metrics"] if values else [],
                },
                {"text": f"top wait event: {top_wait}", "evidence": ["aws_performance_insights"]},
            ],
        },
    }


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        task = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        print(f"run {task['run_id']} traceparent {self.headers.get('traceparent')}", file=sys.stderr)
        body = json.dumps(investigate(task)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass  # one line per run above is enough


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8001)
    port = parser.parse_args().port
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)  # loopback: sredrill runs on this machine
    print(f"http://127.0.0.1:{server.server_address[1]}/", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
