"""Answer-key lint (`evidence/keys.py`, `scenarios/lint.answer_key_findings`): selectors that match no item, a series
selector without `shows`, `above` / `below` without a bound (or with one the data never clears), keys that
contradict themselves, and a sredrill key without `location` or `decisive`. Each finding has a failing and a passing
case, on tmp packs written by the scenario builder and loaded by the real loader; `lint_pack` (what `sredrill
scenarios lint` runs) reports them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sredrill.domains.rds.serve import RdsEvidence
from sredrill.evidence.keys import key_findings, near_items
from sredrill.scenarios import Finding, Scenario, Severity, lint_pack, load_pack
from sredrill.scenarios.answer import ItemSelector
from tests.support.scenario_builder import INSTANCE, N, answer, build_pack, metrics, only, scenario_yml, series

FOLDER = "001-case"
RISING = [10.0 + 6 * i for i in range(N)]


def cpu_key(**over: Any) -> dict[str, Any]:
    """A sredrill-format key of a CPU fault, complete unless `over` changes it."""
    key: dict[str, Any] = {
        "root_cause_category": "resource_exhaustion",
        "required_keywords": ["cpu"],
        "failure_modes": ["cpu_saturation"],
        "location": [INSTANCE],
        "decisive": {"cpu_saturation": [{"metric": "CPUUtilization", "shows": ["rising"]}]},
    }
    return answer(**{**key, **over})


def lint(tmp_path: Path, key: dict[str, Any], *, compat: bool = False) -> list[Finding]:
    files: dict[str, object] = {
        "scenario.yml": scenario_yml(FOLDER, failure_mode="cpu_saturation", severity="critical"),
        "aws_cloudwatch_metrics.json": metrics(
            series("CPUUtilization", "Percent", RISING),
            series("DatabaseConnections", "Count"),
            series("FreeStorageSpace", "Bytes", [9e10] * N),
        ),
        "answer.yml": key,
    }
    pack = build_pack(tmp_path / "drillpack", {FOLDER: files})
    assert only(pack).grading.value == ("compat" if compat else "sredrill")
    return [f for f in lint_pack(pack) if f.rule.startswith("key_") or f.rule == "contradiction"]


def only_scenario(tmp_path: Path) -> Scenario:
    """The scenario `lint` wrote last under `tmp_path`, loaded again."""
    return only(load_pack(tmp_path / "drillpack"))


def rendered(findings: list[Finding]) -> list[str]:
    return [f.render() for f in findings]


def test_a_complete_key_whose_selectors_match_has_no_finding(tmp_path: Path) -> None:
    assert rendered(lint(tmp_path, cpu_key())) == []


# -- selectors against the evidence ------------------------------------------------------------------------


def test_a_decisive_selector_that_matches_no_item_is_an_error_listing_the_nearest(tmp_path: Path) -> None:
    key = cpu_key(decisive={"cpu_saturation": [{"metric": "CPUUtilisation", "shows": ["rising"]}]})
    (f,) = lint(tmp_path, key)
    assert (f.severity, f.rule, f.field) == (Severity.ERROR, "key_selector", "decisive.cpu_saturation[0]")
    assert f.path == f"drillpack/{FOLDER}/answer.yml"
    assert "metric=CPUUtilisation (rising) selects no evidence item" in f.message
    # The nearest item first: the series the typo meant.
    assert f.fix.split("the nearest:\n")[1].split("\n")[0].strip() == (
        f"metric metric=CPUUtilization resource={INSTANCE} stat=Average"
    )


def test_a_refuting_selector_that_matches_no_item_is_an_error(tmp_path: Path) -> None:
    refuting = {"storage_full": [{"metric": "FreeStorageSpace", "shows": ["flat"]}]}
    assert lint(tmp_path / "ok", cpu_key(ruled_out=["storage_full"], refuting=refuting)) == []
    bad = {"storage_full": [{"kind": "event", "text": "storage-full"}]}
    (f,) = lint(tmp_path / "bad", cpu_key(ruled_out=["storage_full"], refuting=bad))
    assert (f.severity, f.rule, f.field) == (Severity.ERROR, "key_selector", "refuting.storage_full[0]")
    assert "kind=event, text=storage-full selects no evidence item" in f.message
    assert "event " in f.fix  # the scenario's event is the nearest


def test_a_field_no_item_has_is_named(tmp_path: Path) -> None:
    key = cpu_key(decisive={"cpu_saturation": [{"metrc": "CPUUtilization", "shows": ["rising"]}]})
    (f,) = lint(tmp_path, key)
    assert "no item has the field 'metrc'" in f.message and "metric" in f.message


def test_a_text_field_matches_as_a_substring_case_insensitively(tmp_path: Path) -> None:
    selector = {"kind": "sql", "statement": "from ORDERS where"}
    assert lint(tmp_path, cpu_key(decisive={"cpu_saturation": [selector]})) == []


def test_a_series_selector_without_shows_is_a_warning(tmp_path: Path) -> None:
    (f,) = lint(tmp_path / "bad", cpu_key(decisive={"cpu_saturation": [{"metric": "CPUUtilization"}]}))
    assert (f.severity, f.rule, f.field) == (Severity.WARNING, "key_shows", "decisive.cpu_saturation[0]")
    # A statement is no series: present is what there is to say about it.
    assert lint(tmp_path / "ok", cpu_key(decisive={"cpu_saturation": [{"kind": "sql", "statement": "orders"}]})) == []


def test_above_or_below_without_a_bound_is_a_warning(tmp_path: Path) -> None:
    # "CPU above -1" holds for any series: without a bound the fact says nothing about the fault.
    (f,) = lint(
        tmp_path / "bad", cpu_key(decisive={"cpu_saturation": [{"metric": "CPUUtilization", "shows": ["above"]}]})
    )
    assert (f.severity, f.rule, f.field) == (Severity.WARNING, "key_bound", "decisive.cpu_saturation[0]")
    assert "accepts 'above' with no bound" in f.message and "above: V" in f.fix
    refuting = {"storage_full": [{"metric": "FreeStorageSpace", "shows": ["flat", "below"]}]}
    (f,) = lint(tmp_path / "below", cpu_key(ruled_out=["storage_full"], refuting=refuting))
    assert (f.rule, f.field) == ("key_bound", "refuting.storage_full[0]") and "'below' with no bound" in f.message


def test_a_bound_the_data_clears_has_no_finding(tmp_path: Path) -> None:
    # The CPU series climbs to 94: above 90 is met; free storage sits at 90 GB: below 100 GB is met.
    decisive = {"cpu_saturation": [{"metric": "CPUUtilization", "shows": ["rising", "above"], "above": 90}]}
    refuting = {"storage_full": [{"metric": "FreeStorageSpace", "shows": ["below"], "below": 1e11}]}
    assert lint(tmp_path, cpu_key(decisive=decisive, ruled_out=["storage_full"], refuting=refuting)) == []


@pytest.mark.parametrize(
    ("selector", "said"),
    [
        ({"shows": ["above"], "above": 99}, "no point of the items it selects is above 99 (its data reaches 94)"),
        ({"shows": ["below"], "below": 5}, "no point of the items it selects is below 5 (its data reaches 10)"),
        ({"shows": ["rising"], "above": 90}, "sets above: 90 but its shows does not accept 'above'"),
    ],
)
def test_a_bound_no_point_clears_or_that_is_never_read_is_a_warning(
    tmp_path: Path, selector: dict[str, Any], said: str
) -> None:
    (f,) = lint(tmp_path, cpu_key(decisive={"cpu_saturation": [{"metric": "CPUUtilization", **selector}]}))
    assert (f.severity, f.rule, f.field) == (Severity.WARNING, "key_bound", "decisive.cpu_saturation[0]")
    assert said in f.message


# -- the key alone -----------------------------------------------------------------------------------------


def test_decisive_for_a_mode_not_expected_is_an_error(tmp_path: Path) -> None:
    decisive = {
        "cpu_saturation": [{"metric": "CPUUtilization", "shows": ["rising"]}],
        "storage_full": [{"metric": "FreeStorageSpace", "shows": ["falling"]}],
    }
    (f,) = lint(tmp_path, cpu_key(decisive=decisive))
    assert (f.severity, f.rule, f.field) == (Severity.ERROR, "contradiction", "decisive.storage_full")
    assert "not in failure_modes" in f.message


def test_refuting_a_hypothesis_not_ruled_out_is_an_error(tmp_path: Path) -> None:
    (f,) = lint(tmp_path, cpu_key(refuting={"storage_full": [{"metric": "FreeStorageSpace", "shows": ["flat"]}]}))
    assert (f.severity, f.rule, f.field) == (Severity.ERROR, "contradiction", "refuting.storage_full")


def test_every_conflict_of_the_key_is_a_lint_error(tmp_path: Path) -> None:
    key = cpu_key(
        ruled_out=["cpu_saturation"],
        forbidden_categories=["cpu_saturation"],
        decisive={"storage_full": [{"metric": "FreeStorageSpace", "shows": ["falling"]}]},
        refuting={"failover": [{"metric": "CPUUtilization", "shows": ["rising"]}]},
    )
    findings = lint(tmp_path, key)
    conflicts = only_scenario(tmp_path).answer.conflicts()
    assert len(conflicts) == 4
    errors = [f for f in findings if f.severity == Severity.ERROR and f.rule == "contradiction"]
    assert {f.field for f in errors} == {
        "ruled_out",
        "forbidden_categories",
        "decisive.storage_full",
        "refuting.failover",
    }


def test_a_sredrill_key_of_a_fault_without_location_is_a_warning(tmp_path: Path) -> None:
    (f,) = lint(tmp_path, cpu_key(location=[]))
    assert (f.severity, f.rule, f.field) == (Severity.WARNING, "key_location", "location")


def test_an_expected_mode_without_decisive_items_is_a_warning(tmp_path: Path) -> None:
    (f,) = lint(tmp_path, cpu_key(decisive={}))
    assert (f.severity, f.rule, f.field) == (Severity.WARNING, "key_decisive", "decisive.cpu_saturation")


def test_a_healthy_key_needs_neither_location_nor_decisive(tmp_path: Path) -> None:
    key = answer(failure_modes=["healthy"])
    files = {"answer.yml": key}
    pack = build_pack(tmp_path / "drillpack", {FOLDER: files})
    assert [f.render() for f in lint_pack(pack)] == []


def test_a_compat_key_gets_no_completeness_warning(tmp_path: Path) -> None:
    key = answer(root_cause_category="resource_exhaustion", required_keywords=["cpu"])
    assert lint(tmp_path, key, compat=True) == []


# -- the functions themselves ------------------------------------------------------------------------------


def test_key_findings_gives_the_cores_and_the_selectors_findings(tmp_path: Path) -> None:
    lint(tmp_path, cpu_key(location=[], decisive={"cpu_saturation": [{"metric": "CPU", "shows": ["rising"]}]}))
    findings = key_findings(only_scenario(tmp_path))
    assert [(f.rule, f.severity) for f in findings] == [
        ("key_location", Severity.WARNING),
        ("key_selector", Severity.ERROR),
    ]


def test_near_items_put_the_same_kind_and_the_closest_text_first(tmp_path: Path) -> None:
    lint(tmp_path, cpu_key())
    items = RdsEvidence(only_scenario(tmp_path)).items()
    near = near_items(ItemSelector.model_validate({"kind": "metric", "metric": "FreeStorage"}), items, n=2)
    assert near[0].identity["metric"] == "FreeStorageSpace"
    assert all(i.kind == "metric" for i in near)
