"""The in-sandbox forwarder: 127.0.0.1:PORT to the tool server's Unix socket, around the agent's command.

A sandbox without network has only its own loopback. This listens there on the port the agent's
`SREDRILL_TOOLS_URL` names and pipes each connection to the tool server's AF_UNIX socket (bound into the
sandbox), so the agent uses the same HTTP URL as outside. It runs CMD as its child with the same stdin, stdout
and stderr and exits with CMD's exit code (128+N when a signal N ended it); SIGTERM or SIGINT kill CMD.

It starts in every sandboxed run: asyncio and the standard library only, nothing else of sredrill.

Usage:
    python -m sredrill.isolation.forward --port 8123 --socket /run/sredrill-1/tools.sock -- python agent.py
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Sequence

__all__ = ["main", "parse_args", "run"]

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


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
        # Half-close: the other side may still be answering (an HTTP client that shut down its write side).
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()


async def _forward(socket_path: str, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
    try:
        upstream_r, upstream_w = await asyncio.open_unix_connection(socket_path)
    except OSError as exc:
        print(f"forward: cannot reach the tool server at {socket_path}: {exc}", file=sys.stderr)
        client_w.close()
        return
    try:
        await asyncio.gather(_pipe(client_r, upstream_w), _pipe(upstream_r, client_w))
    finally:
        for writer in (upstream_w, client_w):
            writer.close()


async def run(port: int, socket_path: str, command: Sequence[str]) -> int:
    """Serve the forward while `command` runs; its exit code, or 128+N for signal N (ours or its own)."""
    server = await asyncio.start_server(
        lambda r, w: _forward(socket_path, r, w), host="127.0.0.1", port=port, reuse_address=True
    )
    child = await asyncio.create_subprocess_exec(*command)
    loop = asyncio.get_running_loop()
    stopped_by: list[int] = []

    def stop(signum: int) -> None:
        stopped_by.append(signum)
        if child.returncode is None:
            child.kill()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop, signum)
    try:
        code = await child.wait()
    finally:
        server.close()
    if stopped_by:
        return 128 + stopped_by[0]
    return 128 - code if code < 0 else code


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: parse, forward, return the exit code."""
    port, socket_path, command = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return asyncio.run(run(port, socket_path, command))
    except FileNotFoundError as exc:
        print(f"forward: cannot run {command[0]!r}: {exc}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main())
