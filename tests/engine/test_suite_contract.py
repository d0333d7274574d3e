"""The typed contract between the engine and the suites it generates (`harness.GeneratedCase`): a generated test
carries its case, its body returns the suite's outcome, the case decorates the result; the result kind and the
difficulty come from the case, never from a pack's or a file's name. In process, with `run_test` and the
engine's API."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sredrill.engine import RunOptions, Settings, run_eval_files, run_packs, run_test
from sredrill.engine.execute import errored_outcome
from sredrill.engine.incident_suite import IncidentCase, incident_tests
from sredrill.engine.rca import Axis, RcaCase, rca_tests
from sredrill.evidence import BackendMode
from sredrill.harness import JudgeConfig, Runtime, Scope, TestContext, TestDef
from sredrill.results import ResultKind, RunReport, TestResult, TestStatus
from sredrill.scenarios import load_pack
from tests.support.scenario_builder import build_pack


class Quiet:
    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: TestResult) -> None: ...
    def on_run_end(self, report: RunReport) -> None: ...


@dataclass
class Case:
    """A case of a made-up suite: it keeps every outcome it was handed."""

    kind: ResultKind = ResultKind.INCIDENT
    difficulty: int = 3
    seen: list[Any] = field(default_factory=list)

    def decorate(self, result: TestResult, outcome: float | None) -> TestResult:
        self.seen.append(outcome)
        return result.model_copy(update={"kind": self.kind, "score": outcome})


def generated(body: Any, case: Case | None, *, labels: tuple[str, ...] = ("difficulty:1",)) -> TestDef:
    return TestDef(
        id="suite/one", name="suite/one", file="suite", line=0, describe_path=(), labels=labels, timeout_s=30,
        prompt="p", context=(), skip_judge=True, description=None, body=body, fixtures={}, scope=Scope(name="suite"),
        content_hash="0", case=case,
    )  # fmt: skip


async def attempt(test: TestDef) -> TestResult:
    from sredrill.engine import HookState

    outcome = await run_test(test, Runtime(run_id="r", agent=None, judge=JudgeConfig(skip=True)), HookState([test]))
    return outcome.result


async def test_the_body_returns_the_outcome_and_the_case_decorates_the_result() -> None:
    async def body() -> float:
        return 0.75

    case = Case()
    result = await attempt(generated(body, case))
    assert case.seen == [0.75]
    assert (result.kind, result.score, result.status) == (ResultKind.INCIDENT, 0.75, TestStatus.PASSED)
    assert result.difficulty == 3  # the case's, an int, not the `difficulty:1` label's


async def test_a_body_that_raises_leaves_no_outcome_and_keeps_its_kind() -> None:
    async def body() -> float:
        raise RuntimeError("the agent fell over")

    case = Case(kind=ResultKind.RCA)
    result = await attempt(generated(body, case))
    assert case.seen == [None]
    assert result.status == TestStatus.ERRORED and result.kind == ResultKind.RCA
    assert "fell over" in (result.failure_reason or "")
    # A test the engine could not run at all (a dead worker, an escaped BaseException) keeps its kind too.
    lost = errored_outcome(generated(body, case), "lost", duration_ms=1.0).result
    assert lost.kind == ResultKind.RCA and case.seen == [None, None]


async def test_a_test_without_a_case_is_a_test_and_its_return_value_is_ignored() -> None:
    async def body() -> str:
        return "not an outcome"

    result = await attempt(generated(body, None))
    assert result.kind == ResultKind.TEST and result.difficulty == 1 and result.score is None


def test_no_string_keyed_bag_is_left_on_the_context_or_the_runtime() -> None:
    assert "extra" not in {f.name for f in dataclasses.fields(TestContext)}
    assert not {"alert", "toolset"} & {f.name for f in dataclasses.fields(Runtime)}


def test_generated_tests_carry_their_cases_with_int_difficulties() -> None:
    pack = load_pack("rds_postgres")
    axis = Axis(2, BackendMode.SELECTIVE)
    for test in rca_tests([pack], [axis], scenario_ids=["001-replication-lag", "000-healthy"]):
        assert isinstance(test.case, RcaCase) and test.case.axis == axis
        assert test.difficulty == test.case.scenario.difficulty and isinstance(test.difficulty, int)
    (episode,) = [t for t in incident_tests() if t.id == "incidents/hard_mixed#seed0"]
    assert isinstance(episode.case, IncidentCase) and episode.case.seed == 0
    assert episode.difficulty == episode.case.task.difficulty == 3


def test_a_users_pack_named_incidents_is_graded_as_rca_scenarios(tmp_path: Path) -> None:
    pack = build_pack(tmp_path / "incidents", {"001-calm": {}})
    assert pack.name == "incidents"  # the built-in incidents pack's name: a name no longer decides anything
    from sredrill.engine import run_sync

    report = run_sync(
        run_packs([str(tmp_path / "incidents")], settings=Settings(agent="keyword"), options=RunOptions(),
                  listener=Quiet(), store=None)
    )  # fmt: skip
    (result,) = report.results
    assert result.id == "incidents/001-calm#1"
    assert (result.kind, result.axis, result.mode) == (ResultKind.RCA, 1, "full")
    assert result.checks and result.expected is not None  # graded on the answer key, with every check
    assert report.summary.rca is not None and report.summary.incident is None


@pytest.mark.parametrize("folder", ["incidents", "evals"])
async def test_an_eval_file_named_incidents_is_a_test(tmp_path: Path, folder: str) -> None:
    path = tmp_path / folder / "incidents_eval.py"
    path.parent.mkdir()
    path.write_text(
        "from sredrill import expect, test\n\n@test('incidents', labels=['difficulty:2'])\n"
        "async def _(test_info):\n    expect(1).to_be(1)\n"
    )
    report = await run_eval_files([str(path)], settings=Settings(), options=RunOptions(), listener=Quiet(), store=None)
    (result,) = report.results
    assert (result.kind, result.status, result.difficulty) == (ResultKind.TEST, TestStatus.PASSED, 2)
