"""`sredrill run` over a pack with one malformed scenario among good ones (issue: hardening 8).

The malformed one (a NaN among its CPU values) is reported `errored` with its load error, never graded;
the good ones are graded; the exit code says some errored (3).
"""

from __future__ import annotations

import json
import shutil

from sredrill.scenarios.loader import BUILTIN_PACKS_DIR
from tests.e2e.conftest import Project

GOOD = ("001-replication-lag", "003-storage-full")
BAD = "004-cpu-saturation-bad-query"


def test_run_reports_the_malformed_scenario_errored_and_grades_the_others(project: Project) -> None:
    pack = project.root / "mixed_pack"
    pack.mkdir()
    builtin = BUILTIN_PACKS_DIR / "rds_postgres"
    shutil.copy(builtin / "pack.yml", pack / "pack.yml")
    for folder in (*GOOD, BAD):
        shutil.copytree(builtin / folder, pack / folder)
    metrics_path = pack / BAD / "aws_cloudwatch_metrics.json"
    doc = json.loads(metrics_path.read_text())
    doc["metric_data_results"][0]["values"][3] = float("nan")
    metrics_path.write_text(json.dumps(doc))  # json writes the NaN literal, as a careless exporter would

    cli = project.run("run", "--pack", str(pack), "--agent", "reference", "--json")
    assert cli.code == 3, cli.stderr[-3000:]
    bad = cli.result(f"mixed_pack/{BAD}#1")
    assert bad["status"] == "errored" and bad.get("checks") in (None, [])
    assert f"mixed_pack/{BAD}/aws_cloudwatch_metrics.json: metric_data_results[0].values[3]" in bad["failure_reason"]
    assert "not a finite number" in bad["failure_reason"]
    for folder in GOOD:
        assert cli.result(f"mixed_pack/{folder}#1")["status"] in ("passed", "failed")

    lint = project.run("scenarios", "lint", str(pack), db=False)
    assert lint.code == 1 and f"error: mixed_pack/{BAD}/aws_cloudwatch_metrics.json" in lint.stdout
    assert lint.stdout.strip().splitlines()[-1] == "mixed_pack: 2 scenarios loaded, 1 errors, 0 warnings"

    chosen = project.run("run", "--pack", str(pack), "--scenario", BAD, "--agent", "reference", "--json")
    assert chosen.code == 3, chosen.stderr[-2000:]
    assert [r["status"] for r in chosen.report()["results"]] == ["errored"]
