"""The oracles, per isolation level, through the runs API (issue 17): `sredrill serve` over the oracle project's
pack, `POST /api/runs` of a pack run with `isolation` sandbox or process and the combined oracle as its agent,
and the result read back through the API (`GET /api/runs/{id}`).

The project is the one of tests/e2e/test_isolation_oracles.py: a copy of a small pack (the server's `--pack`, so
in the server's argv), a store primed by an earlier run (named by `SREDRILL_DB` in the server's environment), and
a loopback server that answers without a token. The server itself is the driver: it holds the answer keys, and
its agents are its children. One run per level and form of `oracle_all` (the `py:` form leaves out the
filesystem walk, as the per-oracle cases do: the server builds both forms' sandboxes alike). The table asserted is
the one of `sredrill run`:

- sandbox: every oracle gets nothing;
- process: the heap walk and the agent's own argv and environment get nothing; the server's argv and
  environment, `load_pack()`, the disk, `/proc` and the loopback (the stand-in; the server answers nothing
  without its token) do.

The run's report records its isolation. Sandbox tests skip, loudly, where bubblewrap does not work, unless
`SREDRILL_REQUIRE_SANDBOX=1` (`.ci/run`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.oracle_support import (
    ORACLES,
    SCENARIO,
    Got,
    OracleProject,
    all_spec,
    gots_of,
    leaky_store,
    oracles_of,
    sandbox_or_skip,
)
from tests.server.launch import Launched, launched


@pytest.fixture(scope="module")
def leaky_port() -> Iterator[int]:
    with leaky_store() as port:
        yield port


@pytest.fixture(scope="module")
def oracle_project(tmp_path_factory: pytest.TempPathFactory) -> OracleProject:
    return OracleProject(tmp_path_factory.mktemp("oracles-api"))


@pytest.fixture(scope="module")
def server(oracle_project: OracleProject) -> Iterator[Launched]:
    """`sredrill serve` over the pack copy, allowed to run the combined oracle in both forms."""
    cmd = [sys.executable, "-m", "sredrill", "serve", "--port", "0", "--pack", str(oracle_project.pack)]
    cmd += ["--allow-agent", "py:oracle_all:*", "--allow-agent", f"cmd:{sys.executable} {ORACLES}/*"]
    env = oracle_project.env(oracle_project.driver_env())
    with launched(cmd, env=env, cwd=str(oracle_project.root)) as running:
        yield running


def _finish(server: Launched, run_id: str) -> str:
    """Follow a run's events to its end; its final status."""
    url = f"{server.url}/api/runs/{run_id}/events"
    with httpx.stream("GET", url, headers=server.auth(), timeout=180) as events:
        assert events.status_code == 200, events.read()
        for line in events.iter_lines():
            if line.startswith("data: ") and '"run_finished"' in line:
                return str(json.loads(line.removeprefix("data: "))["status"])
    raise AssertionError(f"run {run_id}: the event stream ended without run_finished")


def _oracles(server: Launched, form: str, level: str) -> tuple[dict[str, Got], dict[str, Any]]:
    """Run the combined oracle through the runs API; what each oracle got, and the stored report."""
    fs = form == "cmd"
    body = {"scenarios": [SCENARIO], "agent": all_spec(form, fs=fs), "isolation": level, "agent_dir": str(ORACLES)}
    started = httpx.post(f"{server.url}/api/runs", json=body, headers=server.auth(), timeout=60)
    assert started.status_code == 201, started.text
    run_id = started.json()["run_id"]
    assert _finish(server, run_id) == "finished"
    stored = httpx.get(f"{server.url}/api/runs/{run_id}", headers=server.auth(), timeout=60)
    assert stored.status_code == 200, stored.text
    report = stored.json()["report"]
    (result,) = report["results"]
    diagnosis = (result.get("actual") or {}).get("diagnosis")
    assert diagnosis is not None, f"{body['agent']} gave no diagnosis: {result.get('failure_reason')}"
    gots = gots_of(diagnosis, result["status"], report.get("isolation"))
    assert sorted(gots) == sorted(oracles_of(fs=fs)), gots
    for name, got in gots.items():
        what = ", ".join(sorted(got.channels())) or ("nothing" if not got.found else f"other: {sorted(got.found)}")
        print(f"runs API | {level:8} | {name:9} | {form:3} | {what}")
    return gots, report


FORMS = ["py", "cmd"]


@pytest.mark.parametrize("form", FORMS)
def test_under_sandbox_every_oracle_gets_nothing(server: Launched, leaky_port: int, form: str) -> None:
    sandbox_or_skip()
    gots, report = _oracles(server, form, "sandbox")
    assert report["isolation"] == "sandbox"
    for name, got in gots.items():
        assert got.root_cause == "found nothing", (name, got)
        assert got.found == {}, (name, got)
    assert report["results"][0]["status"] == "failed"


@pytest.mark.parametrize("form", FORMS)
def test_under_process_the_heap_and_own_argv_env_give_nothing_and_disk_proc_loopback_still_do(
    server: Launched, leaky_port: int, form: str
) -> None:
    gots, report = _oracles(server, form, "process")
    assert report["isolation"] == "process"
    assert gots["heap"].found == {}, gots["heap"]
    parent = gots["parent"]
    assert "own argv" not in parent.found and "own environment" not in parent.found, parent
    # The server is the agent's parent: `--pack PATH` in its argv, `SREDRILL_DB` in its environment.
    assert {"parent argv", "parent environment"} <= parent.channels(), parent
    for name in ("load_pack", "proc", "loopback", *(("fs",) if form == "cmd" else ())):
        assert gots[name].answer, (name, gots[name])
    loopback = gots["loopback"]
    assert any(f"127.0.0.1:{leaky_port}" in m for m in loopback.found["loopback"]), loopback
    # The runs API on the same loopback, over the same store and pack, answers nothing without its token.
    port = server.url.rsplit(":", 1)[1].strip("/")
    assert any(f"127.0.0.1:{port}" in clue for clue in loopback.clues), loopback.clues
    assert not any(f"127.0.0.1:{port}" in m for items in loopback.found.values() for m in items), loopback
