"""Resume, in process through the engine's API over a real SQLite store: a run interrupted after some results
(its task cancelled, as Ctrl-C does) keeps them; resuming it under the same run id runs only the rest, leaves
the stored results as they were, and ends with every test reported once. Both ways in: eval files
(`run_eval_files`, bodies in body workers) and packs (`run_packs`, bodies in this process).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from sredrill.engine import RunOptions, Settings, run_eval_files, run_packs
from sredrill.errors import InputError
from sredrill.results import RunReport, TestResult, TestStatus
from sredrill.store import Store
from tests.engine.test_in_process_harness import Heard, events, write_eval
from tests.support.scenario_builder import build_pack

# An agent that answers at once with a fixed Diagnosis (a CPU saturation: every calm scenario fails on it).
DIAGNOSE_AGENT = "py:tests.support.sample_agents:diagnose"


class StopAfter(Heard):
    """Cancels the run's task once `count` results have come in, as Ctrl-C does."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.count = count
        self.task: asyncio.Task[RunReport] | None = None

    def on_test_end(self, result: TestResult) -> None:
        super().on_test_end(result)
        if len(self.results) == self.count and self.task is not None:
            self.task.cancel()


async def interrupted(run: Callable[[Heard], Awaitable[RunReport]], *, after: int) -> str:
    """Start `run`, cancel it after `after` results, and return the id of the run it began."""
    heard = StopAfter(after)
    heard.task = asyncio.ensure_future(run(heard))
    with pytest.raises(asyncio.CancelledError):
        await heard.task
    assert len(heard.results) == after
    (run_id,) = heard.run_ids
    return run_id


def check_resumed(store: Store, run_id: str, report: RunReport, heard: Heard, kept: list[TestResult]) -> None:
    """The resumed run is the interrupted one, ran only what had no result, and kept the others untouched."""
    names = [r.name for r in report.results]
    assert report.run_id == run_id and heard.run_ids == [run_id]
    assert heard.started == names[len(kept) :]  # only the rest ran
    assert heard.totals == [len(names)] and report.summary.total == len(names) == len(set(names))
    after = {r.id: r for r in store.results(run_id)}
    for result in kept:
        assert after[result.id] == result  # as stored before the interruption, not run again
    record = store.get_run(run_id)
    assert record is not None and record.finished


EVALS = """
for i in range(5):
    @test(f"t{i}")
    async def _(test_info):
        log(f"ran {test_info.name}")
        expect(test_info.name).to_match(r"t\\d")
"""


async def test_an_interrupted_eval_file_run_resumes_under_its_id_running_only_the_rest(tmp_path: Path) -> None:
    path = write_eval(tmp_path, EVALS)
    store = Store(tmp_path / "sredrill.db")

    def start(listener: Heard, resume: str | None = None) -> Awaitable[RunReport]:
        return run_eval_files(
            [str(path)], settings=Settings(), options=RunOptions(), listener=listener, store=store, resume=resume
        )

    run_id = await interrupted(start, after=2)

    kept = store.results(run_id)
    assert [r.name for r in kept] == ["t0", "t1"]  # the test cut off mid-run is not stored as a result
    record = store.get_run(run_id)
    assert record is not None and not record.finished
    assert events(tmp_path) == ["ran t0", "ran t1"]

    heard = Heard()
    report = await start(heard, resume=run_id)

    check_resumed(store, run_id, report, heard, kept)
    assert all(r.status == TestStatus.PASSED for r in report.results)
    assert events(tmp_path) == [f"ran t{i}" for i in range(5)]  # each test ran once over both runs


async def test_an_interrupted_pack_run_resumes_under_its_id_running_only_the_rest(tmp_path: Path) -> None:
    pack = build_pack(tmp_path / "drill", {f"00{i}-calm-{i}": {} for i in range(1, 5)})
    store = Store(tmp_path / "sredrill.db")

    def start(listener: Heard, resume: str | None = None) -> Awaitable[RunReport]:
        settings = Settings(agent=DIAGNOSE_AGENT)
        return run_packs(
            [str(pack.root)], settings=settings, options=RunOptions(), listener=listener, store=store, resume=resume
        )

    run_id = await interrupted(start, after=2)
    kept = store.results(run_id)
    assert [r.id for r in kept] == ["drill/001-calm-1#1", "drill/002-calm-2#1"]

    heard = Heard()
    report = await start(heard, resume=run_id)

    check_resumed(store, run_id, report, heard, kept)
    assert [r.id for r in report.results] == [f"drill/00{i}-calm-{i}#1" for i in range(1, 5)]
    # graded as a fresh run grades them: a CPU diagnosis of a healthy database is wrong
    assert {(r.status, r.failure_reason) for r in report.results} == {
        (TestStatus.FAILED, "category: expected healthy, got resource_exhaustion")
    }


async def resume_eval_files(tmp_path: Path, run_id: str, store: Store | None) -> RunReport:
    path = write_eval(tmp_path, EVALS)
    return await run_eval_files(
        [str(path)], settings=Settings(), options=RunOptions(), listener=Heard(), store=store, resume=run_id
    )


async def resume_packs(tmp_path: Path, run_id: str, store: Store | None) -> RunReport:
    pack = build_pack(tmp_path / "drill", {"001-calm": {}})
    settings = Settings(agent=DIAGNOSE_AGENT)
    return await run_packs(
        [str(pack.root)], settings=settings, options=RunOptions(), listener=Heard(), store=store, resume=run_id
    )


RESUMERS = [
    pytest.param(resume_eval_files, id="eval_files"),
    pytest.param(resume_packs, id="packs"),
]


@pytest.mark.parametrize("resume", RESUMERS)
async def test_resuming_a_run_the_store_does_not_hold_is_an_input_error_naming_it(
    tmp_path: Path, resume: Callable[..., Awaitable[RunReport]]
) -> None:
    store = Store(tmp_path / "sredrill.db")
    with pytest.raises(InputError) as info:
        await resume(tmp_path, "20990101-000000-abcdef", store)
    assert str(info.value).startswith("no run '20990101-000000-abcdef' in the store")
    assert info.value.hint == "list runs with: sredrill runs list"
    assert store.list_runs() == []  # nothing was begun


@pytest.mark.parametrize("resume", RESUMERS)
async def test_resuming_without_a_store_says_resume_needs_one(
    tmp_path: Path, resume: Callable[..., Awaitable[RunReport]]
) -> None:
    with pytest.raises(InputError) as info:
        await resume(tmp_path, "20990101-000000-abcdef", None)
    assert "--resume needs the store (--db PATH)" in str(info.value)
