"""Lint's `dimension` rule and `scenario.yml: fleet`: series of declared instances lint clean, others still warn."""

from __future__ import annotations

from pathlib import Path

import pytest

from sredrill.scenarios import Finding, lint_pack, load_pack
from tests.support.scenario_builder import INSTANCE, REPLICA, alert, metrics, scenario_yml, series, write_scenario

FOLDER = "001-case"
OTHER = "ledger-pg-prod"


@pytest.fixture
def pack_dir(tmp_path: Path) -> Path:
    root = tmp_path / "drillpack"
    root.mkdir()
    return root


def dimension_fields(pack_dir: Path, **files: object) -> set[str]:
    write_scenario(pack_dir, FOLDER, {k.replace("__", "."): v for k, v in files.items()})
    findings: list[Finding] = lint_pack(load_pack(pack_dir))
    return {f.field for f in findings if f.rule == "dimension"}


FLEET_SERIES = metrics(
    series("CPUUtilization", "Percent", instance=INSTANCE),
    series("CPUUtilization", "Percent", instance=OTHER, id="m_other"),
    series("ReplicaLag", "Seconds", instance=REPLICA, id="m_lag"),
    series("CPUUtilization", "Percent", instance=REPLICA, id="m_replica_cpu"),
)


def test_series_of_a_declared_fleet_lint_clean(pack_dir: Path) -> None:
    assert (
        dimension_fields(
            pack_dir,
            scenario__yml=scenario_yml(FOLDER, fleet=[REPLICA, OTHER]),
            alert__json=alert(read_replica=REPLICA),
            aws_cloudwatch_metrics__json=FLEET_SERIES,
        )
        == set()
    )


def test_without_the_fleet_the_same_series_warn(pack_dir: Path) -> None:
    fields = dimension_fields(
        pack_dir, alert__json=alert(read_replica=REPLICA), aws_cloudwatch_metrics__json=FLEET_SERIES
    )
    assert fields == {"metric_data_results[1].dimensions", "metric_data_results[3].dimensions"}


def test_a_wrong_dimension_still_warns_beside_a_fleet(pack_dir: Path) -> None:
    fields = dimension_fields(
        pack_dir,
        scenario__yml=scenario_yml(FOLDER, fleet=[REPLICA, OTHER]),
        alert__json=alert(read_replica=REPLICA),
        aws_cloudwatch_metrics__json=metrics(
            series("CPUUtilization", "Percent", instance="typo-pg-prod"),
            series("ReplicaLag", "Seconds", instance=INSTANCE, id="m_lag_on_primary"),
        ),
    )
    assert fields == {"metric_data_results[0].dimensions", "metric_data_results[1].dimensions"}
