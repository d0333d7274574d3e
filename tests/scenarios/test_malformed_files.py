"""Malformed scenario files are load errors (so lint errors) naming file, field and fix (issue: hardening 1, 6, 8).

Each case writes a pack with two good scenarios around one bad one, as a user would on disk, then checks
both ways in: `load_pack` (the bad one is in `Pack.broken`, the others load) and `lint_pack` (one `load`
error naming the file, the field and the fix).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from sredrill.errors import PackError
from sredrill.scenarios import Severity, lint_pack, load_pack
from sredrill.scenarios.reading import MAX_FILE_BYTES
from tests.support.scenario_builder import (
    T0,
    N,
    answer,
    insights,
    metrics,
    scenario_yml,
    series,
    write_file,
    write_scenario,
    z,
)

BAD = "002-bad"


@pytest.fixture
def new_pack(tmp_path: Path) -> Callable[[], Path]:
    """A fresh empty pack folder named `drillpack` on each call (a test may try several bad files)."""
    made = iter(range(1000))

    def make() -> Path:
        root = tmp_path / f"case{next(made)}" / "drillpack"
        root.mkdir(parents=True)
        return root

    return make


def bad_pack(pack_dir: Path, files: dict[str, object | None] | None = None) -> PackError:
    """Two good scenarios and `002-bad`; returns the bad one's error after checking lint reports the same."""
    write_scenario(pack_dir, "001-good")
    write_scenario(pack_dir, BAD, files)
    write_scenario(pack_dir, "003-good")
    pack = load_pack(pack_dir)
    assert [s.folder for s in pack.scenarios] == ["001-good", "003-good"], pack.errors
    (error,) = pack.errors
    (finding,) = [f for f in lint_pack(pack) if f.severity is Severity.ERROR]
    assert (finding.rule, finding.path, finding.field) == ("load", error.path, error.field)
    assert finding.fix and "sredrill scenarios lint" in finding.fix
    assert error.render().encode("utf-8")  # printable: no lone surrogate in the message
    return error


def raw_metrics(text_of_values: str) -> str:
    """The metrics file as JSON text, with the first series' values replaced by `text_of_values` verbatim."""
    doc = json.dumps(metrics())
    first = json.dumps(metrics()["metric_data_results"][0]["values"])  # type: ignore[index]
    return doc.replace(first, text_of_values, 1)


# --- item 1: text that is not Unicode -------------------------------------------------------------------------


def test_a_lone_surrogate_in_a_json_string_names_its_field(pack_dir: Path) -> None:
    alert = {"title": "x", "state": "alerting", "alert_source": "cw", "commonAnnotations": {"summary": "disk @"}}
    alert_text = json.dumps(alert).replace("@", "\\ud800")  # the JSON escape, as a file would hold it
    error = bad_pack(pack_dir, {"alert.json": alert_text})
    assert (error.path, error.field) == (f"drillpack/{BAD}/alert.json", "commonAnnotations.summary")
    assert "lone surrogate" in error.message and "surrogate pair" in (error.hint or "")


def test_a_lone_surrogate_in_a_key_and_in_a_metrics_label(pack_dir: Path, new_pack: Callable[[], Path]) -> None:
    labelled = json.dumps(metrics()).replace('"label": "CPUUtilization"', '"label": "cpu \\udfff"')
    error = bad_pack(pack_dir, {"aws_cloudwatch_metrics.json": labelled})
    assert error.path == f"drillpack/{BAD}/aws_cloudwatch_metrics.json"
    assert error.field == "metric_data_results[0].label"
    keyed = json.dumps({"title": "x", "state": "s", "alert_source": "a", "extra": {"k@": 1}}).replace("@", "\\ud801")
    error = bad_pack(new_pack(), {"alert.json": keyed})
    assert error.field == "extra.k\ufffd" and "the key holds a lone surrogate" in error.message


def test_a_surrogate_escape_in_yaml_is_invalid_yaml_with_its_position(pack_dir: Path) -> None:
    text = Path(write_scenario(pack_dir.parent / "spare", "001-x") / "answer.yml").read_text()
    error = bad_pack(pack_dir, {"answer.yml": text + 'ruling_out_keywords: ["\\ud800"]\n'})
    assert error.path == f"drillpack/{BAD}/answer.yml" and error.field and error.field.startswith("line ")
    assert "escape" in error.message and "\\ud800-\\udfff" in (error.hint or "")


# --- item 8: malformed telemetry ------------------------------------------------------------------------------


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_values_are_errors(pack_dir: Path, literal: str) -> None:
    values = ", ".join(["1.0"] * 3 + [literal] + ["1.0"] * (N - 4))
    error = bad_pack(pack_dir, {"aws_cloudwatch_metrics.json": raw_metrics(f"[{values}]")})
    assert (error.path, error.field) == (
        f"drillpack/{BAD}/aws_cloudwatch_metrics.json",
        "metric_data_results[0].values[3]",
    )
    assert "not a finite number" in error.message and "leave the point out" in (error.hint or "")


def test_nan_as_a_string_and_as_yaml_are_errors(pack_dir: Path, new_pack: Callable[[], Path]) -> None:
    values: list[object] = [1.0] * N
    values[2] = "NaN"
    nan_text = metrics(series("CPUUtilization", "Percent", values))  # type: ignore[arg-type]
    error = bad_pack(pack_dir, {"aws_cloudwatch_metrics.json": nan_text})
    assert error.field == "metric_data_results[0].values[2]" and "not a finite number" in error.message
    pack_dir = new_pack()
    text = Path(write_scenario(pack_dir.parent / "spare", "001-x") / "answer.yml").read_text()
    error = bad_pack(
        pack_dir, {"answer.yml": text.replace("max_investigation_loops: 1", "max_investigation_loops: .inf")}
    )
    assert (error.path, error.field) == (f"drillpack/{BAD}/answer.yml", "max_investigation_loops")


def test_performance_insights_nan_is_an_error(pack_dir: Path) -> None:
    pi = json.dumps(insights()).replace('"db_load_avg": 0.6', '"db_load_avg": NaN', 1)
    error = bad_pack(pack_dir, {"aws_performance_insights.json": pi})
    assert error.field == "top_sql[0].db_load_avg"


def test_an_empty_series_is_an_error(pack_dir: Path) -> None:
    empty = metrics(series("CPUUtilization", "Percent", []), series("DatabaseConnections", "Count"))
    error = bad_pack(pack_dir, {"aws_cloudwatch_metrics.json": empty})
    assert error.field == "metric_data_results[0].timestamps" and "no points" in error.message


def test_an_empty_db_load_is_an_error(pack_dir: Path) -> None:
    error = bad_pack(pack_dir, {"aws_performance_insights.json": insights(db_load={"timestamps": [], "values": []})})
    assert error.field == "db_load.timestamps" and "no points" in error.message


def test_duplicate_and_out_of_order_timestamps_are_errors(pack_dir: Path, new_pack: Callable[[], Path]) -> None:
    dup = series("CPUUtilization", "Percent")
    dup["timestamps"][5] = dup["timestamps"][4]  # type: ignore[index]
    error = bad_pack(pack_dir, {"aws_cloudwatch_metrics.json": metrics(dup)})
    assert error.field == "metric_data_results[0].timestamps"
    assert error.message.startswith("timestamps[5] ") and "repeats timestamps[4]" in error.message

    pack_dir = new_pack()
    shuffled = series("CPUUtilization", "Percent")
    ts = shuffled["timestamps"]
    ts[6], ts[7] = ts[7], ts[6]  # type: ignore[index]
    error = bad_pack(pack_dir, {"aws_cloudwatch_metrics.json": metrics(shuffled)})
    assert "breaks the ascending order" in error.message and "sort the points" in error.message


def test_descending_timestamps_load_as_getmetricdata_returns_them(pack_dir: Path) -> None:
    newest_first = series("CPUUtilization", "Percent")
    newest_first["timestamps"] = list(reversed(newest_first["timestamps"]))  # type: ignore[call-overload]
    write_scenario(pack_dir, "001-desc", {"aws_cloudwatch_metrics.json": metrics(newest_first)})
    pack = load_pack(pack_dir)
    assert pack.errors == () and [f for f in lint_pack(pack) if f.severity is Severity.ERROR] == []


def test_a_base_loop_and_a_chained_base_are_errors(pack_dir: Path) -> None:
    write_scenario(pack_dir, "001-a", {"scenario.yml": scenario_yml("001-a", base="002-b")})
    write_scenario(pack_dir, "002-b", {"scenario.yml": scenario_yml("002-b", base="001-a")})
    write_scenario(pack_dir, "003-good")
    pack = load_pack(pack_dir)
    assert [s.folder for s in pack.scenarios] == ["003-good"]
    error = pack.broken["001-a"]
    assert (error.path, error.field) == ("drillpack/001-a/scenario.yml", "base")
    assert "base loop: 001-a extends 002-b, which extends 001-a" in error.message
    assert len([f for f in lint_pack(pack) if f.rule == "load"]) == 2


def test_a_symlink_out_of_the_pack_is_an_error(pack_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.json"
    write_file(outside, metrics())
    write_scenario(pack_dir, "001-good")
    write_scenario(pack_dir, BAD, {"aws_cloudwatch_metrics.json": None})
    (pack_dir / BAD / "aws_cloudwatch_metrics.json").symlink_to(outside)
    write_scenario(pack_dir, "003-good")
    pack = load_pack(pack_dir)
    error = pack.broken[BAD]
    assert error.path == f"drillpack/{BAD}/aws_cloudwatch_metrics.json" and "leads out of the pack" in error.message
    assert "copy the file into the pack" in (error.hint or "")
    assert [f.path for f in lint_pack(pack) if f.rule == "load"] == [error.path]


def test_a_scenario_folder_linked_from_outside_is_an_error_and_a_link_inside_is_fine(
    pack_dir: Path, tmp_path: Path
) -> None:
    write_scenario(tmp_path / "elsewhere", "004-far")
    write_scenario(pack_dir, "001-good")
    (pack_dir / "004-far").symlink_to(tmp_path / "elsewhere" / "004-far")
    write_scenario(pack_dir, "002-twin", {"alert.json": None})
    (pack_dir / "002-twin" / "alert.json").symlink_to(pack_dir / "001-good" / "alert.json")
    pack = load_pack(pack_dir)
    assert [s.folder for s in pack.scenarios] == ["001-good", "002-twin"]
    assert pack.broken["004-far"].path == "drillpack/004-far/scenario.yml"


def test_a_symlink_loop_is_an_error(pack_dir: Path) -> None:
    write_scenario(pack_dir, "001-good")
    write_scenario(pack_dir, BAD, {"alert.json": None})
    loop = pack_dir / BAD / "alert.json"
    os.symlink(loop, loop)
    pack = load_pack(pack_dir)
    assert BAD in pack.broken and pack.broken[BAD].path == f"drillpack/{BAD}/alert.json"


def test_a_file_over_the_size_cap_is_an_error_before_it_is_read(pack_dir: Path) -> None:
    write_scenario(pack_dir, "001-good")
    write_scenario(pack_dir, BAD)
    with (pack_dir / BAD / "aws_rds_events.json").open("r+b") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: no 50 MiB written to disk
    write_scenario(pack_dir, "003-good")
    pack = load_pack(pack_dir)
    error = pack.broken[BAD]
    assert error.path == f"drillpack/{BAD}/aws_rds_events.json"
    assert "over the cap of 50 MiB per pack file" in error.message


# --- hostile shapes: nesting, aliases, huge numbers -------------------------------------------------------------


def test_deep_nesting_is_an_error_at_any_depth(new_pack: Callable[[], Path]) -> None:
    for depth, needle in ((100, "nested more than 64 levels deep"), (100_000, "nested too deeply to read")):
        pack_dir = new_pack()
        deep = '{"title": "x", "state": "s", "alert_source": "a", "extra": ' + "[" * depth + "]" * depth + "}"
        error = bad_pack(pack_dir, {"alert.json": deep})
        assert error.path == f"drillpack/{BAD}/alert.json" and needle in error.message


def test_yaml_aliases_that_expand_a_small_file_are_an_error(pack_dir: Path) -> None:
    laughs = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    laughs += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    text = "\n".join(laughs) + "\n"
    error = bad_pack(pack_dir, {"answer.yml": text})
    assert "YAML aliases expand the file" in error.message and "&name" in (error.hint or "")


def test_a_small_alias_is_fine(pack_dir: Path) -> None:
    text = Path(write_scenario(pack_dir.parent / "spare", "001-x") / "answer.yml").read_text()
    text = text.replace("required_keywords:\n- normal", "required_keywords: &words\n- normal")
    write_scenario(pack_dir, "001-aliased", {"answer.yml": text + "ruling_out_keywords: *words\n"})
    assert load_pack(pack_dir).errors == ()


def test_a_number_of_thousands_of_digits_is_an_error(pack_dir: Path) -> None:
    error = bad_pack(pack_dir, {"aws_cloudwatch_metrics.json": raw_metrics("[" + "9" * 5000 + "]")})
    assert error.path == f"drillpack/{BAD}/aws_cloudwatch_metrics.json" and "invalid JSON" in error.message


def test_the_checks_keep_a_large_valid_file_loading(pack_dir: Path) -> None:
    n = 200_000
    big = series("CPUUtilization", "Percent", [float(i % 97) for i in range(n)])
    big["timestamps"] = [z(T0 + timedelta(seconds=i)) for i in range(n)]
    write_scenario(pack_dir, "001-big", {"aws_cloudwatch_metrics.json": metrics(big)})
    write_scenario(pack_dir, "002-next", {"answer.yml": answer()})
    pack = load_pack(pack_dir)
    assert pack.errors == () and len(pack.scenarios[0].metrics[0].values) == n
