"""Isolation wired through the engine: the level a run records per agent kind, the environment a real `cmd:`
agent gets, a sandboxed agent reaching its tools, and `--require-isolation` / `auto` without bubblewrap.

Sandbox cases skip, loudly, where bubblewrap does not work, unless `SREDRILL_REQUIRE_SANDBOX=1` (`.ci/run`).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sredrill.engine import RunOptions, Settings, run_packs, run_sync
from sredrill.engine.plan import IsolationRequest
from sredrill.isolation import sandbox_problem
from sredrill.results import RunReport, TestResult

REPO = Path(__file__).resolve().parents[2]
PROBLEM = sandbox_problem()
if PROBLEM is not None and os.environ.get("SREDRILL_REQUIRE_SANDBOX") == "1":
    raise RuntimeError(f"SREDRILL_REQUIRE_SANDBOX=1 but the sandbox does not work here: {PROBLEM}")
needs_sandbox = pytest.mark.skipif(PROBLEM is not None, reason=f"bubblewrap does not work here: {PROBLEM}")
LEVELS = ["none", "process", pytest.param("sandbox", marks=needs_sandbox)]
SCENARIO = ["001-replication-lag"]

# Prints the names of the variables it was given (those the test looks for) on stderr and exits 1: the
# engine puts the end of its stderr in the result's failure reason.
ENV_AGENT = """\
import json, os, sys
sys.stdin.read()
names = ["H2_PASSED", "H2_NOT_PASSED", "SREDRILL_JUDGE_API_KEY", "SREDRILL_RUN_TOKEN", "SREDRILL_TOOLS_URL"]
print("ENV " + json.dumps({n: n in os.environ for n in names}), file=sys.stderr)
sys.exit(1)
"""


class Quiet:
    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: TestResult) -> None: ...
    def on_run_end(self, report: RunReport) -> None: ...


def run(agent: str, isolation: str = "auto", **request: Any) -> RunReport:
    report: RunReport = run_sync(
        run_packs(
            ["rds_postgres"],
            settings=Settings(agent=agent),
            options=RunOptions(),
            listener=Quiet(),
            store=None,
            scenario_ids=SCENARIO,
            isolation=IsolationRequest(isolation=isolation, **request),  # type: ignore[arg-type]
        )
    )
    return report


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("agent", ["cmd:python examples/agents/script_agent.py", "py:examples.agents.echo_agent:agent"])
def test_a_cmd_or_py_agent_records_the_level_in_force_and_plays_as_at_none(
    agent: str, level: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    report = run(agent, level)
    assert report.isolation == level
    # The README's agents still run: the same outcome as at level none (they fail the checks, never error).
    assert [r.status.value for r in report.results] == ["failed"], [r.failure_reason for r in report.results]


def test_builtin_and_remote_agents_record_builtin_and_external(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    assert run("reference", "process").isolation == "builtin"
    # Nothing listens there: the result errors, and the agent ran elsewhere by definition.
    remote = run("http://127.0.0.1:9/agent", "process")
    assert remote.isolation == "external"
    assert [r.status.value for r in remote.results] == ["errored"]


def _seen(report: RunReport) -> dict[str, bool]:
    (result,) = report.results
    reason = result.failure_reason or ""
    line = next((part for part in reason.splitlines() if part.strip().startswith("ENV ")), None)
    assert line is not None, reason
    seen: dict[str, bool] = json.loads(line.strip().removeprefix("ENV "))
    return seen


@pytest.mark.parametrize("level", ["process", pytest.param("sandbox", marks=needs_sandbox)])
def test_the_agent_environment_is_the_allow_list_plus_agent_env(
    level: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "env_agent.py"
    script.write_text(ENV_AGENT)
    monkeypatch.setenv("H2_PASSED", "given with --agent-env")
    monkeypatch.setenv("H2_NOT_PASSED", "not asked for")
    monkeypatch.setenv("SREDRILL_JUDGE_API_KEY", "sk-judge")
    monkeypatch.chdir(tmp_path)
    agent = f"cmd:{shlex.quote(sys.executable)} env_agent.py"
    seen = _seen(run(agent, level, agent_env=("H2_PASSED",), agent_dir=str(tmp_path)))
    assert seen == {
        "H2_PASSED": True,
        "H2_NOT_PASSED": False,
        "SREDRILL_JUDGE_API_KEY": False,
        "SREDRILL_RUN_TOKEN": True,
        "SREDRILL_TOOLS_URL": True,
    }


def test_at_level_none_the_agent_gets_the_whole_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "env_agent.py").write_text(ENV_AGENT)
    monkeypatch.setenv("H2_NOT_PASSED", "not asked for")
    monkeypatch.chdir(tmp_path)
    seen = _seen(run(f"cmd:{shlex.quote(sys.executable)} env_agent.py", "none"))
    assert seen["H2_NOT_PASSED"] is True


@needs_sandbox
def test_a_sandboxed_agent_without_network_reaches_its_tools_at_the_same_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    report = run("cmd:python examples/agents/http_tools_agent.py", "sandbox")
    assert report.isolation == "sandbox"
    (result,) = report.results
    # It called the metrics tools through the forwarded Unix socket: the evidence check found the calls.
    assert "never queried" not in (result.failure_reason or ""), result.failure_reason
    assert result.status.value == "failed", result.failure_reason


def _sredrill(*args: str, path: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path}
    return subprocess.run(
        [sys.executable, "-m", "sredrill", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


def test_require_isolation_sandbox_fails_fast_without_bwrap(tmp_path: Path) -> None:
    done = _sredrill(
        "run", "--pack", "rds_postgres", "--agent", "py:examples.agents.echo_agent:agent",
        "--require-isolation", "sandbox", "--db", str(tmp_path / "s.db"), path=str(tmp_path),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "--require-isolation sandbox" in done.stderr
    assert "bwrap is not installed" in done.stderr
    assert done.stdout == ""
    assert not (tmp_path / "s.db").exists()  # nothing ran, no run was stored


def test_auto_without_bwrap_falls_back_to_process_with_the_warning(tmp_path: Path) -> None:
    done = _sredrill(
        "run", "--pack", "rds_postgres", "--scenario", SCENARIO[0], "--agent", "py:examples.agents.echo_agent:agent",
        "--json", "--db", str(tmp_path / "s.db"), path=str(tmp_path),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # the echo agent fails the scenario
    assert json.loads(done.stdout)["isolation"] == "process"
    assert "sandbox unavailable (bwrap is not installed" in done.stderr
    assert "disk and /proc reads are not prevented" in done.stderr


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--isolation", "chroot"], "--isolation 'chroot'"),
        (["--agent-network", "lan"], "--agent-network 'lan'"),
        (["--agent-env", "A=B"], "--agent-env 'A=B'"),
        (["--agent-dir", "no/such/dir"], "--agent-dir"),
    ],
)
def test_bad_isolation_flags_are_usage_errors(flags: list[str], words: str, tmp_path: Path) -> None:
    done = _sredrill("run", "--pack", "rds_postgres", *flags, path=os.environ.get("PATH", ""), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert words in done.stderr


def test_the_scoreboard_the_html_report_and_the_ui_page_show_the_level(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from sredrill.engine.reporters.console import ConsoleReporter
    from sredrill.engine.reporters.html_pages import run_page

    monkeypatch.chdir(REPO)
    report = run("py:examples.agents.echo_agent:agent", "process")
    out = io.StringIO()
    ConsoleReporter(output=None, stdout=out, stderr=io.StringIO(), color=False).on_run_end(report)
    assert "isolation: process (disk and /proc reads are not prevented)" in out.getvalue()
    page = run_page(report, status="finished")  # the HTML report's page and the UI's run page
    assert "isolation <b id='isolation'>process (disk and /proc reads are not prevented)</b>" in page


def test_the_runs_api_takes_the_isolation_fields() -> None:
    from pydantic import ValidationError

    from sredrill.server.runs_api import RunRequest

    body = RunRequest.model_validate(
        {"isolation": "process", "require_isolation": "process", "agent_env": ["OPENAI_API_KEY"], "agent_dir": "x"}
    )
    assert body.isolation_request() == IsolationRequest(
        isolation="process", require_isolation="process", agent_env=("OPENAI_API_KEY",), agent_dir="x"
    )
    with pytest.raises(ValidationError):
        RunRequest.model_validate({"isolation": "chroot"})
    with pytest.raises(ValidationError):
        RunRequest.model_validate({"agent_env": ["A=B"]})


# The agent says where it runs: its worker role, whether the eval module (which holds the test's expectations)
# is in its heap, and its PID namespace's view (pid 1 is bubblewrap in a sandbox).
WHERE_AGENT = """\
import json, os, sys


async def agent(task):
    return json.dumps({
        "role": os.environ.get("SREDRILL_WORKER"),
        "eval_in_heap": any(hasattr(m, "EXPECTED_ROOT_CAUSE") for m in list(sys.modules.values())),
        "secret": "WHERE_SECRET" in os.environ,
        "pid": os.getpid(),
    })
"""
WHERE_EVAL = """\
import json, os

from sredrill import expect, test

EXPECTED_ROOT_CAUSE = "disk full on the primary"  # what the agent must not find in its heap


@test("the agent reports where it runs")
async def where(agent):
    result = await agent.run("where are you?")
    seen = json.loads(result.output)
    seen["body_pid"] = os.getpid()
    print("WHERE " + json.dumps(seen))
    expect(seen["role"]).to_equal(os.environ.get("WHERE_WANT_ROLE"))
"""


@pytest.mark.parametrize("level", LEVELS)
def test_a_test_run_runs_its_py_agent_in_an_agent_worker_of_its_own_at_process_and_sandbox(
    level: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A body worker holds the eval files (expectations, scenarios, keys): the `py:` agent runs in an agent worker
    under the run's policy, except at level none, where it runs inline in the body worker."""
    from sredrill.engine import run_eval_files

    evals = tmp_path / "evals"
    evals.mkdir()
    (evals / "where_eval.py").write_text(WHERE_EVAL)
    (tmp_path / "where_agent.py").write_text(WHERE_AGENT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WHERE_SECRET", "1")
    monkeypatch.setenv("WHERE_WANT_ROLE", "body" if level == "none" else "agent")
    report: RunReport = run_sync(
        run_eval_files(
            [str(evals)],
            settings=Settings(agent="py:where_agent:agent", skip_judge=True),
            options=RunOptions(),
            listener=Quiet(),
            store=None,
            isolation=IsolationRequest(isolation=level),  # type: ignore[arg-type]
        )
    )
    assert report.isolation == level
    [result] = report.results
    assert result.status == "passed", (result.failure_reason, result.stdout, result.stderr)
    seen = json.loads((result.stdout or "").split("WHERE ", 1)[1])
    if level == "none":
        assert seen["role"] == "body" and seen["eval_in_heap"] and seen["pid"] == seen["body_pid"], seen
    else:
        assert seen["role"] == "agent" and not seen["eval_in_heap"] and seen["pid"] != seen["body_pid"], seen
        assert seen["secret"] is False, seen  # the allow-list: the body worker's environment is not the agent's
    if level == "sandbox":
        assert seen["pid"] < 10, seen  # its own PID namespace


@needs_sandbox
def test_a_cmd_agent_script_outside_the_launch_directory_runs_sandboxed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "env_agent.py").write_text(ENV_AGENT)
    monkeypatch.chdir(REPO)
    seen = _seen(run(f"cmd:{shlex.quote(sys.executable)} {elsewhere / 'env_agent.py'}", "sandbox"))
    assert seen["SREDRILL_RUN_TOKEN"] is True  # it started (its folder is its code directory) and answered
