"""`sredrill scenarios list|show|lint`, driven through the typer sub-app (cli.py registers it)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from sredrill.cli_scenarios import scenarios_app
from tests.support.scenario_builder import answer, metrics, scenario_yml, series, write_scenario

runner = CliRunner()


def test_list_shows_the_builtin_scenarios() -> None:
    result = runner.invoke(scenarios_app, ["list", "--pack", "rds_postgres"])
    assert result.exit_code == 0, result.output
    header = result.stdout.splitlines()[0].split()
    assert header == ["id", "difficulty", "failure", "modes", "category", "axis2"]
    row = next(line for line in result.stdout.splitlines() if line.startswith("011-cpu-storage-compositional"))
    assert row.split() == [
        "011-cpu-storage-compositional",
        "4",
        "cpu_saturation,",
        "storage_full",
        "resource_exhaustion",
        "yes",
    ]
    assert "000-healthy" in result.stdout and result.stderr == ""


def test_list_marks_broken_scenarios_and_reports_them_on_stderr(pack_dir: Path) -> None:
    write_scenario(pack_dir, "001-fine")
    write_scenario(pack_dir, "002-bad", {"scenario.yml": scenario_yml("002-bad", scenario_difficulty=9)})
    result = runner.invoke(scenarios_app, ["list", "--pack", str(pack_dir)])
    assert result.exit_code == 0
    assert "001-fine" in result.stdout and "002-bad" in result.stdout and "does not load" in result.stdout
    assert result.stderr.startswith("error: drillpack/002-bad/scenario.yml: scenario_difficulty: 9 is not allowed")


def test_show_by_folder_and_by_pack_slash_folder() -> None:
    for args in (
        ["014-checkpoint-storm-cpu-saturation"],
        ["rds_postgres/014-checkpoint-storm-cpu-saturation"],
        ["rds_postgres/014-checkpoint-storm-cpu-saturation", "--pack", "rds_postgres"],
    ):
        result = runner.invoke(scenarios_app, ["show", *args])
        assert result.exit_code == 0, result.output
        out = result.stdout
        assert "rds_postgres/014-checkpoint-storm-cpu-saturation" in out
        assert "failure modes: checkpoint_io_storm" in out and "CheckpointLag" in out
        assert "VACUUM" in out and "required queries:" in out


def test_show_unknown_id_is_an_input_error_with_did_you_mean() -> None:
    result = runner.invoke(scenarios_app, ["show", "014-checkpoint-storm"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: no scenario '014-checkpoint-storm' in the built-in packs")
    assert "did you mean '014-checkpoint-storm-cpu-saturation'?" in result.stderr
    assert "Traceback" not in result.output


def test_lint_builtin_pack_is_clean() -> None:
    result = runner.invoke(scenarios_app, ["lint", "--pack", "rds_postgres"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().splitlines()[-1].endswith("0 errors, 0 warnings")


def test_lint_exits_1_on_errors_and_0_on_warnings_only(pack_dir: Path) -> None:
    write_scenario(
        pack_dir, "001-warn", {"aws_cloudwatch_metrics.json": metrics(series("WriteLatency", "Milliseconds"))}
    )
    result = runner.invoke(scenarios_app, ["lint", "--pack", str(pack_dir)])
    assert result.exit_code == 0, result.output
    assert "warning: drillpack/001-warn/aws_cloudwatch_metrics.json: metric_data_results[0].unit:" in result.stdout
    assert "1 scenarios loaded, 0 errors, 1 warnings" in result.stdout

    write_scenario(
        pack_dir,
        "002-contradiction",
        {
            "scenario.yml": scenario_yml("002-contradiction", failure_mode="cpu_saturation"),
            "answer.yml": answer(root_cause_category="resource_exhaustion", forbidden_categories=["cpu_saturation"]),
        },
    )
    result = runner.invoke(scenarios_app, ["lint", "--pack", str(pack_dir)])
    assert result.exit_code == 1
    assert (
        "error: drillpack/002-contradiction/answer.yml: forbidden_categories: cpu_saturation is both" in result.stdout
    )


def test_a_missing_pack_is_exit_2_with_one_error_line() -> None:
    result = runner.invoke(scenarios_app, ["lint", "--pack", "rds_postgress"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: rds_postgress: no pack 'rds_postgress'")
    assert "did you mean 'rds_postgres'?" in result.stderr and "Traceback" not in result.output


def test_importing_the_sub_app_loads_neither_pydantic_nor_the_scenarios() -> None:
    import subprocess
    import sys

    code = (
        "import sys, sredrill.cli_scenarios; print([m for m in ('pydantic', 'sredrill.scenarios') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
