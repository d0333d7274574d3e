"""`sredrill baselines` through the CLI: one table per pack (RDS and Kubernetes figures never mixed), the pass
rate and the failure-mode accuracy per difficulty, and the reference agent's figure on a built-in pack labelled a
development figure (a pack given as a folder is not, whatever its name)."""

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


def _modes_by_difficulty(results: list[dict[str, Any]]) -> dict[str, float]:
    """The failure-mode accuracy per difficulty, counted from the results themselves."""
    right: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        if r["status"] != "errored":
            right[str(r["difficulty"])].append(bool((r["checks"] or {}).get("failure_modes", {}).get("passed")))
    return {d: sum(v) / len(v) for d, v in sorted(right.items())}


def test_two_packs_two_tables_each_with_failure_mode_accuracy(project: Project) -> None:
    cli = project.run("baselines", "--pack", "rds_postgres", "--pack", str(K8S_SMALL))
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
    cli = project.run("baselines", "--pack", "rds_postgres", "--pack", str(K8S_SMALL), "--json")
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
    run = project.run("run", "--pack", "rds_postgres", "--pack", str(K8S_SMALL), "--agent", "keyword", "--json")
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
    rows = json.loads(project.run("baselines", "--pack", "packs/rds_postgres", "--json").stdout)
    assert [row["packs"]["rds_postgres"]["development_figure"] for row in rows] == [False] * 4
