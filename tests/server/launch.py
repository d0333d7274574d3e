"""Start a server process and find its URL in what it prints on stderr (it binds port 0: a free port)."""

from __future__ import annotations

import contextlib
import queue
import re
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote

import httpx

_URL = re.compile(r"https?://[\w.\[\]:-]+:\d+")
_TOKEN = re.compile(r"/\?token=([\w%.~-]+)")


@dataclass
class Launched:
    proc: subprocess.Popen[str]
    url: str
    stderr: list[str] = field(default_factory=list)
    """Every stderr line so far (read by a thread while the process runs)."""

    @property
    def token(self) -> str:
        """The runs API's token, from the link `sredrill serve` prints (`http://127.0.0.1:PORT/?token=…`)."""
        m = _TOKEN.search("".join(self.stderr))
        assert m is not None, f"no ?token= link in the server's output:\n{''.join(self.stderr)}"
        return unquote(m.group(1))

    def auth(self) -> dict[str, str]:
        """The header that carries the runs API's token."""
        return {"Authorization": f"Bearer {self.token}"}


@contextlib.contextmanager
def launched(cmd: Sequence[str], *, env: Mapping[str, str], cwd: str | None = None,
             deadline_s: float = 60) -> Iterator[Launched]:  # fmt: skip
    """Run `cmd`, wait for a URL on its stderr and for `/health`, yield; SIGTERM it afterwards."""
    proc = subprocess.Popen(list(cmd), env=dict(env), cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    lines: queue.Queue[str | None] = queue.Queue()
    seen: list[str] = []

    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append(line)
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        url = None
        while url is None:
            line = lines.get(timeout=deadline_s)
            if line is None:
                raise AssertionError(f"{cmd} exited ({proc.wait()}) before serving:\n{''.join(seen)}")
            if m := _URL.search(line):
                url = m.group(0)
        assert httpx.get(f"{url}/health", timeout=deadline_s).json() == {"status": "healthy"}
        yield Launched(proc, url, seen)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        reader.join(timeout=5)
