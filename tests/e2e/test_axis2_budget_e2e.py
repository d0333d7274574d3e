"""Axis 2 measures choosing, temporal measures deciding (issue 18, points 3 and 4), through the CLI.

On the built-in RDS pack the enumerating agent (every series first, then the reference agent's reasoning) passes
Axis 1 wherever the reference agent does and fails Axis 2 on the data budget, so the gap moves; the reference
agent, which queries what its hypotheses read, stays within the budget. Under `temporal` only `wait` brings the
data after the alert, and the minutes waited cost in the efficiency score.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from .conftest import Project

_USED = re.compile(r"served (\d+) distinct series points; budget (\d+)")


def _results(project: Project, *args: str) -> list[dict[str, Any]]:
    cli = project.run("run", "--pack", "rds_postgres", *args, "--json")
    assert cli.code in (0, 1), cli.stderr
    results: list[dict[str, Any]] = json.loads(cli.stdout)["results"]
    return results


def _scenario(result: dict[str, Any]) -> str:
    """The scenario a result is of (its id without the axis suffix)."""
    return str(result["id"]).rsplit("#", 1)[0]


def _budget(result: dict[str, Any]) -> tuple[int, int]:
    found = _USED.search(result["checks"]["data_budget"]["detail"])
    assert found, result["checks"]["data_budget"]
    return int(found[1]), int(found[2])


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    project = Project(tmp_path_factory.mktemp("axis2"))
    runs = {agent: _results(project, "--agent", agent, "--axis2") for agent in ("reference", "redteam:enumerator")}
    runs["temporal"] = _results(project, "--agent", "reference", "--mode", "temporal")
    runs["temporal enumerator"] = _results(project, "--agent", "redteam:enumerator", "--mode", "temporal")
    return runs


def test_the_enumerator_passes_axis_1_and_fails_axis_2_on_the_budget(runs: dict[str, list[dict[str, Any]]]) -> None:
    results = runs["redteam:enumerator"]
    axis1 = [r for r in results if r["axis"] == 1]
    axis2 = [r for r in results if r["axis"] == 2]
    assert len(axis1) == len(axis2) == 18
    reference_axis1 = {_scenario(r): r["status"] for r in runs["reference"] if r["axis"] == 1}
    assert {_scenario(r): r["status"] for r in axis1} == reference_axis1
    for r in axis2:
        assert r["status"] == "failed" and r["failure_reason"].startswith("data_budget: over the data budget"), r
        used, budget = _budget(r)
        assert used > budget
        assert "data_budget" not in (next(a for a in axis1 if _scenario(a) == _scenario(r))["checks"])


def test_the_reference_agent_stays_within_the_budget(runs: dict[str, list[dict[str, Any]]]) -> None:
    enumerated = {_scenario(r): _budget(r)[0] for r in runs["redteam:enumerator"] if r["axis"] == 2}
    for r in runs["reference"]:
        if r["axis"] == 2:
            assert r["checks"]["data_budget"]["passed"], r["checks"]["data_budget"]
            used, budget = _budget(r)
            assert used <= budget and used < enumerated[_scenario(r)]


def test_the_gap_moves(runs: dict[str, list[dict[str, Any]]]) -> None:
    def gap(results: list[dict[str, Any]]) -> float:
        rate = {a: sum(r["status"] == "passed" for r in results if r["axis"] == a) / 18 for a in (1, 2)}
        return rate[1] - rate[2]

    assert gap(runs["redteam:enumerator"]) > gap(runs["reference"])


def test_under_temporal_the_reference_waits_and_waiting_costs(runs: dict[str, list[dict[str, Any]]]) -> None:
    results = runs["temporal"]
    assert results and all(r["mode"] == "temporal" for r in results)
    waited = [r for r in results if "wait" in r["trajectory"]["tool_calls"]]
    assert waited, "the evidence ends at the alert: the reference agent waits before its second look"
    for r in waited:
        assert r["trajectory"]["efficiency_score"] < 1.0
    assert sum(r["status"] == "passed" for r in results) == len(results)


def test_under_temporal_enumerating_brings_no_later_data(runs: dict[str, list[dict[str, Any]]]) -> None:
    # Reading everything at the alert sees only what the reference agent sees there: the later data comes only
    # with its wait, so both conclude the same, and the enumerator pays the same wait.
    reference = {_scenario(r): r for r in runs["temporal"]}
    assert len(runs["temporal enumerator"]) == len(reference) == 18
    for r in runs["temporal enumerator"]:
        same = reference[_scenario(r)]
        assert r["status"] == same["status"] and r["actual"]["failure_modes"] == same["actual"]["failure_modes"]
        assert r["trajectory"]["tool_calls"].count("wait") == same["trajectory"]["tool_calls"].count("wait") == 1
