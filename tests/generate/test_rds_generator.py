"""The RDS generator as a user runs it: deterministic bytes, packs that load and lint clean, the fixed
difficulty mix, the confounder rule measured on the written metrics, and answer keys a correct diagnosis passes.

Every expectation is computed from the written files (metrics, answer key), never from the generator's
internal state.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from sredrill.diagnosis import Diagnosis
from sredrill.domains.rds import DOMAIN as RDS
from sredrill.errors import InputError
from sredrill.evidence.serving import server_factory
from sredrill.generate import GenerateSpec, generate, generated_pack, write_pack
from sredrill.generate.rds import CONFOUNDER_METRICS, FAULT_METRICS, FLOORS, GENERATOR, MODES, anomaly_score
from sredrill.grading import grade_diagnosis
from sredrill.scenarios import Pack, Scenario, get_domain
from tests.grading.agent_output import trajectory
from tests.support.grounded import grounded_diagnosis

FAULTS = [m for m in MODES if m != "healthy"]


def spec(seed: int = 0, count: int = 8, difficulty: tuple[int, ...] = (), faults: tuple[str, ...] = ()) -> GenerateSpec:
    return GenerateSpec(domain="rds", seed=seed, count=count, difficulty=difficulty, faults=faults)


def files_of(s: GenerateSpec) -> list[tuple[str, dict[str, bytes]]]:
    return [(g.folder, dict(g.files)) for g in generate(s)]


def key(files: dict[str, bytes]) -> dict[str, object]:
    loaded: dict[str, object] = yaml.safe_load(files["answer.yml"])
    return loaded


def difficulty(files: dict[str, bytes]) -> int:
    return int(yaml.safe_load(files["scenario.yml"])["scenario_difficulty"])


# --- determinism -----------------------------------------------------------------------------------------------


def test_the_same_spec_gives_the_same_bytes() -> None:
    assert files_of(spec(seed=3, count=4)) == files_of(spec(seed=3, count=4))


def test_a_smaller_count_is_a_prefix() -> None:
    assert files_of(spec(seed=11, count=3)) == files_of(spec(seed=11, count=6))[:3]


def test_other_seeds_give_other_scenarios() -> None:
    a, b = files_of(spec(seed=1, count=2)), files_of(spec(seed=2, count=2))
    assert [f["aws_cloudwatch_metrics.json"] for _, f in a] != [f["aws_cloudwatch_metrics.json"] for _, f in b]


def test_files_are_canonical_json_and_folders_are_numbered() -> None:
    for i, (folder, files) in enumerate(files_of(spec(seed=5, count=4))):
        assert folder.startswith(f"{i:03d}-")
        assert sorted(files) == [
            "alert.json", "answer.yml", "aws_cloudwatch_metrics.json", "aws_performance_insights.json",
            "aws_rds_events.json", "aws_rds_postgresql_log.json", "scenario.yml",
        ]  # fmt: skip
        for name, data in files.items():
            assert data.endswith(b"\n")
            if name.endswith(".json"):
                parsed = json.loads(data)
                assert (
                    json.dumps(parsed, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
                    == data
                )


# --- the haystack ------------------------------------------------------------------------------------------------


def test_the_haystack_is_a_fleet_of_forty_plus_metrics_over_three_hours() -> None:
    (_, files), *_ = files_of(spec(seed=9, count=1))
    metrics = json.loads(files["aws_cloudwatch_metrics.json"])
    meta = yaml.safe_load(files["scenario.yml"])
    by_instance: dict[str, set[str]] = {}
    stats: dict[tuple[str, str], set[str]] = {}
    for s in metrics["metric_data_results"]:
        resource = s["dimensions"][0]["Value"]
        by_instance.setdefault(resource, set()).add(s["metric_name"])
        stats.setdefault((resource, s["metric_name"]), set()).add(s["stat"])
        assert len(s["values"]) == 180 and metrics["period"] == 60
    assert set(by_instance) == {meta["db_instance_identifier"], *meta["fleet"]} and len(meta["fleet"]) == 3
    assert min(len(m) for m in by_instance.values()) >= 40 or difficulty(files) == 3
    assert all({"Average", "Maximum", "Minimum"} <= s for s in stats.values())
    assert all("p99" in s for (_, name), s in stats.items() if name.endswith("Latency"))
    events = json.loads(files["aws_rds_events.json"])["events"]
    assert {e["source_identifier"] for e in events} - set(by_instance) == set()
    pi = json.loads(files["aws_performance_insights.json"])
    assert len(pi["top_sql"]) >= 6 and len(pi["db_load"]["values"]) == 180
    log = json.loads(files["aws_rds_postgresql_log.json"])["records"]
    assert sum("connection authorized" in r["message"] for r in log) > 20
    assert any(r["message"].startswith("checkpoint starting") for r in log)


def test_min_average_max_hold_at_every_point() -> None:
    for _, files in files_of(spec(seed=4, count=4)):
        groups: dict[tuple[str, str], dict[str, list[float]]] = {}
        for s in json.loads(files["aws_cloudwatch_metrics.json"])["metric_data_results"]:
            groups.setdefault((s["dimensions"][0]["Value"], s["metric_name"]), {})[s["stat"]] = s["values"]
        for g in groups.values():
            assert all(lo <= a <= hi for lo, a, hi in zip(g["Minimum"], g["Average"], g["Maximum"], strict=True))


# --- it loads and lints clean ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "s",
    [spec(seed=0, count=8), *(spec(seed=20 + d, count=4, difficulty=(d,)) for d in (1, 2, 3, 4))]
    + [spec(seed=40, count=3, faults=(f,), difficulty=(1, 2, 3)) for f in MODES],
    ids=lambda s: s.text(),
)
def test_every_generated_scenario_loads(s: GenerateSpec) -> None:
    pack = generated_pack(s)
    assert dict(pack.broken) == {}
    assert len(pack.scenarios) == s.count


def test_a_written_pack_lints_clean(tmp_path: Path) -> None:
    out = write_pack(tmp_path / "gen", spec(seed=77, count=8))
    ran = subprocess.run(
        [sys.executable, "-m", "sredrill", "scenarios", "lint", str(out)], capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "8 scenarios loaded, 0 errors, 0 warnings" in ran.stdout + ran.stderr


# --- the mix -----------------------------------------------------------------------------------------------------


def test_each_block_of_four_has_one_of_each_difficulty() -> None:
    levels = [difficulty(f) for _, f in files_of(spec(seed=13, count=12))]
    assert [sorted(levels[i : i + 4]) for i in range(0, 12, 4)] == [[1, 2, 3, 4]] * 3
    assert levels[:4] != levels[4:8] or levels[4:8] != levels[8:12]  # drawn per block, not one fixed order


def test_difficulty_and_faults_restrict_the_draw() -> None:
    got = files_of(spec(seed=8, count=6, difficulty=(2, 3), faults=("cpu_saturation", "storage_full")))
    assert Counter(difficulty(f) for _, f in got) == {2: 3, 3: 3}
    assert {m for _, f in got for m in key(f)["failure_modes"]} <= {"cpu_saturation", "storage_full", "healthy"}
    assert all(key(f)["failure_modes"] != ["healthy"] for _, f in got)


def test_aliases_are_accepted_and_nothing_to_draw_is_refused_up_front() -> None:
    got = files_of(spec(seed=8, count=2, difficulty=(1,), faults=("storage_exhaustion",)))
    assert all(key(f)["failure_modes"] == ["storage_full"] for _, f in got)
    with pytest.raises(InputError, match="difficulty 4 needs two faults"):
        GENERATOR.scenarios(spec(difficulty=(4,), faults=("failover",)))


def test_difficulty_four_has_two_faults_and_three_a_missing_or_recovered_case() -> None:
    for _, f in files_of(spec(seed=31, count=3, difficulty=(4,))):
        assert len(key(f)["failure_modes"]) == 2  # type: ignore[arg-type]
    for _, f in files_of(spec(seed=32, count=4, difficulty=(3,))):
        signals = yaml.safe_load(f["scenario.yml"])["adversarial_signals"]
        recovered = key(f)["failure_modes"] == ["healthy"]
        assert recovered or any("missing from the metrics" in s for s in signals)


# --- the confounder rule, measured on the written files ------------------------------------------------------


def averages(files: dict[str, bytes]) -> dict[tuple[str, str], list[float]]:
    data = json.loads(files["aws_cloudwatch_metrics.json"])["metric_data_results"]
    return {(s["dimensions"][0]["Value"], s["metric_name"]): s["values"] for s in data if s["stat"] == "Average"}


def score(series: dict[tuple[str, str], list[float]], resource: str, metric: str) -> float:
    values = series.get((resource, metric))
    return anomaly_score(values, FLOORS.get(metric, 0.0)) if values else 0.0


def test_from_difficulty_two_the_confounder_is_at_least_as_anomalous_as_the_cause() -> None:
    checked = 0
    for _, f in files_of(spec(seed=50, count=12, difficulty=(2, 3, 4))):
        k = key(f)
        modes = [m for m in k["failure_modes"] if m != "healthy"]  # type: ignore[attr-defined]
        if not modes:
            continue
        series = averages(f)
        cause = max(score(series, r, m) for mode in modes for r in k["location"] for m in FAULT_METRICS[mode])  # type: ignore[attr-defined]
        (mimic,) = k["ruled_out"]  # type: ignore[misc]
        resources = {s["resource"] for s in k["refuting"][mimic]}  # type: ignore[index]
        confounder = max(score(series, r, m) for r in resources for m in CONFOUNDER_METRICS[mimic])
        assert confounder >= cause > 0, (k["failure_modes"], mimic, confounder, cause)
        checked += 1
    assert checked >= 6


# --- the answer key ---------------------------------------------------------------------------------------------


def every_item(scenario: Scenario) -> dict[str, object]:
    return {i.id: i for i in server_factory(get_domain(scenario.domain))(scenario).items()}


def correct(scenario: Scenario) -> tuple[Diagnosis, dict[str, object]]:
    """The key's correct diagnosis, and as served only the items it cites (a run that asked for just those)."""
    every = every_item(scenario)
    diagnosis = grounded_diagnosis(scenario, every)  # type: ignore[arg-type]
    cited = {c.item for claim in diagnosis.claims for c in claim.citations}
    cited |= {c.item for r in diagnosis.ruled_out for c in r.citations}
    return diagnosis, {i: every[i] for i in sorted(cited)}


@pytest.fixture(scope="module")
def mixed() -> Pack:
    return generated_pack(spec(seed=60, count=16))


@pytest.mark.parametrize("axis", [1, 2])
def test_the_correct_diagnosis_passes_every_key(mixed: Pack, axis: int) -> None:
    failures = {}
    for scenario in mixed.scenarios:
        diagnosis, served = correct(scenario)
        grade = grade_diagnosis(
            scenario,
            diagnosis,
            trajectory(*sorted(RDS.trajectory_tools(scenario.answer.optimal_trajectory))),
            axis=axis,
            returned_metrics=set(scenario.answer.required_queries or ()),
            vocabulary=mixed.vocabulary,
            served=served,  # type: ignore[arg-type]
        )
        if not grade.passed:
            failures[scenario.folder] = grade.failure_reason
    assert failures == {}


def test_a_wrong_diagnosis_fails(mixed: Pack) -> None:
    scenario = next(s for s in mixed.scenarios if "healthy" not in s.failure_modes)
    diagnosis, served = correct(scenario)
    wrong = [m for m in FAULTS if m not in scenario.failure_modes][:1]
    grade = grade_diagnosis(
        scenario,
        diagnosis.model_copy(update={"failure_modes": wrong}),
        trajectory(*sorted(RDS.trajectory_tools(scenario.answer.optimal_trajectory))),
        axis=1,
        returned_metrics=set(scenario.answer.required_queries or ()),
        vocabulary=mixed.vocabulary,
        served=served,  # type: ignore[arg-type]
    )
    assert not grade.passed and (grade.failure_reason or "").startswith("failure_modes")


def test_the_key_follows_the_injected_faults(mixed: Pack) -> None:
    for scenario in mixed.scenarios:
        k = scenario.answer
        if scenario.failure_modes == ("healthy",) or list(scenario.failure_modes) == ["healthy"]:
            assert k.root_cause_category.value == "healthy" and not k.location
            continue
        assert k.location and set(k.decisive) == set(scenario.failure_modes)
        if scenario.metadata.scenario_difficulty >= 2:  # decisive items are records, never the mode's own series
            for selectors in k.decisive.values():
                assert all("metric" not in s.fields for s in selectors)
        assert scenario.metadata.failure_mode in scenario.failure_modes
