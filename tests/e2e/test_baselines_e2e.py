"""`sredrill baselines` through the CLI: one table per pack (RDS and Kubernetes figures never mixed), the pass
rate and the failure-mode accuracy per difficulty, and the reference agent's figure on a built-in pack labelled a
development figure (a pack given as a folder is not, whatever its name). `majority` takes its prior from the
training split a pack declares: where none is, its row says it did not run and why, and the rest run."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

from sredrill.scenarios.loader import BUILTIN_PACKS_DIR

from .conftest import Project

K8S_SMALL = Path(__file__).resolve().parents[1] / "fixtures" / "k8s_small"
DEV = "reference (dev)"


def _sections(stdout: str) -> dict[str, str]:
    """The console output cut at each table's title (`pack NAME: …`), by pack name."""
    out: dict[str, list[str]] = defaultdict(list)
    current = ""
    for line in stdout.splitlines():
        if line.startswith("pack "):
            current = line.removeprefix("pack ").split(":", 1)[0]
        out[current].append(line)
    return {name: "\n".join(lines) for name, lines in out.items()}


def _rows(text: str) -> list[list[str]]:
    """A table's body rows as their cells (the agent, the row's kind, the figures, the run)."""
    return [[c.strip() for c in line.strip("│").split("│")] for line in text.splitlines() if line.startswith("│ ")]


def _modes_by_difficulty(results: list[dict[str, Any]]) -> dict[str, float]:
    """The failure-mode accuracy per difficulty, counted from the results themselves."""
    right: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        if r["status"] != "errored":
            right[str(r["difficulty"])].append(bool((r["checks"] or {}).get("failure_modes", {}).get("passed")))
    return {d: sum(v) / len(v) for d, v in sorted(right.items())}


def _k8s_small(project: Project, *, training_split: str | None = "k8s") -> str:
    """A copy of the K8s fixture pack in the project, declaring `training_split` (the built-in k8s pack: another
    pack of the same domain, whose labels majority may read) unless None."""
    root = project.root / "k8s_small"
    shutil.copytree(K8S_SMALL, root)
    if training_split is not None:
        (root / "pack.yml").write_text(f"training_split: {training_split}\n")
    return str(root)


def test_two_packs_two_tables_each_with_failure_mode_accuracy(project: Project) -> None:
    cli = project.run("baselines", "--pack", "rds_postgres", "--pack", _k8s_small(project))
    assert cli.code == 0, cli.stderr[-3000:]
    sections = _sections(cli.stdout)
    assert list(sections) == ["rds_postgres", "k8s_small"]
    rds, k8s = sections["rds_postgres"], sections["k8s_small"]
    # Each pack's own difficulty scale: the K8s fixture has a difficulty 0, the RDS pack none.
    header = {name: next(line for line in text.splitlines() if "agent" in line) for name, text in sections.items()}
    assert "d0" in header["k8s_small"] and "d0" not in header["rds_postgres"] and "d4" in header["rds_postgres"]
    for text in (rds, k8s):
        lines = text.splitlines()
        assert sum(line.startswith("│ ") and "│ passed │" in line for line in lines) == 4  # one per agent
        assert sum("│ modes  │" in line for line in lines) == 4
    # The built-in pack's reference row is a development figure; the folder's is not.
    assert f"│ {DEV} " in rds and "development figure on the built-in pack rds_postgres" in rds
    assert "(dev)" not in k8s and "development figure" not in k8s and "│ reference " in k8s
    assert "5 scenarios graded in compatibility mode" in k8s and "compatibility" not in rds


def test_json_failure_mode_accuracy_matches_the_runs_results(project: Project) -> None:
    k8s_small = _k8s_small(project)
    cli = project.run("baselines", "--pack", "rds_postgres", "--pack", k8s_small, "--json")
    assert cli.code == 0, cli.stderr[-3000:]
    rows = {row["agent"]: row for row in json.loads(cli.stdout)}
    assert set(rows) == {"majority", "keyword", "random", "reference"}
    for agent, row in rows.items():
        assert list(row["packs"]) == ["rds_postgres", "k8s_small"]
        assert row["packs"]["rds_postgres"]["builtin"] is True and row["packs"]["k8s_small"]["builtin"] is False
        assert row["packs"]["rds_postgres"]["development_figure"] is (agent == "reference")
        assert row["packs"]["k8s_small"]["development_figure"] is False
    assert rows["reference"]["packs"]["rds_postgres"]["rca"]["failure_modes"]["rate"] == 1.0
    # The keyword baseline's figures are what its own run's results say, pack by pack.
    run = project.run("run", "--pack", "rds_postgres", "--pack", k8s_small, "--agent", "keyword", "--json")
    assert run.code in (0, 1), run.stderr[-3000:]
    results = run.report()["results"]
    for pack in ("rds_postgres", "k8s_small"):
        mine = [r for r in results if r["file"] == pack]
        figures = rows["keyword"]["packs"][pack]["rca"]
        assert figures["total"] == len(mine) > 0
        assert figures["passed"] == sum(r["status"] == "passed" for r in mine)
        assert figures["failure_modes"]["by_difficulty"] == _modes_by_difficulty(mine)
        right = sum(bool((r["checks"] or {}).get("failure_modes", {}).get("passed")) for r in mine)
        assert figures["failure_modes"]["passed"] == right


def test_a_folder_named_like_a_builtin_pack_is_no_development_figure(project: Project) -> None:
    shutil.copytree(BUILTIN_PACKS_DIR / "rds_postgres", project.root / "packs" / "rds_postgres")
    cli = project.run("baselines", "--pack", "packs/rds_postgres")
    assert cli.code == 0, cli.stderr[-3000:]
    assert "pack rds_postgres:" in cli.stdout and "│ reference " in cli.stdout
    assert "(dev)" not in cli.stdout and "development figure" not in cli.stdout
    # A folder is no built-in pack: it gets no uniform prior, and declares no training split.
    assert ["majority", "not run"] in [row[:2] for row in _rows(cli.stdout)], cli.stdout
    assert "majority: not run: the majority baseline takes its prior from a training split" in cli.stdout
    rows = json.loads(project.run("baselines", "--pack", "packs/rds_postgres", "--json").stdout)
    assert [row["agent"] for row in rows] == ["majority", "keyword", "random", "reference"]
    assert rows[0]["run_id"] is None and list(rows[0]["not_run"]) == ["rds_postgres"] and "packs" not in rows[0]
    assert [row["packs"]["rds_postgres"]["development_figure"] for row in rows[1:]] == [False] * 3


def test_majority_not_run_where_no_training_split_is_declared_runs_on_the_others(project: Project) -> None:
    k8s_small = _k8s_small(project, training_split=None)
    cli = project.run("baselines", "--pack", "rds_postgres", "--pack", k8s_small)
    assert cli.code == 0, cli.stderr[-3000:]
    sections = _sections(cli.stdout)
    rds, k8s = sections["rds_postgres"], sections["k8s_small"]
    # The built-in pack: majority ran (a uniform prior); the folder: a row saying it did not, and why.
    assert "│ majority " in rds and "not run" not in rds
    assert [row[:2] for row in _rows(k8s) if row[1] != "modes"] == [
        ["keyword", "passed"], ["random", "passed"], ["reference", "passed"], ["majority", "not run"]
    ]  # fmt: skip
    flat = " ".join(k8s.split())  # the console wraps the reason at its width
    why = flat[flat.index("majority: not run: ") :]
    assert "'k8s_small' declares none" in why and "add `training_split: PACK_OR_PATH` to k8s_small/pack.yml" in why
    assert "5 scenarios graded in compatibility mode" in k8s
    rows = {row["agent"]: row for row in json.loads(project.run(
        "baselines", "--pack", "rds_postgres", "--pack", k8s_small, "--json"
    ).stdout)}  # fmt: skip
    assert list(rows["majority"]["packs"]) == ["rds_postgres"] and list(rows["majority"]["not_run"]) == ["k8s_small"]
    assert all("not_run" not in rows[a] and len(rows[a]["packs"]) == 2 for a in ("keyword", "random", "reference"))
    # Declared, it runs there too; its prior is the split's (the built-in k8s pack), not the graded pack's.
    (Path(k8s_small) / "pack.yml").write_text("training_split: k8s\n")
    again = json.loads(project.run("baselines", "--pack", k8s_small, "--json").stdout)
    assert "not_run" not in again[0] and list(again[0]["packs"]) == ["k8s_small"]
