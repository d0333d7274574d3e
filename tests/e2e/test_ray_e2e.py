"""`--executor ray[:HOST:PORT]`: a run's attempts played by Ray actors grade as the local executor does.

The cluster is real: `ray start --head` with one CPU, and a second node joined to it with one more (two nodes on
one machine, as docs/scale.md shows), with token authentication. Two actors of one CPU each need both nodes.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sredrill.engine import RunOptions
from sredrill.engine.api import run_packs
from sredrill.engine.config import Settings
from sredrill.store import Store

from .conftest import Project

# Ray reads these when it is imported: as `sredrill run` sets the first before it imports Ray (this suite runs
# under `uv run`), and the cluster's token, so that the engine in this process joins it too.
TOKEN = secrets.token_hex(16)
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
os.environ.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=TOKEN)
pytest.importorskip("ray")

RAY = str(Path(sys.executable).parent / "ray")
REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[str, dict[str, str]]]:
    """A two-node Ray cluster on this machine: its address, and the environment that joins it (the token)."""
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN}
    env.pop("RAY_ADDRESS", None)
    port = _free_port()
    temp = tempfile.mkdtemp(prefix="ray")  # short: Ray's socket paths live under it
    common = ["--num-cpus", "1", "--disable-usage-stats"]
    head = [RAY, "start", "--head", "--port", str(port), "--include-dashboard=false", f"--temp-dir={temp}", *common]
    # Never a pipe for its output: the daemons `ray start` leaves behind keep writing to it after it returns.
    quiet: dict[str, Any] = {"env": env, "check": True, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    try:
        subprocess.run(head, timeout=120, **quiet)
        subprocess.run([RAY, "start", "--address", f"127.0.0.1:{port}", *common], timeout=120, **quiet)
        yield f"127.0.0.1:{port}", {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": env["RAY_AUTH_TOKEN"]}
    finally:
        subprocess.run(
            [RAY, "stop", "--force"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120
        )
        shutil.rmtree(temp, ignore_errors=True)


def _report(project: Project, *args: str, db: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    cli = project.run("run", *args, "--json", "--db", db, db=False, timeout=600, env=env)
    assert cli.code in (0, 1), cli.stderr
    return cli.report()


def _graded(report: dict[str, Any]) -> dict[str, tuple[str, float | None, list[Any]]]:
    return {
        r["id"]: (r["status"], r["score"], [(s["name"], s["passed"]) for s in r["signals"]]) for r in report["results"]
    }


@pytest.mark.parametrize(
    "selection",
    [("--pack", "rds_postgres", "--axis2"), ("--generate", "rds:seed=5:count=4"), ("--pack", "k8s")],
    ids=["fixed-pack-both-axes", "generated", "kubernetes"],
)
def test_a_run_on_two_ray_nodes_grades_as_the_local_run(
    project: Project, cluster: tuple[str, dict[str, str]], selection: tuple[str, ...]
) -> None:
    address, env = cluster
    local = _report(project, *selection, db="local.db")
    on_ray = _report(project, *selection, "--executor", f"ray:{address}", "--jobs", "2", db="ray.db", env=env)
    assert _graded(on_ray) == _graded(local) and len(local["results"]) >= 4
    assert on_ray["summary"] == local["summary"]
    with Store(project.root / "ray.db") as store:
        run = store.get_run(on_ray["run_id"])
        assert run is not None and run.config["executor"] == f"ray:{address}" and run.config["workers"] == 0
        steps = store.trajectory(on_ray["run_id"], on_ray["results"][0]["id"])
        assert steps is not None and any(s["kind"] == "tool_call" for s in steps)


def test_the_header_names_one_actor_per_cpu_of_the_cluster(
    project: Project, cluster: tuple[str, dict[str, str]]
) -> None:
    address, env = cluster
    cli = project.run("run", "--pack", "rds_postgres", "--scenario", "003-storage-full", "--executor", f"ray:{address}",
                      env=env)  # fmt: skip
    assert cli.code == 0, cli.stderr
    assert "· 2 Ray actors" in cli.stdout + cli.stderr


def test_the_engine_in_process_on_ray_gives_the_local_results(cluster: tuple[str, dict[str, str]]) -> None:
    address, _ = cluster

    async def play(executor: str | None) -> dict[str, tuple[str, float | None]]:
        report = await run_packs(
            ["rds_postgres"], settings=Settings(agent="reference"), options=RunOptions(jobs=2),
            listener=_Quiet(), store=None, axis2=True, executor=executor,
        )  # fmt: skip
        return {r.id: (r.status.value, r.score) for r in report.results}

    assert asyncio.run(play(f"ray:{address}")) == asyncio.run(play(None))
    import ray

    assert not ray.is_initialized()  # the run joined the cluster, and let it go when it ended


class _Quiet:
    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: Any) -> None: ...
    def on_run_end(self, report: Any) -> None: ...


EVALS = """
import time
from sredrill import test, expect


@test("passes")
async def passes(agent):
    expect(1 + 1).to_equal(2)


@test("fails")
async def fails(agent):
    expect(1 + 1).to_equal(3)


@test("blocks", timeout=2)
async def blocks(agent):
    time.sleep(60)  # blocking: only killing its actor stops it


@test("passes after")
async def passes_after(agent):
    print("still here")
"""


def test_eval_files_on_ray_and_a_blocked_test_gets_its_actor_killed(
    project: Project, cluster: tuple[str, dict[str, str]]
) -> None:
    address, env = cluster
    (project.root / "evals").mkdir()
    (project.root / "evals" / "ray_eval.py").write_text(EVALS)
    cli = project.run("test", "evals", "--agent", "py:examples.agents.echo_agent:agent", "--jobs", "1",
                      "--executor", f"ray:{address}", "--json", env={**env, "PYTHONPATH": str(REPO)},
                      timeout=300)  # fmt: skip
    assert cli.code == 3, cli.stderr  # a test errored
    statuses = {r["name"]: r["status"] for r in cli.report()["results"]}
    assert statuses == {"passes": "passed", "fails": "failed", "blocks": "errored", "passes after": "passed"}
    blocked = next(r for r in cli.report()["results"] if r["name"] == "blocks")
    assert "timed out after 2s" in blocked["failure_reason"] and blocked["error_type"] == "timeout"
    after = next(r for r in cli.report()["results"] if r["name"] == "passes after")
    assert after["stdout"] == "still here\n"  # captured on the actor's node


def test_shards_on_two_executors_merge_into_the_unsharded_run(
    project: Project, cluster: tuple[str, dict[str, str]]
) -> None:
    address, env = cluster
    whole = _report(project, "--pack", "rds_postgres", db="whole.db")
    _report(project, "--pack", "rds_postgres", "--shard", "1/2", db="s1.db")
    _report(project, "--pack", "rds_postgres", "--shard", "2/2", "--executor", f"ray:{address}", db="s2.db", env=env)
    merged = project.run("runs", "merge", "s1.db", "s2.db", "--into", "all.db", db=False)
    assert merged.code == 0, merged.stderr
    with Store(project.root / "all.db") as store:
        results = store.results(store.resolve_run("latest"))
    assert {r.id: r.status.value for r in results} == {r["id"]: r["status"] for r in whole["results"]}


@pytest.mark.parametrize(("args", "said"), [
    (("--executor", "rya"), "must be 'local', 'ray' or 'ray:HOST:PORT'"),
    (("--executor", "ray:127.0.0.1:notaport"), "must be 'local', 'ray' or 'ray:HOST:PORT'"),
    (("--workers", "3"), "3 workers need 3 CPUs (one Ray actor each); the Ray cluster at"),
    (("--workers", "-1"), "--workers must be a whole number ≥ 0"),
])  # fmt: skip
def test_a_bad_executor_or_workers_is_a_usage_error(
    project: Project, cluster: tuple[str, dict[str, str]], args: tuple[str, ...], said: str
) -> None:
    address, env = cluster
    cli = project.run("run", "--pack", "rds_postgres", "--executor", f"ray:{address}", *args, env=env)
    assert cli.code == 2, cli.stdout + cli.stderr
    assert said in cli.stderr and "Traceback" not in cli.stderr, cli.stderr


def test_an_address_nothing_answers_at_is_a_usage_error_at_once(project: Project) -> None:
    cli = project.run("run", "--pack", "rds_postgres", "--executor", f"ray:127.0.0.1:{_free_port()}")
    assert cli.code == 2, cli.stdout + cli.stderr
    assert "no Ray cluster answers at 127.0.0.1:" in cli.stderr and "ray start --head" in cli.stderr


def test_a_cluster_that_refuses_the_driver_is_a_usage_error_that_says_why(
    project: Project, cluster: tuple[str, dict[str, str]]
) -> None:
    address, _ = cluster
    cli = project.run(
        "run", "--pack", "rds_postgres", "--executor", f"ray:{address}", env={"RAY_AUTH_TOKEN": "0" * 32}, timeout=300
    )  # fmt: skip  (no token: the cluster refuses it)
    assert cli.code == 2, cli.stdout + cli.stderr
    assert f"could not join the Ray cluster at {address}" in cli.stderr and "RAY_AUTH_MODE=token" in cli.stderr
