"""The built-in pack's answer keys as data: each reference answer (`model_response`) passes its own label checks.

The answer keys and `pack.yml` are copied into a pack whose evidence files are tiny stand-ins, so this
tests grading against real answer keys and real keyword aliases, whatever state the evidence files are in.
Nothing here names a scenario: every expectation comes from the answer key itself.

The grounded checks (`GROUNDED`) are left out: a reference answer is text written without a run, citing
evidence sources by name as upstream does; what cites served items is an agent's run (the reference agents'
tests grade those end to end).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

import sredrill.scenarios
from sredrill.diagnosis import parse_diagnosis_text
from sredrill.domains.rds import DOMAIN as RDS
from sredrill.grading import grade_diagnosis
from sredrill.scenarios import Pack, load_pack
from tests.grading.agent_output import trajectory
from tests.support.scenario_builder import scenario_yml, write_scenario

BUILTIN = Path(sredrill.scenarios.__file__).resolve().parent / "packs" / "rds_postgres"
ANSWERS = sorted(BUILTIN.glob("[0-9][0-9][0-9]-*/answer.yml"))

# Not `ruling_out` either: it needs a refuting citation, and the reference answers phrase dismissals freely.
GROUNDED = frozenset({"citations", "decisive_evidence", "location", "evidence_cited", "uncited_claims", "ruling_out"})

pytestmark = pytest.mark.skipif(not ANSWERS, reason="the built-in rds_postgres pack has no answer keys yet")


@pytest.fixture(scope="module")
def answers_pack(tmp_path_factory: pytest.TempPathFactory) -> Pack:
    root = tmp_path_factory.mktemp("builtin") / "rds_postgres"
    root.mkdir()
    if (BUILTIN / "pack.yml").is_file():
        shutil.copy(BUILTIN / "pack.yml", root / "pack.yml")
    for answer in ANSWERS:
        key = yaml.safe_load(answer.read_text(encoding="utf-8"))
        name = answer.parent.name
        modes = key.get("failure_modes") or ["unknown"]
        stand_in = {"scenario.yml": scenario_yml(name, failure_mode=modes[0]), "answer.yml": None}
        shutil.copy(answer, write_scenario(root, name, stand_in) / "answer.yml")
    pack = load_pack(root)
    assert not pack.broken, pack.errors
    return pack


@pytest.mark.parametrize("axis", [1, 2])
def test_every_reference_answer_passes_its_own_answer_key(answers_pack: Pack, axis: int) -> None:
    failures = {}
    for scenario in answers_pack.scenarios:
        diagnosis = parse_diagnosis_text(scenario.answer.model_response)
        assert diagnosis is not None, scenario.folder
        tools = sorted(RDS.trajectory_tools(scenario.answer.optimal_trajectory))
        grade = grade_diagnosis(
            scenario,
            diagnosis,
            trajectory(*tools),
            axis=axis,
            returned_metrics=set(scenario.answer.required_queries or ()),
            vocabulary=answers_pack.vocabulary,
        )
        failed = {k: c.detail for k, c in grade.checks.items() if not c.passed and k not in GROUNDED}
        if failed:
            failures[scenario.folder] = failed
    assert failures == {}
