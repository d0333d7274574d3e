"""`sredrill audit`: the red-team agents and baselines beside the reference agent, pass@1 per difficulty.

The command runs in a subprocess over a small pack; the flagging rule and the table are checked on rows whose
figures the test chooses.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from sredrill.engine.audit import BUCKETS, AuditRow, PackAudit, audit_json, audit_tables, is_flagged
from sredrill.results import Rate

K8S_SMALL = Path(__file__).resolve().parents[1] / "fixtures" / "k8s_small"
ROOT = Path(__file__).resolve().parents[2]


def _audit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sredrill", "audit", "--pack", str(K8S_SMALL), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        check=False,
    )


def test_the_audit_runs_every_agent_on_the_pack_and_exits_1_exactly_when_one_is_flagged() -> None:
    done = _audit("--json", "--jobs", "2")
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(done.stdout)
    (table,) = doc["packs"]
    assert table["pack"] == "k8s_small" and table["axis"] == 1 and not table["builtin"]
    agents = [row["agent"] for row in table["rows"]]
    assert agents[0] == "reference"  # not a built-in pack: not labelled a development figure
    assert "redteam:stuffer (label oracle)" in agents
    assert {"redteam:alert-only", "redteam:zscore", "majority", "keyword", "random"} <= set(agents)
    assert any(a.startswith("redteam:constant (best: ") for a in agents)
    assert any(a.startswith("redteam:guesser") for a in agents)
    for row in table["rows"]:
        assert set(row["pass_at_1"]) == set(BUCKETS)
        if row["agent"] != "majority":  # k8s_small declares no training split: majority says why it did not run
            assert row["pass_at_1"]["all"]["total"] == 5, row
    majority = next(r for r in table["rows"] if r["agent"] == "majority")
    assert "training split" in majority["note"]
    flagged = [r for r in table["rows"] if r["flagged"]]
    assert all(r["role"] == "redteam" and r["pass_at_1"]["≥2"]["pass_rate"] > 0.10 for r in flagged)
    assert doc["flagged"] == bool(flagged)
    assert done.returncode == (1 if flagged else 0)


def test_no_fail_prints_the_table_and_exits_0() -> None:
    done = _audit("--no-fail")
    assert done.returncode == 0, done.stderr
    assert "audit · k8s_small · Axis 1 · pass@1" in done.stdout
    assert "redteam:stuffer (label oracle)" in done.stdout


def test_a_generated_set_is_audited_in_memory_and_a_development_seed_is_labelled_so() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sredrill", "audit", "--generate", "rds:seed=5:count=3", "--json", "--jobs", "2"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    (table,) = json.loads(done.stdout)["packs"]
    assert table["pack"] == "rds:seed=5:count=3" and not table["builtin"]
    assert "not an evaluation seed" in table["development"]
    rows = {r["agent"]: r for r in table["rows"]}
    assert "reference (dev)" in rows
    for agent in ("reference (dev)", "redteam:stuffer (label oracle)", "redteam:alert-only", "keyword"):
        assert rows[agent]["pass_at_1"]["all"]["total"] == 3, rows[agent]  # the stuffer: one run per group


def test_an_unknown_pack_or_a_bad_spec_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sredrill", "audit", "--generate", "rds:seed=x:count=3"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and done.stderr.startswith("error:"), done.stderr
    assert "seed" in done.stderr


def test_an_unknown_pack_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sredrill", "audit", "--pack", "no_such_pack"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error:")


def _rates(passed: int, failed: int) -> dict[str, Rate]:
    rate = Rate(total=passed + failed, passed=passed, failed=failed, pass_rate=passed / (passed + failed))
    return dict.fromkeys(BUCKETS, rate)


def test_only_a_red_team_agent_above_ten_percent_on_difficulty_2_and_up_is_flagged() -> None:
    assert is_flagged(AuditRow("redteam:zscore", "redteam", _rates(2, 8)))
    assert not is_flagged(AuditRow("redteam:zscore", "redteam", _rates(1, 9)))  # 10% is at the limit, not above
    assert not is_flagged(AuditRow("reference (dev)", "reference", _rates(10, 0)))
    assert not is_flagged(AuditRow("keyword", "baseline", _rates(5, 5)))
    empty = dict.fromkeys(BUCKETS, Rate())
    assert not is_flagged(AuditRow("majority", "redteam", empty))  # nothing graded is not a pass rate


def test_the_table_marks_the_flagged_row_and_labels_the_reference_a_development_figure() -> None:
    audit = PackAudit(
        "rds_postgres",
        1,
        True,
        [
            AuditRow("reference (dev)", "reference", _rates(9, 1)),
            AuditRow("redteam:alert-only", "redteam", _rates(3, 7), note="x"),
        ],
    )
    console = Console(width=200, record=True)
    for part in audit_tables([audit]):
        console.print(part)
    text = console.export_text()
    assert "reference (dev)" in text and "development figure" in text
    assert "ABOVE LIMIT on ≥2" in text
    assert "9/10 90%" in text
    doc = audit_json([audit])
    assert doc["flagged"] is True
    assert [r["flagged"] for r in doc["packs"][0]["rows"]] == [False, True]


def test_no_red_team_agent_passes_more_than_ten_percent_of_a_built_in_pack_at_difficulty_2_and_up() -> None:
    """The issue's measure, on every built-in pack and both axes: the grading holds against every red-team
    agent, and the reference agent (a development figure) passes what they fail."""
    done = subprocess.run(
        [sys.executable, "-m", "sredrill", "audit", "--pack", "rds_postgres", "--pack", "k8s", "--axis2", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
        check=False,
    )
    doc = json.loads(done.stdout)
    assert {(t["pack"], t["axis"]) for t in doc["packs"]} == {(p, a) for p in ("rds_postgres", "k8s") for a in (1, 2)}
    for table in doc["packs"]:
        rows = {r["agent"]: r for r in table["rows"]}
        over = {a: r["pass_at_1"]["≥2"]["passed"] for a, r in rows.items() if r["role"] == "redteam" and r["flagged"]}
        assert not over, (table["pack"], table["axis"], over)
        reference = rows["reference (dev)"]["pass_at_1"]["≥2"]
        assert reference["passed"] == reference["total"] > 0, (table["pack"], table["axis"], reference)
    assert not doc["flagged"] and done.returncode == 0, done.stderr
