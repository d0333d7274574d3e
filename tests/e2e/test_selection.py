"""Selection works everywhere (issue 11, point 4), through the real CLI in a subprocess: `--scenario` and
`--difficulty` over RCA scenarios and incident episodes, nothing selected exits 5, `-x`/`--maxfail`,
`--last-failed`, `-v`, no agent for `sredrill test`, bad option values, and `make run` failing on 5.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from sredrill.engine.incident_suite import incident_tests
from sredrill.scenarios import builtin_pack_names, load_pack

from .conftest import Cli, Project

REPO = Path(__file__).resolve().parents[2]
# The example `py:` agent (answers at once, no tools), importable from the repository.
AGENT = ("--agent", "py:examples.agents.echo_agent:agent")
ENV = {"PYTHONPATH": str(REPO)}

EVAL = """
from sredrill import expect, test

@test("passes", labels=["fast"], prompt="p")
async def _(agent):
    expect((await agent.run()).output).to_contain("echo agent")

@test("fails", prompt="p")
async def _(agent):
    expect(1).to_be(2)

@test("errors", prompt="p")
async def _(agent):
    raise RuntimeError("boom")

@test("passes too", prompt="p")
async def _(agent):
    expect(1).to_be(1)
"""


def ids(cli: Cli) -> list[str]:
    return [r["id"] for r in cli.report()["results"]]


def test(project: Project, *args: str) -> Cli:
    return project.run("test", *args, *AGENT, env=ENV)


test.__test__ = False  # a helper, not a pytest test


def nothing_ran(project: Project, cli: Cli) -> None:
    assert cli.code == 5, cli.stderr
    assert cli.stderr.startswith("no tests selected: ") and ", nothing ran" in cli.stderr
    assert "Traceback" not in cli.stderr and cli.stdout == ""
    assert "no run is stored yet" in project.run("runs", "show", "latest").stderr  # no empty run stored


# -- sredrill run: --scenario and --difficulty over both kinds ------------------------------------------


def test_an_incident_task_is_a_scenario_id_and_an_rca_id_runs_no_incident(project: Project) -> None:
    cli = project.run("run", "--scenario", "easy_cpu_spike", "--json")
    assert cli.code == 0, cli.stderr
    assert ids(cli) == [f"incidents/easy_cpu_spike#seed{n}" for n in range(5)]
    # The header says what ran: no evidence backend for episodes, and not the RCA pack that did not run.
    assert json.loads(cli.stdout)["mode"] is None
    assert "sredrill run · incidents · reference · 5/5 results" in project.run("run", "-s", "easy_cpu_spike").stderr

    cli = project.run("run", "--scenario", "001-replication-lag", "--json")
    assert cli.code == 0, cli.stderr
    assert ids(cli) == ["rds_postgres/001-replication-lag#1"]  # was 31 tests: every incident episode too
    assert json.loads(cli.stdout)["mode"] == "full"
    assert "sredrill run · rds_postgres · reference · full ·" in project.run("run", "-s", "001-replication-lag").stderr

    cli = project.run(
        "run", "--scenario", "incidents/medium_cascade#seed3", "--scenario", "rds_postgres/000-healthy", "--json"
    )
    assert cli.code == 0, cli.stderr
    assert sorted(ids(cli)) == ["incidents/medium_cascade#seed3", "rds_postgres/000-healthy#1"]


def test_an_unknown_scenario_id_is_a_usage_error_with_a_did_you_mean_over_both_kinds(project: Project) -> None:
    for sid, guess in (("easy_cpu_spke", "easy_cpu_spike"), ("001-replication-lga", "001-replication-lag")):
        cli = project.run("run", "--scenario", sid)
        assert cli.code == 2, cli.stderr
        assert cli.stderr.startswith("error: ") and f"did you mean '{guess}'?" in cli.stderr
        assert "Traceback" not in cli.stderr
    cli = project.run("run", "--pack", "rds_postgres", "--scenario", "easy_cpu_spike")
    assert cli.code == 2 and "add --pack incidents" in cli.stderr


def test_difficulty_filters_rca_scenarios_and_incident_tasks_each_on_its_own_scale(project: Project) -> None:
    key = "the-selection-tests-episode-key"  # the run's family episodes, hence their difficulties, are keyed
    cli = project.run("run", "--difficulty", "3", "--json", "--episode-key-file", str(project.write("k", key)))
    assert cli.code in (0, 1), cli.stderr
    results = cli.report()["results"]
    rca = sorted(r["id"] for r in results if r["kind"] == "rca")
    assert rca == sorted(
        f"{name}/{s.id}#1" for name in builtin_pack_names() for s in load_pack(name).scenarios if s.difficulty == 3
    )
    assert {r.split("/")[0] for r in rca} == set(builtin_pack_names())  # each RCA pack's own level 3
    incidents = {r["id"] for r in results if r["kind"] == "incident"}
    # hard_mixed (the one hard classic task) and the family episodes whose seed drew a hard task
    assert incidents == {t.id for t in incident_tests(difficulties=(3,), episode_key=key)}
    assert {i.split("/")[1].split("#")[0] for i in incidents} >= {"hard_mixed"}
    assert {r["difficulty"] for r in results} == {3}


def test_a_difficulty_no_scenario_has_selects_nothing_and_exits_5(project: Project) -> None:
    cli = project.run("run", "--pack", "incidents", "--difficulty", "4")
    nothing_ran(project, cli)
    assert "--difficulty 4" in cli.stderr


# -- sredrill test: nothing selected, no agent ------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (("ok_eval.py", "--grep", "nomatch"), "matches --grep 'nomatch'"),
        (("ok_eval.py", "--label", "none-has-it"), "matches --label 'none-has-it'"),
        (("empty",), "no eval files in empty"),
        (("notests_eval.py",), "register(s) no tests"),
    ],
    ids=["grep", "label", "empty-folder", "no-tests"],
)
def test_selecting_no_test_exits_5(project: Project, args: tuple[str, ...], reason: str) -> None:
    project.write("ok_eval.py", EVAL)
    project.write("notests_eval.py", "x = 1\n")
    (project.root / "empty").mkdir()
    cli = test(project, *args)
    nothing_ran(project, cli)
    assert reason in cli.stderr


def test_sredrill_test_without_an_agent_is_a_usage_error_and_list_needs_none(project: Project) -> None:
    project.write("ok_eval.py", EVAL)
    cli = project.run("test", "ok_eval.py")
    assert cli.code == 2 and "no agent: pass --agent SPEC (or set agent in [tool.sredrill])" in cli.stderr
    listed = project.run("list", "ok_eval.py", db=False)
    assert listed.code == 0, listed.stderr
    assert len(listed.stdout.splitlines()) == 4
    assert project.run("test", "ok_eval.py", env={**ENV, "SREDRILL_AGENT": AGENT[1]}).code == 3  # env is enough


# -- -x / --maxfail, --last-failed --------------------------------------------------------------------------


def test_exitfirst_and_maxfail_on_sredrill_test(project: Project) -> None:
    project.write("ok_eval.py", EVAL)
    cli = test(project, "ok_eval.py", "-x", "--json")
    assert cli.code == 1, cli.stderr  # by the results that ran: one failed
    assert [r["name"] for r in cli.report()["results"]] == ["passes", "fails"]
    assert "stopped after 1 failure (--maxfail 1): 2 test(s) not run" in cli.stderr

    cli = test(project, "ok_eval.py", "--maxfail", "2", "--json")
    assert cli.code == 3, cli.stderr  # one errored: 3 wins
    assert [r["name"] for r in cli.report()["results"]] == ["passes", "fails", "errors"]
    assert "stopped after 2 failures (--maxfail 2): 1 test(s) not run" in cli.stderr

    cli = test(project, "ok_eval.py", "--maxfail", "5", "--json")
    assert len(cli.report()["results"]) == 4 and "stopped after" not in cli.stderr


def test_last_failed_on_sredrill_test(project: Project) -> None:
    project.write("ok_eval.py", EVAL)
    cli = test(project, "ok_eval.py", "--last-failed", "--json")
    assert cli.code == 3 and len(ids(cli)) == 4  # no earlier run: everything
    assert "last-failed: no earlier run" in cli.stderr

    cli = test(project, "ok_eval.py", "--lf", "--json")
    assert cli.code == 3, cli.stderr
    assert sorted(r["name"] for r in cli.report()["results"]) == ["errors", "fails"]
    assert "re-running the 2 test(s) that failed or errored in run" in cli.stderr

    # The failing tests are fixed: --lf reruns them; then nothing failed, so --lf runs everything.
    project.write(
        "ok_eval.py", EVAL.replace("expect(1).to_be(2)", "pass").replace('raise RuntimeError("boom")', "pass")
    )
    assert test(project, "ok_eval.py", "--lf").code == 0
    cli = test(project, "ok_eval.py", "--lf", "--json")
    assert cli.code == 0 and len(ids(cli)) == 4
    assert "had no failures; running every selected test" in cli.stderr


def test_last_failed_whose_failures_no_longer_exist_selects_nothing(project: Project) -> None:
    project.write("ok_eval.py", EVAL)
    assert test(project, "ok_eval.py").code == 3
    project.write("ok_eval.py", EVAL.replace('"fails"', '"fails renamed"').replace('"errors"', '"errors renamed"'))
    cli = test(project, "ok_eval.py", "--lf")
    assert cli.code == 5, cli.stderr
    assert "none of the 2 test(s) that failed or errored in run" in cli.stderr and "nothing ran" in cli.stderr


def test_maxfail_then_last_failed_on_sredrill_run(project: Project) -> None:
    # The keyword baseline fails most scenarios: -x stops at its first failure, --lf reruns exactly that one.
    cli = project.run("run", "--agent", "keyword", "-x", "--json")
    assert cli.code == 1, cli.stderr
    report = cli.report()
    failed = [r["id"] for r in report["results"] if r["status"] != "passed"]
    assert len(failed) == 1
    # every built-in RCA pack's scenarios, and the classic and family episodes
    total = sum(len(load_pack(name).scenarios) for name in builtin_pack_names()) + len(incident_tests())
    assert f"stopped after 1 failure (--maxfail 1): {total - len(report['results'])} test(s) not run" in cli.stderr

    again = project.run("run", "--agent", "keyword", "--lf", "--json")
    assert again.code == 1, again.stderr
    assert ids(again) == failed
    # Another agent has no earlier run of its own: --lf runs everything it selects.
    other = project.run("run", "--agent", "majority", "--lf", "--scenario", "000-healthy", "--json")
    assert other.code in (0, 1), other.stderr
    assert ids(other) == ["rds_postgres/000-healthy#1"] and "no earlier run of this command and agent" in other.stderr
    assert project.run("run", "--lf", "--resume", report["run_id"]).code == 2


def test_verbose_is_accepted_by_both_commands(project: Project) -> None:
    project.write("ok_eval.py", EVAL)
    assert test(project, "ok_eval.py", "-v", "--grep", "passes").code == 0
    assert project.run("run", "-v", "--scenario", "000-healthy").code == 0


# -- option values ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("--timeout", "-1"), "--timeout must be a positive, finite number of seconds, got -1.0"),
        (("--timeout", "0"), "got 0.0"),
        (("--timeout", "nan"), "got nan"),
        (("--timeout", "inf"), "got inf"),
        (("--jobs", "0"), "--jobs must be at least 1, got 0"),
        (("--jobs", "-1"), "--jobs must be at least 1, got -1"),
        (("--repeat", "0"), "--repeat must be a whole number ≥ 1, got 0"),
        (("--retries", "-1"), "--retries must be a whole number ≥ 0, got -1"),
        (("--maxfail", "0"), "--maxfail must be a whole number ≥ 1, got 0"),
        (("-x", "--maxfail", "3"), "-x is --maxfail 1"),
    ],
)
@pytest.mark.parametrize("command", ["run", "test"])
def test_bad_option_values_are_usage_errors_naming_the_value(
    project: Project, command: str, args: tuple[str, ...], named: str
) -> None:
    project.write("ok_eval.py", EVAL)
    target = ("ok_eval.py", *AGENT) if command == "test" else ("--scenario", "000-healthy")
    cli = project.run(command, *target, *args, env=ENV)
    assert cli.code == 2, cli.stdout + cli.stderr
    assert cli.stderr.startswith("error: ") and named in cli.stderr and "Traceback" not in cli.stderr


def test_a_bad_timeout_in_the_environment_names_the_variable(project: Project) -> None:
    cli = project.run("run", "--scenario", "000-healthy", env={"SREDRILL_TIMEOUT": "nan"})
    assert cli.code == 2 and "$SREDRILL_TIMEOUT must be a positive, finite number of seconds" in cli.stderr


# -- make run --------------------------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize(("code", "fails"), [(0, False), (1, False), (2, True), (3, True), (5, True)])
def test_make_run_fails_when_nothing_was_selected(tmp_path: Path, code: int, fails: bool) -> None:
    # The recipe of `make run` with the real Makefile; only the command it runs is a stand-in exiting `code`.
    fake = tmp_path / "fake"
    fake.write_text(f"#!/bin/sh\nexit {code}\n")
    fake.chmod(0o755)
    proc = subprocess.run(
        ["make", "-s", "-C", str(REPO), "-o", "setup", "-o", ".tools/bin/uv", "run", f"RUN={fake}"],
        capture_output=True, text=True, env={**os.environ, "MAKEFLAGS": ""}, timeout=60,
    )  # fmt: skip
    assert (proc.returncode != 0) == fails, proc.stderr
