"""`load_pack` records how each scenario's answer key is graded: `compat` for a key in the upstream format."""

from __future__ import annotations

from pathlib import Path

import pytest

from sredrill.results import GradingMode
from sredrill.scenarios import load_pack
from tests.support.scenario_builder import answer, scenario_yml, write_scenario


@pytest.mark.parametrize(
    ("extra", "mode"),
    [
        ({}, GradingMode.COMPAT),  # the upstream keys only
        ({"failure_modes": ["replication_lag"]}, GradingMode.SREDRILL),
        ({"ruled_out": ["cpu_saturation"]}, GradingMode.SREDRILL),
        ({"ruled_out": []}, GradingMode.SREDRILL),  # set, even to nothing: the author wrote a sredrill key
    ],
)
def test_the_grading_mode_comes_from_the_keys_the_answer_sets(
    pack_dir: Path, extra: dict[str, object], mode: GradingMode
) -> None:
    files = {
        "scenario.yml": scenario_yml("001-lag", failure_mode="replication_lag"),
        "answer.yml": answer(root_cause_category="resource_exhaustion", required_keywords=["lag"], **extra),
    }
    write_scenario(pack_dir, "001-lag", files)
    (scenario,) = load_pack(pack_dir).scenarios
    assert scenario.grading == mode
    # decided before the loader fills failure_modes from scenario.yml, which it does in either mode
    assert scenario.failure_modes == ("replication_lag",)


def test_a_child_does_not_inherit_its_bases_grading_mode(pack_dir: Path) -> None:
    # answer.yml never falls back to the base folder: each scenario's own key decides.
    write_scenario(pack_dir, "000-base", {"answer.yml": answer(failure_modes=["healthy"])})
    write_scenario(pack_dir, "001-child", {"scenario.yml": {"base": "000-base", "scenario_id": "001-child"}})
    base, child = load_pack(pack_dir).scenarios
    assert (base.grading, child.grading) == (GradingMode.SREDRILL, GradingMode.COMPAT)


def test_the_builtin_pack_sets_sredrill_keys_everywhere() -> None:
    pack = load_pack("rds_postgres")
    assert {s.grading for s in pack.scenarios} == {GradingMode.SREDRILL}
