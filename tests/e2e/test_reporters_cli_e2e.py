"""Several reporters at once on the real CLI: `--reporter NAME[=PATH]` repeatable, the console kept when every
reporter writes a file, and each bad choice refused before anything runs (issue 20)."""

from __future__ import annotations

import json
import sqlite3
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.e2e.conftest import Project

EVAL = """
from sredrill import test, expect

@test("echoes", prompt="hello")
async def _(agent):
    expect((await agent.run()).output).to_contain("hello")

@test("wrong", prompt="hello")
async def _(agent):
    expect((await agent.run()).output).to_contain("bye")
"""
AGENT = "py:examples.agents.echo_agent:agent"
ENV = {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}
_SCOREBOARD = "2 results · 1 passed · 1 failed · 0 errored"


@pytest.fixture
def evals(project: Project) -> Project:
    project.write("cli_eval.py", EVAL)
    return project


def _test(project: Project, *args: str) -> tuple[int, str, str]:
    ran = project.run("test", "cli_eval.py", "--agent", AGENT, *args, env=ENV)
    return ran.code, ran.stdout, ran.stderr


def test_four_reporters_at_once_write_their_files_and_the_console(evals: Project) -> None:
    code, out, err = _test(
        evals, "--reporter", "console", "--reporter", "junit=reports/out.xml", "--reporter", "html=report.html",
        "--reporter", "json=out.json",
    )  # fmt: skip
    assert code == 1, err
    assert _SCOREBOARD in out
    report = json.loads((evals.root / "out.json").read_text())
    assert report["summary"]["passed"] == 1 and report["summary"]["failed"] == 1
    suites = ET.parse(evals.root / "reports" / "out.xml").getroot()
    assert suites.get("tests") == "2" and suites.get("failures") == "1"
    assert report["run_id"] in (evals.root / "report.html").read_text()


@pytest.mark.parametrize(
    "args",
    [("--reporter", "junit=j.xml"), ("--reporter", "junit", "--output", "j.xml"), ("--reporter", "html=j.xml")],
    ids=["junit=PATH", "junit --output", "html=PATH"],
)
def test_a_file_reporter_keeps_the_console_on_stdout(evals: Project, args: tuple[str, ...]) -> None:
    code, out, err = _test(evals, *args)
    assert code == 1, err
    assert _SCOREBOARD in out  # as pytest's --junitxml: the file and the terminal report
    assert (evals.root / "j.xml").stat().st_size > 0


def test_json_on_stdout_stays_one_document_beside_a_junit_file(evals: Project) -> None:
    code, out, err = _test(evals, "--json", "--reporter", "junit=j.xml")
    assert code == 1, err
    assert json.loads(out)["summary"]["total"] == 2  # no scoreboard mixed in
    assert ET.parse(evals.root / "j.xml").getroot().get("tests") == "2"


def test_the_config_file_may_list_reporters(evals: Project) -> None:
    evals.write("sredrill.toml", 'reporter = ["json=cfg.json", "junit=cfg.xml"]\n')
    code, out, err = _test(evals)
    assert code == 1, err
    assert _SCOREBOARD in out
    assert json.loads((evals.root / "cfg.json").read_text())["summary"]["total"] == 2
    assert (evals.root / "cfg.xml").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--reporter", "console", "--reporter", "json"), "console and json would both write to stdout"),
        (("--reporter", "junt=x.xml"), "--reporter junt=x.xml: unknown reporter 'junt'; did you mean 'junit'?"),
        (("--reporter", "junit="), "--reporter junit=: the path after '=' is empty"),
        (("--reporter", "junit"), "--reporter junit: junit writes a file, and none was given"),
        (("--reporter", "junit=cli_eval.py/x.xml"), "cannot write the report to 'cli_eval.py/x.xml'"),
        (("--reporter", "html=."), "cannot write the report to '.': it is a folder"),
        (("--reporter", "junit=a.xml", "--reporter", "html=a.xml"), "junit=a.xml and html=a.xml write the same"),
        (("--reporter", "junit=a.xml", "--reporter", "html=b.html", "-o", "c"), "2 reporters were given"),
    ],
    ids=["two-on-stdout", "unknown", "empty-path", "no-file", "unwritable", "folder", "same-file", "output"],
)
def test_a_bad_reporter_choice_stops_before_the_run(evals: Project, args: tuple[str, ...], message: str) -> None:
    code, out, err = _test(evals, *args)
    assert code == 2, err
    assert err.startswith("error: ") and message in err
    assert len(err.splitlines()) >= 2  # the fix follows
    assert out == ""
    if evals.db.exists():
        with sqlite3.connect(evals.db) as con:
            assert con.execute("select count(*) from runs").fetchone() == (0,)


def test_run_takes_several_reporters_too(project: Project) -> None:
    ran = project.run(
        "run", "--pack", "rds_postgres", "--scenario", "001-replication-lag", "--agent", "keyword",
        "--reporter", "junit=r.xml", "--reporter", "json=r.json",
    )  # fmt: skip
    assert ran.code in (0, 1), ran.stderr
    assert "1 result · " in ran.stdout
    assert json.loads((project.root / "r.json").read_text())["summary"]["total"] == 1
    assert ET.parse(project.root / "r.xml").getroot().get("tests") == "1"


def test_version_prints_the_package_version() -> None:
    import subprocess
    from importlib.metadata import version

    ran = subprocess.run([sys.executable, "-m", "sredrill", "--version"], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == f"sredrill {version('sredrill')}\n"
