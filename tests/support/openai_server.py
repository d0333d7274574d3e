"""A real, local OpenAI-compatible server for tests: scripted replies, recorded requests.

It listens on 127.0.0.1 (a free port) in a background thread, so clients talk real HTTP to it. Replies
come from a queue (`push`), else from a `responder(request_json) -> (status, body, headers)`; every request
body is recorded, so a test can count calls and read what was sent.

Examples:
    >>> with OpenAIStub([rate_limited(retry_after_s=0), chat_completion("hello")]) as stub:
    ...     reply = await ChatClient(stub.base_url, model="stub").complete(messages)
    ...     assert reply.content == "hello" and len(stub.requests) == 2
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = [
    "OpenAIStub",
    "Responder",
    "StubReply",
    "StubRequest",
    "Turn",
    "chat_completion",
    "conversation",
    "malformed",
    "rate_limited",
    "server_error",
    "tool_call",
]

Responder = Callable[[dict[str, Any]], tuple[int, Mapping[str, Any] | str | bytes, Mapping[str, str]]]
"""`responder(request_json) -> (status, body, headers)`: a dict body is sent as JSON, str/bytes as is."""


@dataclass(frozen=True, slots=True)
class StubReply:
    """One scripted HTTP reply."""

    status: int = 200
    body: Mapping[str, Any] | str | bytes = field(default_factory=dict)
    """A dict is sent as JSON; str or bytes are sent as they are (for malformed replies)."""
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StubRequest:
    """One request the stub received."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any
    """The JSON body, or the raw text when it was not JSON."""


def tool_call(name: str, arguments: Mapping[str, Any] | str, *, id: str | None = "call_1") -> dict[str, Any]:
    """A `tool_calls[]` entry; `arguments` as given (a dict stays an object, as some servers send it)."""
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if id is not None:
        call["id"] = id
    return call


def chat_completion(
    content: str | None = None,
    *,
    tool_calls: Iterable[Mapping[str, Any]] = (),
    usage: tuple[int, int] | None = None,
    finish_reason: str | None = "stop",
    model: str = "stub-model",
    absent: Iterable[str] = (),
) -> StubReply:
    """A 200 chat completion with `content` and/or tool calls; `usage=(prompt, completion)` adds usage.

    `absent` names keys to leave out altogether, as some servers do: `"content"` (of the message),
    `"finish_reason"` (of the choice).
    """
    message: dict[str, Any] = {"role": "assistant", "content": content}
    calls = [dict(c) for c in tool_calls]
    if calls:
        message["tool_calls"] = calls
        if finish_reason == "stop":
            finish_reason = "tool_calls"
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish_reason}
    for key in absent:
        (message if key == "content" else choice).pop(key, None)
    body: dict[str, Any] = {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [choice],
    }
    if usage is not None:
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
    return StubReply(body=body)


Turn = Callable[[list[dict[str, Any]]], StubReply]
"""One scripted model turn: gets the request's messages, returns the reply."""


def conversation(turns: Sequence[StubReply | Turn]) -> Responder:
    """A responder that plays a scripted model, one turn per request of the same conversation.

    The turn is chosen by the number of assistant messages already in the request, so every conversation
    (one per agent run, several at once under `--jobs`) follows the same script from its start; a turn may
    be a function of the messages so far (to answer from what the tools returned).
    """

    def respond(request: dict[str, Any]) -> tuple[int, Mapping[str, Any] | str | bytes, Mapping[str, str]]:
        messages = list(request.get("messages") or [])
        index = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
        if index >= len(turns):
            return (
                500,
                {"error": {"message": f"OpenAIStub: the script has {len(turns)} turn(s), asked for turn {index + 1}"}},
                {},
            )
        turn = turns[index]
        reply = turn if isinstance(turn, StubReply) else turn(messages)
        return reply.status, reply.body, reply.headers

    return respond


def rate_limited(*, retry_after_s: float | None = 0) -> StubReply:
    """A 429, with `Retry-After` in seconds unless None."""
    headers = {} if retry_after_s is None else {"Retry-After": f"{retry_after_s:g}"}
    body = {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}
    return StubReply(status=429, body=body, headers=headers)


def server_error(status: int = 500, message: str = "internal error") -> StubReply:
    """An error reply in OpenAI's shape (`{"error": {"message": …}}`); any status, 400 included."""
    return StubReply(status=status, body={"error": {"message": message, "type": "server_error"}})


def malformed(text: str = '{"choices": [') -> StubReply:
    """A 200 whose body is not valid JSON."""
    return StubReply(status=200, body=text, headers={"Content-Type": "application/json"})


class OpenAIStub:
    """A local OpenAI-compatible HTTP server; use it as a context manager.

    Args:
        replies: scripted replies, served in order (`StubReply`, or a dict sent as a 200 JSON body).
        responder: called for a request when the queue is empty.

    With neither a queued reply nor a responder, a request gets a 500 whose message says so, and is
    counted in `unexpected`.
    """

    def __init__(self, replies: Iterable[StubReply | Mapping[str, Any]] = (), *, responder: Responder | None = None):
        self._lock = threading.Lock()
        self._queue: deque[StubReply] = deque()
        self._requests: list[StubRequest] = []
        self.responder = responder
        self.unexpected = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.push(*replies)

    def push(self, *replies: StubReply | Mapping[str, Any]) -> None:
        """Queue more replies."""
        with self._lock:
            self._queue.extend(r if isinstance(r, StubReply) else StubReply(body=r) for r in replies)

    @property
    def requests(self) -> list[StubRequest]:
        """Every request received so far, in order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of every request so far."""
        return [r.body for r in self.requests]

    @property
    def base_url(self) -> str:
        """The API root clients use, ending with `/v1`."""
        return f"{self.url}/v1"

    @property
    def url(self) -> str:
        """The server's root URL (`http://127.0.0.1:PORT`)."""
        if self._server is None:
            raise RuntimeError("the OpenAIStub is not started: use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> OpenAIStub:
        """Start listening on a free loopback port."""
        stub = self

        class Handler(_Handler):
            owner = stub

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        server = self._server
        # A short poll interval keeps close() quick: shutdown() waits for the loop to look again.
        self._thread = threading.Thread(
            target=lambda: server.serve_forever(poll_interval=0.01), name="openai-stub", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop the server and wait for its thread."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()
        self._server = self._thread = None

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _answer(self, request: StubRequest) -> StubReply:
        with self._lock:
            self._requests.append(request)
            if self._queue:
                return self._queue.popleft()
            if self.responder is None:
                self.unexpected += 1
        if self.responder is not None:
            body = request.body if isinstance(request.body, dict) else {}
            status, reply, headers = self.responder(body)
            return StubReply(status=status, body=reply, headers=headers)
        return server_error(500, "OpenAIStub: no scripted reply left and no responder")


class _Handler(BaseHTTPRequestHandler):
    owner: OpenAIStub
    protocol_version = "HTTP/1.1"

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode("utf-8", errors="replace") if length else ""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        request = StubRequest(self.command, self.path, dict(self.headers.items()), body)
        reply = self.owner._answer(request)
        if isinstance(reply.body, bytes):
            payload = reply.body
        elif isinstance(reply.body, str):
            payload = reply.body.encode()
        else:
            payload = json.dumps(reply.body).encode()
        self.send_response(reply.status)
        headers = dict(reply.headers)
        if not any(k.lower() == "content-type" for k in headers):
            headers["Content-Type"] = "application/json"
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_POST = do_GET = _handle

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep pytest's output for the test's own messages
