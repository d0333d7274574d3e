"""A worker handler for the tests of `sredrill.workers`: each request names what the worker should do."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from typing import Any

from sredrill import processes
from sredrill.workers import Ask, capture_output


class Custom(BaseException):
    """A BaseException of the user's own."""


async def _nap(seconds: float) -> None:
    await asyncio.sleep(seconds)  # where a cancelled call is suspended (test_workers: the frames it reports)


class Probe:
    """`{"op": ...}`: echo, block, sleep, exit, raise, ask, print, spawn."""

    def __init__(self) -> None:
        self.calls = 0

    async def handle(self, body: Any, ask: Ask) -> Any:
        self.calls += 1
        op = body["op"]
        if op == "echo":
            return {"echo": body.get("value"), "pid": os.getpid(), "calls": self.calls}
        if op == "block":
            time.sleep(body["seconds"])  # blocking: no asyncio timeout can stop it
            return "woke"
        if op == "sleep":
            await ask({"sleeping": True})  # the driver knows the call is in the handler before it cancels it
            await _nap(body["seconds"])
            return "woke"
        if op == "exit":
            os._exit(body["code"])
        if op == "raise":
            kinds = {"SystemExit": SystemExit, "KeyboardInterrupt": KeyboardInterrupt, "Custom": Custom}
            raise kinds[body["kind"]](body.get("message", "boom"))
        if op == "ask":
            answers = [await ask({"n": n}) for n in range(body["times"])]
            return answers
        if op == "print":
            with capture_output(limit_bytes=body.get("limit", 1024)) as out:
                print(body["text"])
                os.write(2, b"to fd 2\n")
            return {"stdout": out.stdout, "stderr": out.stderr, "truncated": out.truncated}
        if op == "spawn":
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
            processes.register_group(child.pid)
            return {"pid": child.pid}
        raise ValueError(f"unknown op {op!r}")
