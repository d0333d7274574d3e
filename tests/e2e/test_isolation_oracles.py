"""The oracles, per isolation level: agents that try to *take* the answer, run through `sredrill run` (issue 17).

Each oracle in `tests/fixtures/oracles/` tries one way (a heap walk, the parent's and its own argv and
environment, `load_pack()` of the run's pack, a filesystem search, every `/proc/*`, every loopback port) and
reports what it got in its diagnosis (`found: …` / `found nothing`, and a JSON report per channel). The run uses
a copy of a small pack in the project folder and a store primed by one earlier run, so there is answer material
on disk, in the store, in the driver's argv (`--pack PATH`) and environment (`SREDRILL_DB`), and (a stand-in for
any server that answers without a token) on a loopback port.

The table this file asserts, and docs/isolation.md shows:

- sandbox: every oracle gets nothing;
- process: the heap walk and the agent's own argv and environment get nothing; the disk, `/proc` and the
  loopback are not closed (the oracles get the answer there), and the report says so;
- none: the same as process, plus the agent's own environment (it inherits `SREDRILL_DB`);
- sandbox with `--agent-network host`: the loopback is open (the stand-in gives the answer), the rest stays closed.

Sandbox tests skip, loudly, where bubblewrap does not work, unless `SREDRILL_REQUIRE_SANDBOX=1` (`.ci/run`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest

from tests.e2e.oracle_support import ORACLES, SCENARIO, TRUTH, OracleProject, leaky_store
from tests.e2e.oracle_support import sandbox_or_skip as _sandbox_or_skip
from tests.server.launch import launched


@pytest.fixture(scope="module")
def leaky_port() -> Iterator[int]:
    with leaky_store() as port:
        yield port


@pytest.fixture(scope="module")
def oracle_project(tmp_path_factory: pytest.TempPathFactory) -> OracleProject:
    return OracleProject(tmp_path_factory.mktemp("oracles"))


# The forms each oracle runs in: a py: agent shares a process tree with the driver's worker pool, a cmd: agent
# is the driver's child. The filesystem walk is slow (seconds) and does not depend on the form: cmd: only.
CASES = [
    ("heap", "py"), ("heap", "cmd"), ("parent", "py"), ("parent", "cmd"), ("load_pack", "py"),
    ("load_pack", "cmd"), ("fs", "cmd"), ("proc", "py"), ("proc", "cmd"), ("loopback", "py"), ("loopback", "cmd"),
]  # fmt: skip
IDS = [f"{name}-{form}" for name, form in CASES]


@pytest.mark.parametrize(("name", "form"), CASES, ids=IDS)
def test_under_sandbox_every_oracle_gets_nothing(
    oracle_project: OracleProject, leaky_port: int, name: str, form: str
) -> None:
    _sandbox_or_skip()
    got = oracle_project.oracle(name, form, "sandbox")
    assert got.isolation == "sandbox"
    assert got.root_cause == "found nothing", got
    assert got.found == {}, got
    assert got.status == "failed"


@pytest.mark.parametrize(("name", "form"), CASES, ids=IDS)
def test_under_process_the_heap_and_own_argv_env_give_nothing_and_disk_proc_loopback_still_do(
    oracle_project: OracleProject, leaky_port: int, name: str, form: str
) -> None:
    got = oracle_project.oracle(name, form, "process")
    assert got.isolation == "process"
    if name == "heap":
        assert not got.answer and got.found == {}, got
    elif name == "parent":
        assert "own argv" not in got.found and "own environment" not in got.found, got
        assert {"parent argv", "parent environment"} <= got.channels(), got
    else:
        assert got.answer, got
    if name == "loopback":
        assert any(f"127.0.0.1:{leaky_port}" in m for m in got.found["loopback"]), got


@pytest.mark.parametrize(("name", "form"), CASES, ids=IDS)
def test_under_none_the_oracles_get_what_process_leaves_plus_their_own_environment(
    oracle_project: OracleProject, leaky_port: int, name: str, form: str
) -> None:
    got = oracle_project.oracle(name, form, "none")
    assert got.isolation == "none"
    if name == "heap":
        # py: agents run in agent workers at every level (the hardening issue): no scenario is in their heap.
        assert got.found == {}, got
    elif name == "parent":
        assert {"parent argv", "parent environment", "own environment"} <= got.channels(), got
    else:
        assert got.answer, got


def test_the_process_level_scoreboard_says_disk_and_proc_reads_are_not_prevented(
    oracle_project: OracleProject,
) -> None:
    env = oracle_project.driver_env()
    args = ["run", "--pack", str(oracle_project.pack), "-s", SCENARIO, "--agent", "py:oracle_heap:agent"]
    cli = oracle_project.run(*args, "--isolation", "process", env=env, db=False)
    assert cli.code in (0, 1), cli.stderr
    header = "\n".join(cli.stdout.splitlines()[:8])
    assert "isolation: process" in header, cli.stdout
    assert "disk and /proc reads are not prevented" in cli.stdout, cli.stdout


def test_an_oracle_that_got_the_answer_uses_it(oracle_project: OracleProject) -> None:
    """The oracles are not weak: where they get the key, they answer with it (the right category and mode)."""
    cli = oracle_project.sredrill("py:oracle_load_pack:agent", "none")
    actual = cli.report()["results"][0]["actual"]
    assert actual["root_cause"].startswith("found: load_pack:"), actual
    assert actual["failure_modes"] == [TRUTH]
    assert actual["category"] == "resource_exhaustion"


def test_sredrill_serve_on_the_loopback_gives_the_loopback_oracle_nothing_without_its_token(
    oracle_project: OracleProject,
) -> None:
    """The runs API, the UI and the tool routes of `sredrill serve`, over the very store and pack of the run, answer
    nothing to an agent that has no token (process level: the agent reaches the machine's loopback)."""
    serve = [sys.executable, "-m", "sredrill", "serve", "--port", "0", "--pack", str(oracle_project.pack)]
    serve += ["--db", str(oracle_project.db)]
    with launched(serve, env=oracle_project.env(), cwd=str(oracle_project.root)) as server:
        port = server.url.rsplit(":", 1)[1].strip("/")
        got = oracle_project.oracle("loopback", "cmd", "process")
    assert any(f"127.0.0.1:{port}" in clue for clue in got.clues), got.clues
    assert not any(f"127.0.0.1:{port}" in m for items in got.found.values() for m in items), got


@pytest.mark.parametrize("form", ["py", "cmd"])
def test_under_sandbox_with_the_host_network_only_the_loopback_is_open_to_the_agent(
    oracle_project: OracleProject, leaky_port: int, form: str
) -> None:
    """`--agent-network host` (an agent calling a remote LLM): the machine's loopback is reachable, so a server
    there that answers without a token gives the answer away; the disk, /proc and the key stay closed."""
    _sandbox_or_skip()
    spec = "py:oracle_loopback:agent" if form == "py" else f"cmd:{sys.executable} {ORACLES / 'oracle_loopback.py'}"
    cli = oracle_project.sredrill(spec, "sandbox", "--agent-network", "host")
    assert cli.code in (0, 1), cli.stderr[-3000:]
    report = cli.report()
    assert report["isolation"] == "sandbox+host-network"
    found = json.loads(report["results"][0]["actual"]["diagnosis"]["report"])["found"]
    assert any(f"127.0.0.1:{leaky_port}" in m for m in found.get("loopback", [])), found
    for name in ("proc", "load_pack", "parent"):
        got = oracle_project.oracle(name, form, "sandbox", "--agent-network", "host")
        assert got.isolation == "sandbox+host-network"
        assert got.found == {}, got
