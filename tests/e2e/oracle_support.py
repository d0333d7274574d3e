"""What the oracle tests share (issue 17): the project with answer material in it, a server that answers without
a token, what an oracle run got, and the loud skip of the sandbox tests.

`OracleProject` is a project folder with a copy of a small pack and a store primed by one earlier run, so there
is answer material on disk, in the store, in the driver's argv (`--pack PATH`) and environment (`SREDRILL_DB`).
`leaky_store()` serves, on a loopback port, a stand-in for any server that answers without a token.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Cli, Project

ORACLES = Path(__file__).resolve().parents[1] / "fixtures" / "oracles"
SMALL_PACK = Path(__file__).resolve().parents[1] / "fixtures" / "k8s_small"
SCENARIO = "001-ledger-memory"
TRUTH = "oom_killed"
"""The scenario's true failure mode: every piece of answer material an oracle reports names it."""
REQUIRED = os.environ.get("SREDRILL_REQUIRE_SANDBOX") == "1"
ALL_ORACLES = ("heap", "parent", "load_pack", "fs", "proc", "loopback")
"""What `oracle_all` runs, in its order."""


@dataclass(frozen=True)
class Got:
    """What one oracle run got: its root cause line and its report's channels."""

    root_cause: str
    found: dict[str, list[str]]
    clues: list[str]
    status: str
    isolation: str | None

    @property
    def answer(self) -> bool:
        return self.root_cause.startswith("found:") and bool(self.channels())

    def channels(self) -> set[str]:
        return {ch for ch, items in self.found.items() if any(TRUTH in m for m in items)}


def oracle_spec(name: str, form: str) -> str:
    """The agent spec of oracle `name` (`all` for the combined one) as a `py:` or a `cmd:` agent."""
    if form == "py":
        return f"py:oracle_{name}:agent"
    return f"cmd:{sys.executable} {ORACLES / f'oracle_{name}.py'}"


def all_spec(form: str, *, fs: bool = True) -> str:
    """The combined oracle (`oracle_all`) as a `py:` or `cmd:` agent; `fs=False` leaves out the filesystem walk
    (it takes seconds; where the form does not change what the disk shows, one form runs it)."""
    if form == "py":
        return "py:oracle_all:agent" if fs else "py:oracle_all:agent_without_fs"
    return oracle_spec("all", "cmd") + ("" if fs else " --without fs")


def oracles_of(*, fs: bool = True) -> tuple[str, ...]:
    """The oracles `all_spec(…, fs=fs)` runs."""
    return tuple(n for n in ALL_ORACLES if fs or n != "fs")


def got_of(diagnosis: dict[str, Any], status: str, isolation: str | None) -> Got:
    """What a one-channel oracle got, from the diagnosis of its run."""
    body = json.loads(diagnosis["report"])
    return Got(diagnosis["root_cause"], body["found"], body["clues"], status, isolation)


def gots_of(diagnosis: dict[str, Any], status: str, isolation: str | None) -> dict[str, Got]:
    """What each oracle of an `oracle_all` run got, from the diagnosis of its run."""
    body = json.loads(diagnosis["report"])
    assert body["oracle"] == "all", body
    return {
        name: Got(part["root_cause"], part["found"], part["clues"], status, isolation)
        for name, part in body["oracles"].items()
    }


class LeakyStore(BaseHTTPRequestHandler):
    """A stand-in for a server on the machine that serves a store without a token (what sredrill's must not do)."""

    body = json.dumps({"runs": [{"test_id": f"pack/{SCENARIO}", "expected": {"failure_modes": [TRUTH]}}]}).encode()

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *_: Any) -> None:
        pass


@contextlib.contextmanager
def leaky_store() -> Iterator[int]:
    """Serve `LeakyStore` on a free loopback port; yield the port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), LeakyStore)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


class OracleProject(Project):
    """A project folder with a copy of a small pack and a store that already holds one run's `expected`."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.pack = root / "pack"
        for folder in ("000-healthy", SCENARIO):
            shutil.copytree(SMALL_PACK / folder, self.pack / folder)
        primed = self.sredrill("reference", "none")
        assert primed.code in (0, 1), primed.stderr

    def driver_env(self) -> dict[str, str]:
        # The store is named by SREDRILL_DB, not --db: so it is in the driver's environment, as users set it.
        return {"SREDRILL_DB": str(self.db), "PYTHONPATH": str(ORACLES)}

    def sredrill(self, agent: str, level: str, *extra: str) -> Cli:
        args = ["run", "--pack", str(self.pack), "-s", SCENARIO, "--agent", agent, "--isolation", level]
        return self.run(*args, "--agent-dir", str(ORACLES), "--json", *extra, env=self.driver_env(), db=False,
                        timeout=180)  # fmt: skip

    def oracle(self, name: str, form: str, level: str, *extra: str) -> Got:
        spec = oracle_spec(name, form)
        cli = self.sredrill(spec, level, *extra)
        assert cli.code in (0, 1), f"exit {cli.code}: {_reasons(cli)}\n{cli.stderr[-3000:]}"
        report = cli.report()
        result = report["results"][0]
        diagnosis = (result.get("actual") or {}).get("diagnosis")
        assert diagnosis is not None, f"{spec} gave no diagnosis: {result.get('failure_reason')}\n{cli.stderr[-2000:]}"
        return got_of(diagnosis, result["status"], report.get("isolation"))


def _reasons(cli: Cli) -> str:
    """Why each result of a `--json` run failed, or why there is no report: what an errored oracle run says."""
    try:
        return "; ".join(str(r.get("failure_reason")) for r in cli.report()["results"])
    except Exception as exc:  # no report at all: the exit code and stderr are all there is
        return f"no report ({type(exc).__name__})"


def sandbox_or_skip() -> None:
    """Return where bubblewrap works; else skip loudly, or fail under `SREDRILL_REQUIRE_SANDBOX=1`."""
    from sredrill.isolation import sandbox_problem

    problem = sandbox_problem()
    if problem is None:
        return
    if REQUIRED:
        pytest.fail(f"SREDRILL_REQUIRE_SANDBOX=1 but the sandbox cannot be had: {problem}")
    message = f"SANDBOX TESTS SKIPPED: {problem} (set SREDRILL_REQUIRE_SANDBOX=1 to make this a failure)"
    warnings.warn(message, stacklevel=1)
    pytest.skip(message)
