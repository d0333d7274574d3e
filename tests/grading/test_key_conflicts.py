"""A self-contradicting answer key (sredrill format) makes its scenario's results errored, never failed or passed.

`grade_diagnosis` raises `AnswerKeyConflict` (a `PackError`) naming every conflict and the fix; the engine's
per-test boundary records that as `errored` on every axis, and the run goes on with the other scenarios.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import sredrill
from sredrill.grading import grade_diagnosis
from sredrill.grading.checks import AnswerKeyConflict
from sredrill.results import GradingMode, TestStatus
from sredrill.scenarios import Pack
from tests.grading.agent_output import trajectory
from tests.grading.test_checks import good
from tests.support.scenario_builder import PackWriter, answer, build_pack, only, scenario_yml

CONTRADICTING: dict[str, Any] = {
    "root_cause_category": "resource_exhaustion",
    "required_keywords": ["CPU"],
    "failure_modes": ["cpu_saturation"],
    "ruled_out": ["cpu_saturation", "storage_full"],
    "refuting": {"replication_lag": [{"metric": "ReplicaLag"}]},
}


def _grade(pack: Pack) -> None:
    grade_diagnosis(
        only(pack), good(), trajectory("get_alert"), axis=1, returned_metrics=(), vocabulary=pack.vocabulary
    )


def test_grading_a_self_contradicting_key_raises_naming_each_conflict(write_pack: PackWriter) -> None:
    pack = write_pack(failure_mode="cpu_saturation", **CONTRADICTING)
    with pytest.raises(AnswerKeyConflict) as caught:
        _grade(pack)
    err = caught.value
    assert err.path == f"{only(pack).qualified_id}/answer.yml"
    assert err.message == (
        "the answer key contradicts itself, so no diagnosis can pass it: failure mode 'cpu_saturation' is also in "
        "ruled_out; refuting names 'replication_lag', which is not in ruled_out"
    )
    assert err.hint is not None and "sredrill scenarios lint --pack PATH" in err.hint


def test_a_mode_in_its_own_forbidden_categories_is_a_conflict_in_sredrill_mode(write_pack: PackWriter) -> None:
    pack = write_pack(
        failure_mode="cpu_saturation",
        failure_modes=["cpu_saturation"],
        root_cause_category="resource_exhaustion",
        required_keywords=["CPU"],
        forbidden_categories=["cpu_saturation"],
    )
    with pytest.raises(AnswerKeyConflict, match="failure mode 'cpu_saturation' is also in forbidden_categories"):
        _grade(pack)


def test_an_upstream_key_that_forbids_its_derived_mode_is_graded_in_compat_mode(write_pack: PackWriter) -> None:
    # Upstream compares coarse categories there, so the entry never fires: not a conflict of an upstream key.
    pack = write_pack(
        failure_mode="cpu_saturation",
        root_cause_category="resource_exhaustion",
        required_keywords=["CPU"],
        forbidden_categories=["cpu_saturation"],
    )
    assert only(pack).grading == GradingMode.COMPAT and only(pack).answer.conflicts()
    _grade(pack)


def _pack(root: Path) -> Path:
    fine = answer(root_cause_category="healthy", failure_modes=["healthy"])
    bad = answer(**CONTRADICTING)
    build_pack(
        root,
        {
            "001-fine": {"answer.yml": fine},
            "002-contradicts": {"scenario.yml": scenario_yml("002-contradicts", failure_mode="cpu_saturation"),
                                "answer.yml": bad},
        },
    )  # fmt: skip
    return root


def test_sredrill_run_records_the_scenario_errored_and_runs_the_rest(tmp_path: Path) -> None:
    root = _pack(tmp_path / "conflicts")
    report = sredrill.run([str(root)], agent="keyword", axis2=True)
    by_id = {r.id: r for r in report.results}
    assert sorted(by_id) == [f"conflicts/{f}#{a}" for f in ("001-fine", "002-contradicts") for a in (1, 2)]
    for axis in (1, 2):
        bad = by_id[f"conflicts/002-contradicts#{axis}"]
        assert bad.status == TestStatus.ERRORED
        assert bad.failure_reason is not None
        assert bad.failure_reason.startswith(
            "conflicts/002-contradicts/answer.yml: the answer key contradicts itself, so no diagnosis can pass it: "
            "failure mode 'cpu_saturation' is also in ruled_out"
        )
        assert "sredrill scenarios lint --pack PATH" in bad.failure_reason
        assert by_id[f"conflicts/001-fine#{axis}"].status != TestStatus.ERRORED


def test_the_cli_exits_3_for_an_errored_scenario(tmp_path: Path) -> None:
    root = _pack(tmp_path / "conflicts")
    done = subprocess.run(
        [sys.executable, "-m", "sredrill", "run", "--pack", str(root), "--agent", "keyword", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    results = {r["id"]: r for r in json.loads(done.stdout)["results"]}
    bad = results["conflicts/002-contradicts#1"]
    assert bad["status"] == "errored"
    assert "failure mode 'cpu_saturation' is also in ruled_out" in bad["failure_reason"]


def test_an_environment_episode_of_a_self_contradicting_key_is_refused_when_it_starts(
    write_pack: PackWriter,
) -> None:
    from sredrill.env.rca import RcaEpisode, RcaTask

    pack = write_pack(failure_mode="cpu_saturation", **CONTRADICTING)
    with pytest.raises(AnswerKeyConflict, match="contradicts itself"):
        RcaEpisode(RcaTask.of(pack, only(pack)), seed=0)
