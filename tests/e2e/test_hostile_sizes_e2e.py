"""A 10 MB alert title and description: `scenarios lint`, `run` and a served `/reset` each finish (issue: hardening 6).

Blind mode used to be quadratic (a 100 KB alert made lint take minutes and held every server client for
13.5 s per `/reset`). No timing is asserted here (benchmarks/blind_scaling.py measures it): a quadratic step
would not finish within the subprocess deadline, which only guards against a hang.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from sredrill.scenarios.loader import BUILTIN_PACKS_DIR
from tests.server.launch import launched

SIZE = 10 * 1024 * 1024
HANG_S = 600  # a guard against a hang, not a timing assertion
FOLDER = "001-replication-lag"


def hostile_text(size: int) -> str:
    """Text shaped against each pattern blinding used to backtrack on: a long run of letters, long runs of
    spaces, and the scenario's folder split in two around itself (each removal joins another copy)."""
    unit = "ReplicaLag above 600 seconds " + "a" * 4000 + " " * 4000 + "001-repli" * 50 + "cation-lag" * 50
    return (unit * (size // len(unit) + 1))[:size]


@pytest.fixture(scope="module")
def hostile_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile") / "hostile_pack"
    root.mkdir()
    shutil.copy(BUILTIN_PACKS_DIR / "rds_postgres" / "pack.yml", root / "pack.yml")
    shutil.copytree(BUILTIN_PACKS_DIR / "rds_postgres" / FOLDER, root / FOLDER)
    alert_path = root / FOLDER / "alert.json"
    alert = json.loads(alert_path.read_text())
    alert["title"] = alert["commonAnnotations"]["description"] = hostile_text(SIZE)
    alert_path.write_text(json.dumps(alert))
    return root


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("SREDRILL_", "OPENAI_"))}


def sredrill(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sredrill", *args], cwd=cwd, env=env(), capture_output=True, text=True, timeout=HANG_S
    )


def test_lint_of_a_10_mb_alert_finishes(hostile_pack: Path, tmp_path: Path) -> None:
    done = sredrill("scenarios", "lint", str(hostile_pack), cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "hostile_pack: 1 scenarios loaded, 0 errors, 0 warnings"


def test_run_of_a_10_mb_alert_finishes_and_grades(hostile_pack: Path, tmp_path: Path) -> None:
    done = sredrill(
        "run", "--pack", str(hostile_pack), "--agent", "reference", "--json", "--db", str(tmp_path / "runs.db"),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-3000:]  # passed or failed: graded, not errored
    (result,) = json.loads(done.stdout)["results"]
    assert result["name"] == f"hostile_pack/{FOLDER}#1" and result["status"] in ("passed", "failed")


def test_serve_resets_a_10_mb_alert_scenario(hostile_pack: Path) -> None:
    cmd = [sys.executable, "-m", "sredrill", "serve", "--port", "0", "--pack", str(hostile_pack)]
    with launched(cmd, env=env(), deadline_s=HANG_S) as server, httpx.Client(base_url=server.url) as http:
        tasks = [t for t in http.get("/tasks").json()["tasks"] if t["kind"] == "rca"]
        assert len(tasks) == 1
        reset = http.post("/reset", json={"task_id": tasks[0]["task_id"]}, timeout=HANG_S)
        assert reset.status_code == 200, reset.text[:2000]
        observation = reset.json()["observation"]
        (title,) = observation["alerts"]
        assert title.startswith("ReplicaLag above 600 seconds") and "001-replication-lag" not in title
        assert http.get("/health", timeout=HANG_S).json() == {"status": "healthy"}
