"""Every command that touches the store finds it the same way: `--db`, else `SREDRILL_DB`, else `db` in the
config file, else `.sredrill/sredrill.db`. Each command runs here (a real subprocess) with only the variable set,
then with only the config file's `db`, and must use that store: its run lands there, or it reads what is there."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import httpx
import pytest

from sredrill.engine import run as engine_run
from sredrill.store import Store
from tests.server.launch import launched

from .conftest import Project

QUICK_EVAL = """
from sredrill import expect, test


@test("quick")
async def _(agent):
    expect(1).to_be(1)
"""

# (the command's arguments, whether it adds a run to the store, reads the one there, or deletes it)
COMMANDS = {
    "run": (["run", "--pack", "rds_postgres", "--agent", "keyword", "--scenario", "000-healthy"], "adds"),
    "test": (["test", "quick_eval.py", "--agent", "keyword"], "adds"),
    "baselines": (["baselines", "--pack", "rds_postgres", "--jobs", "2"], "adds"),
    "audit": (["audit", "--pack", "rds_postgres", "--jobs", "2", "--no-fail"], "adds"),
    "runs list": (["runs", "list"], "reads"),
    "runs show": (["runs", "show", "latest", "--json"], "reads"),
    "runs compare": (["runs", "compare", "latest", "latest"], "reads"),
    "runs regrade": (["runs", "regrade", "latest"], "adds"),
    "runs delete": (["runs", "delete", "latest"], "deletes"),
}


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A store holding one finished run (and its id), copied by each test."""
    db = tmp_path_factory.mktemp("seed") / "seed.db"
    report = engine_run(["rds_postgres"], agent="keyword", db=str(db), scenarios=["000-healthy"])
    return db, report.run_id


def copy_store(source: Path, target: Path) -> None:
    """A whole copy of a store (its write-ahead log included), through SQLite's backup."""
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)


def pointed(project: Project, seeded: tuple[Path, str], source: str) -> tuple[Path, dict[str, str]]:
    """The store copied to `elsewhere/chosen.db`, named by `source` only: the variable or the config file."""
    target = project.root / "elsewhere" / "chosen.db"
    target.parent.mkdir()
    copy_store(seeded[0], target)
    if source == "env":
        return target, {"SREDRILL_DB": str(target)}
    project.write("sredrill.toml", 'db = "elsewhere/chosen.db"\n')
    return target, {}


@pytest.mark.parametrize("source", ["env", "config"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_uses_the_store_the_variable_or_the_config_names(
    project: Project, seeded: tuple[Path, str], command: str, source: str
) -> None:
    project.write("quick_eval.py", QUICK_EVAL)
    target, env = pointed(project, seeded, source)
    args, effect = COMMANDS[command]
    cli = project.run(*args, env=env, db=False, timeout=600)
    assert cli.code in (0, 1), cli.stderr
    assert not (project.root / ".sredrill").exists(), "the default store was used"
    with Store(target) as store:
        runs = [r.run_id for r in store.list_runs(50)]
    if effect == "adds":
        assert len(runs) > 1 and runs[-1] == seeded[1], (cli.stdout, cli.stderr)
    elif effect == "deletes":
        assert runs == [] and seeded[1] in cli.stdout, (cli.stdout, cli.stderr)
    else:
        assert runs == [seeded[1]]
        assert seeded[1] in cli.stdout, cli.stdout


@pytest.mark.parametrize("source", ["env", "config"])
def test_sredrill_serve_serves_the_store_the_variable_or_the_config_names(
    project: Project, seeded: tuple[Path, str], source: str
) -> None:
    _, env = pointed(project, seeded, source)
    cmd = [sys.executable, "-m", "sredrill", "serve", "--port", "0", "--pack", "rds_postgres"]
    with launched(cmd, env=project.env(env), cwd=str(project.root)) as server:
        listed = httpx.get(f"{server.url}/api/runs", headers=server.auth(), timeout=60).json()["runs"]
    assert [r["run_id"] for r in listed] == [seeded[1]]
    assert not (project.root / ".sredrill").exists()


def test_the_flag_wins_over_the_variable_and_the_variable_over_the_config(
    project: Project, seeded: tuple[Path, str]
) -> None:
    project.write("sredrill.toml", 'db = "from-config.db"\n')
    copy_store(seeded[0], project.root / "from-flag.db")
    env = {"SREDRILL_DB": str(project.root / "from-env.db")}
    flag = project.run("runs", "show", "latest", "--json", "--db", "from-flag.db", env=env, db=False)
    assert flag.code == 0 and json.loads(flag.stdout)["run_id"] == seeded[1]
    assert not (project.root / "from-env.db").exists() and not (project.root / "from-config.db").exists()
    copy_store(seeded[0], project.root / "from-env.db")
    variable = project.run("runs", "list", env=env, db=False)
    assert variable.code == 0 and seeded[1] in variable.stdout
    assert not (project.root / "from-config.db").exists()


def test_a_bad_config_file_is_a_usage_error_naming_it(project: Project) -> None:
    project.write("sredrill.toml", "db = [\n")
    cli = project.run("runs", "list", db=False)
    assert cli.code == 2 and cli.stderr.startswith("error: ") and "sredrill.toml" in cli.stderr
