"""An agent service that answers with an AG-UI event stream (SSE), standard library only.

`python agui_agent_service.py --port 0` prints its URL, then serves. `POST /` investigates: thinking, a call
to sredrill's `get_alert` through the Task's tools_url (sredrill records it), a call to a tool of its own
(`search_runbook`, reported as AG-UI tool-call events), an intermediate text message, then the answer and
RUN_FINISHED. `POST /error` streams a RUN_ERROR.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def call_tool(task: dict, name: str) -> object:
    req = urllib.request.Request(
        f"{task['tools_url']}/tools/{name}",
        data=b"{}",
        method="POST",
        headers={"Authorization": f"Bearer {task['token']}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)["result"]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def send(self, **event: object) -> None:
        self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        self.wfile.flush()

    def do_POST(self) -> None:
        task = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        run = {"threadId": task["run_id"], "runId": task["run_id"]}
        self.send(type="RUN_STARTED", **run)
        if self.path == "/error":
            self.send(type="RUN_ERROR", message="the model provider is down", code="upstream")
            return
        self.send(type="THINKING_START")
        self.send(type="THINKING_TEXT_MESSAGE_START")
        for part in ("The alert names CPU; ", "check the runbook first."):
            self.send(type="THINKING_TEXT_MESSAGE_CONTENT", delta=part)
        self.send(type="THINKING_TEXT_MESSAGE_END")
        self.send(type="THINKING_END")
        alert = call_tool(task, "get_alert")
        self.send(type="TOOL_CALL_START", toolCallId="tc-1", toolCallName="search_runbook", parentMessageId="m0")
        for part in ('{"query": ', '"cpu saturation"}'):
            self.send(type="TOOL_CALL_ARGS", toolCallId="tc-1", delta=part)
        self.send(type="TOOL_CALL_END", toolCallId="tc-1")
        self.send(type="TOOL_CALL_RESULT", messageId="m1", toolCallId="tc-1", content='{"steps": ["kill the query"]}')
        self.send(type="STATE_SNAPSHOT", snapshot={"phase": "answering"})
        self.send(type="TEXT_MESSAGE_START", messageId="m2", role="assistant")
        self.send(type="TEXT_MESSAGE_CONTENT", messageId="m2", delta="Looking at the alert.")
        self.send(type="TEXT_MESSAGE_END", messageId="m2")
        self.send(type="TEXT_MESSAGE_START", messageId="m3", role="assistant")
        for part in ("The alert '", alert["title"], "' comes from ", "a runaway query."):
            self.send(type="TEXT_MESSAGE_CONTENT", messageId="m3", delta=part)
        self.send(type="TEXT_MESSAGE_END", messageId="m3")
        self.send(type="RUN_FINISHED", **run)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    server = ThreadingHTTPServer(("127.0.0.1", parser.parse_args().port), Handler)
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
