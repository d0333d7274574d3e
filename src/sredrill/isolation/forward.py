"""The in-sandbox forwarder: 127.0.0.1:PORT to the tool server's Unix socket, around the agent's command.

A sandbox without network has only its own loopback. This listens there on the port the agent's
`SREDRILL_TOOLS_URL` names and pipes each connection to the tool server's AF_UNIX socket (bound into the
sandbox), so the agent uses the same HTTP URL as outside. It runs CMD as its child with the same stdin, stdout
and stderr and exits with CMD's exit code (128+N when a signal N ended it); SIGTERM or SIGINT kill CMD.

It starts in every sandboxed run, so it is threads over plain sockets and imports nothing but the standard
library (importing asyncio alone took about 70 ms more than these modules, median of 40 starts on 2 cores);
`Sandbox` runs it as a script, `python -I -S …/forward.py`, which spares importing sredrill and site.

Usage:
    python -m sredrill.isolation.forward --port 8123 --socket /run/sredrill-1/tools.sock -- python agent.py
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading
from collections.abc import Sequence
from types import FrameType

__all__ = ["main", "parse_args", "serve"]

_CHUNK = 64 * 1024
_USAGE = "usage: python -m sredrill.isolation.forward --port PORT --socket PATH -- CMD [ARG …]"


def parse_args(argv: Sequence[str]) -> tuple[int, str, list[str]]:
    """`--port P --socket PATH -- CMD …` -> (port, socket path, command); SystemExit(2) with usage when bad."""
    port: int | None = None
    socket_path: str | None = None
    rest = list(argv)
    while rest and rest[0] != "--":
        flag = rest.pop(0)
        if flag not in ("--port", "--socket") or not rest:
            raise SystemExit(f"forward: unexpected {flag!r}\n{_USAGE}")
        value = rest.pop(0)
        if flag == "--port":
            if not value.isdigit() or not 0 < int(value) < 65536:
                raise SystemExit(f"forward: --port {value!r} is not a TCP port (1-65535)\n{_USAGE}")
            port = int(value)
        else:
            socket_path = value
    command = rest[1:]
    if port is None or socket_path is None or not command:
        raise SystemExit(f"forward: --port, --socket and a command after -- are required\n{_USAGE}")
    return port, socket_path, command


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(_CHUNK):
            sink.sendall(data)
        # Half-close: the other side may still be answering (a client that shut down its write side).
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        # One side is gone: end both directions, so the other thread's recv returns too.
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def _forward(client: socket.socket, socket_path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(socket_path)
    except OSError as exc:
        print(f"forward: cannot reach the tool server at {socket_path}: {exc}", file=sys.stderr)
        upstream.close()
        client.close()
        return
    back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
    back.start()
    _pipe(client, upstream)
    back.join()
    upstream.close()
    client.close()


def _accept(listener: socket.socket, socket_path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return  # the listener was closed: the agent has exited
        threading.Thread(target=_forward, args=(client, socket_path), daemon=True).start()


def serve(port: int, socket_path: str, command: Sequence[str]) -> int:
    """Forward while `command` runs; its exit code, or 128+N for signal N (ours or its own)."""
    listener = socket.create_server(("127.0.0.1", port))  # listening before the agent starts: no race
    threading.Thread(target=_accept, args=(listener, socket_path), daemon=True).start()
    child: int | None = None
    stopped_by: list[int] = []

    def stop(signum: int, _frame: FrameType | None) -> None:
        stopped_by.append(signum)
        if child is not None:
            os.kill(child, signal.SIGKILL)

    # Before the agent exists: a signal in between must still end it, not leave it running.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, stop)
    try:
        # posix_spawn, not subprocess: the agent inherits stdin/stdout/stderr as they are, and importing
        # subprocess would cost each start about 6 ms.
        child = os.posix_spawnp(command[0], list(command), os.environ)
    except OSError as exc:
        print(f"forward: cannot run {command[0]!r}: {exc}", file=sys.stderr)
        return 127
    if stopped_by:
        os.kill(child, signal.SIGKILL)
    _, status = os.waitpid(child, 0)
    listener.close()
    if stopped_by:
        return 128 + stopped_by[0]
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: parse, forward, return the exit code."""
    port, socket_path, command = parse_args(sys.argv[1:] if argv is None else argv)
    return serve(port, socket_path, command)


if __name__ == "__main__":
    sys.exit(main())
