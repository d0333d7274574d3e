"""The SQLite store on real files: durability per result, concurrency, resume, compare, judge cache, errors."""

from __future__ import annotations

import json
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sredrill.errors import InputError, StateError
from sredrill.results import SCHEMA_VERSION, RunReport, SignalRole, TestResult, TestStatus, Verdict, summarize
from sredrill.store import DEFAULT_DB_PATH, RunRecord, Store

T0 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def result(test_id: str, status: TestStatus = TestStatus.PASSED, **kw: object) -> TestResult:
    return TestResult(id=test_id, name=test_id, status=status, duration_ms=12.5, **kw)


def report_of(run_id: str, results: list[TestResult], **kw: object) -> RunReport:
    return RunReport(
        run_id=run_id,
        agent="reference",
        mode="full",
        started_at=T0,
        duration_ms=1234.0,
        summary=summarize(results),
        results=results,
        **kw,
    )


def begin(store: Store, run_id: str, started_at: datetime = T0, **config: object) -> None:
    store.begin_run(run_id, kind="run", agent="reference", mode="full", started_at=started_at, config=dict(config))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "runs" / "sredrill.db"


def test_a_run_round_trips_through_a_real_file(db: Path) -> None:
    steps = [{"kind": "user", "content": "why?", "t_ms": 0.0}, {"kind": "response", "content": "disk"}]
    results = [
        result("a", difficulty=1),
        result("b", TestStatus.FAILED, difficulty=2, failure_reason="category"),
        result("c", TestStatus.ERRORED, failure_reason="agent crashed"),
    ]
    with Store(db) as store:
        begin(store, "run-1", packs=["rds_postgres"], jobs=4)
        for r in results:
            store.write_result("run-1", r, steps if r.id == "a" else None)
        report = report_of("run-1", results)
        store.finish_run("run-1", report)

        assert store.report("run-1") == report
        assert store.results("run-1") == results
        assert store.trajectory("run-1", "a") == steps
        assert store.trajectory("run-1", "b") is None
        record = store.get_run("run-1")
    assert record == RunRecord(
        run_id="run-1",
        kind="run",
        agent="reference",
        mode="full",
        started_at=T0,
        finished=True,
        duration_ms=1234.0,
        config={"packs": ["rds_postgres"], "jobs": 4},
        summary=report.summary,
        counts=record.counts,
    )
    assert (record.counts.total, record.counts.passed, record.counts.failed, record.counts.errored) == (
        3,
        1,
        1,
        1,
    )


def test_the_database_is_in_wal_mode_with_a_schema_version(db: Path) -> None:
    Store(db).close()
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] >= 1
    finally:
        conn.close()


def test_the_default_path_is_created_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with Store() as store:
        begin(store, "r")
    assert (tmp_path / DEFAULT_DB_PATH).is_file()


def test_each_write_is_visible_to_another_store_at_once(db: Path) -> None:
    writer = Store(db)
    reader = Store(db)  # stands for another process: its own connection to the same file
    try:
        begin(writer, "r1")
        writer.write_result("r1", result("t1"), [{"kind": "response", "content": "x"}])
        assert reader.completed_ids("r1") == {"t1"}
        assert reader.trajectory("r1", "t1") == [{"kind": "response", "content": "x"}]
        record = reader.get_run("r1")
        assert record is not None and not record.finished and record.summary is None
    finally:
        writer.close()
        reader.close()


def test_concurrent_writes_from_many_threads_lose_nothing(db: Path) -> None:
    threads, per_thread = 16, 50
    with Store(db) as store:
        begin(store, "busy")
        start = threading.Barrier(threads)

        def write_many(t: int) -> None:
            start.wait()
            for i in range(per_thread):
                status = TestStatus.PASSED if i % 2 else TestStatus.FAILED
                store.write_result("busy", result(f"t{t}-{i}", status), [{"kind": "response", "content": ""}])
                store.judge_cache_get(f"k{t}-{i}")

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(write_many, range(threads)))

    with Store(db) as again:
        assert len(again.completed_ids("busy")) == threads * per_thread
        assert len(again.results("busy")) == threads * per_thread
        record = again.get_run("busy")
        assert record is not None
        assert (record.counts.passed, record.counts.failed) == (400, 400)


def test_an_interrupted_run_keeps_its_results_and_resumes(db: Path) -> None:
    store = Store(db)
    begin(store, "r", repeat=1, packs=["rds_postgres"])
    store.write_result("r", result("s1", difficulty=1), None)
    store.write_result("r", result("s2", TestStatus.FAILED, difficulty=2), None)
    store.close()  # the process dies here: no finish_run

    with Store(db) as store:
        assert store.completed_ids("r") == {"s1", "s2"}
        record = store.get_run("r")
        assert record is not None and not record.finished and record.duration_ms is None
        assert record.config == {"repeat": 1, "packs": ["rds_postgres"]}
        rebuilt = store.report("r")
        assert rebuilt is not None
        assert [r.id for r in rebuilt.results] == ["s1", "s2"]
        assert rebuilt.summary == summarize(rebuilt.results)
        assert rebuilt.duration_ms >= 0

        # --resume: the run is begun again with its stored config, and only the rest runs.
        begin(store, "r", started_at=T0 + timedelta(hours=1), **record.config)
        store.write_result("r", result("s3"), None)
        final = report_of("r", store.results("r"))
        store.finish_run("r", final)
        assert store.get_run("r").started_at == T0  # type: ignore[union-attr]
        assert [r.id for r in store.report("r").results] == ["s1", "s2", "s3"]  # type: ignore[union-attr]


def test_writing_a_result_again_replaces_it_in_place(db: Path) -> None:
    with Store(db) as store:
        begin(store, "r")
        store.write_result("r", result("a", TestStatus.ERRORED), [{"kind": "response", "content": "1"}])
        store.write_result("r", result("b"), None)
        store.write_result("r", result("a"), None)
        assert [(r.id, r.status) for r in store.results("r")] == [
            ("a", TestStatus.PASSED),
            ("b", TestStatus.PASSED),
        ]
        assert store.trajectory("r", "a") is None


def test_finish_run_folds_in_results_that_were_never_written(db: Path) -> None:
    with Store(db) as store:
        begin(store, "r")
        store.write_result("r", result("a"), [{"kind": "response", "content": "kept"}])
        store.finish_run("r", report_of("r", [result("a"), result("b", TestStatus.FAILED)]))
        assert [r.id for r in store.results("r")] == ["a", "b"]
        assert store.trajectory("r", "a") == [{"kind": "response", "content": "kept"}]


def test_writes_need_a_begun_run_and_an_open_store(db: Path) -> None:
    store = Store(db)
    with pytest.raises(StateError, match="begin_run"):
        store.write_result("nope", result("a"), None)
    with pytest.raises(StateError, match="begin_run"):
        store.finish_run("nope", report_of("nope", []))
    store.close()
    store.close()
    with pytest.raises(StateError, match="closed"):
        store.results("nope")


def test_unknown_runs_read_as_nothing(db: Path) -> None:
    with Store(db) as store:
        assert store.get_run("x") is None
        assert store.report("x") is None
        assert store.results("x") == []
        assert store.completed_ids("x") == set()
        assert store.trajectory("x", "t") is None


def test_list_runs_is_newest_first(db: Path) -> None:
    with Store(db) as store:
        for i in range(5):
            begin(store, f"run-{i}", started_at=T0 + timedelta(minutes=i))
        assert [r.run_id for r in store.list_runs()] == ["run-4", "run-3", "run-2", "run-1", "run-0"]
        assert [r.run_id for r in store.list_runs(limit=2)] == ["run-4", "run-3"]


def test_resolve_run_takes_ids_prefixes_and_latest(db: Path) -> None:
    with Store(db) as store:
        with pytest.raises(InputError, match="no run is stored yet"):
            store.resolve_run("latest")
        begin(store, "20250102-abc123", started_at=T0)
        begin(store, "20250102-abd456", started_at=T0 + timedelta(minutes=1))
        begin(store, "20250103-xyz789", started_at=T0 + timedelta(minutes=2))
        assert store.resolve_run("20250102-abc123") == "20250102-abc123"
        assert store.resolve_run("20250102-abc") == "20250102-abc123"
        assert store.resolve_run("20250103") == "20250103-xyz789"
        assert store.resolve_run("latest") == "20250103-xyz789"

        with pytest.raises(InputError, match="ambiguous") as ambiguous:
            store.resolve_run("20250102-ab")
        assert set(ambiguous.value.allowed or []) == {"20250102-abc123", "20250102-abd456"}

        with pytest.raises(InputError, match="unknown run") as unknown:
            store.resolve_run("20250103-xyz788")
        assert "did you mean '20250103-xyz789'?" in str(unknown.value)
        assert "latest" in (unknown.value.allowed or [])
        assert unknown.value.path == str(db)

        with pytest.raises(InputError, match="unknown run"):
            store.resolve_run("")


def test_compare_lists_what_changed(db: Path) -> None:
    with Store(db) as store:
        a = [
            result("same"),
            result("fixed", TestStatus.FAILED),
            result("unerrored", TestStatus.ERRORED),
            result("broke"),
            result("gone"),
        ]
        b = [
            result("same"),
            result("fixed"),
            result("unerrored"),
            result("broke", TestStatus.ERRORED),
            result("new", TestStatus.FAILED),
        ]
        begin(store, "run-a", started_at=T0)
        begin(store, "run-b", started_at=T0 + timedelta(minutes=1))
        for r in a:
            store.write_result("run-a", r, None)
        store.finish_run("run-a", report_of("run-a", a))
        for r in b:
            store.write_result("run-b", r, None)  # run B is still going: compared from its results

        diff = store.compare("run-a", "latest")
    assert (diff.run_a, diff.run_b) == ("run-a", "run-b")
    assert diff.fixed == ("fixed", "unerrored")
    assert diff.regressed == ("broke",)
    assert diff.new == ("new",)
    assert diff.gone == ("gone",)
    assert diff.unchanged == 1
    assert (diff.paired.shared, diff.paired.b, diff.paired.c) == (4, 2, 1)
    assert [t.test_id for t in diff.tests] == ["same", "fixed", "unerrored", "broke", "gone", "new"]
    assert [t.test_id for t in diff.changed] == ["fixed", "unerrored", "broke", "gone", "new"]
    gone = next(t for t in diff.tests if t.test_id == "gone")
    assert (gone.status_a, gone.status_b, gone.changed) == (TestStatus.PASSED, None, True)
    assert diff.pass_rate_a == pytest.approx(3 / 4)
    assert diff.pass_rate_b == pytest.approx(3 / 4)


def test_the_judge_cache_persists_across_stores(db: Path) -> None:
    verdict = Verdict(passed=True, score=0.9, reasoning="names the database", role=SignalRole.GATE)
    with Store(db) as first:
        assert first.judge_cache_get("k1") is None
        first.judge_cache_put("k1", verdict)
    with Store(db) as second:
        cached = second.judge_cache_get("k1")
        assert cached == verdict.model_copy(update={"cached": True})
        second.judge_cache_put("k1", Verdict(passed=False, reasoning="changed"))
        assert second.judge_cache_get("k1").passed is False  # type: ignore[union-attr]


def test_a_corrupt_file_is_an_input_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "notes.db"
    bad.write_bytes(b"this is not a database, just some text that is long enough " * 50)
    with pytest.raises(InputError) as caught:
        Store(bad)
    message = str(caught.value)
    assert str(bad) in message and "--db" in message


def test_another_programs_database_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE runs (x)")
    conn.commit()
    conn.close()
    with pytest.raises(InputError, match="another program"):
        Store(other)


def test_a_newer_schema_is_refused(db: Path) -> None:
    Store(db).close()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA user_version = 999")
    conn.commit()
    conn.close()
    with pytest.raises(InputError, match="newer"):
        Store(db)


def _rca(test_id: str, status: TestStatus, axis: int, difficulty: int) -> TestResult:
    return result(
        test_id, status, kind="rca", axis=axis, difficulty=difficulty, mode="full" if axis == 1 else "selective"
    )


def test_list_counts_are_the_summarys_top_level_and_compare_names_each_rate(db: Path) -> None:
    a = [_rca("p/0#1", TestStatus.PASSED, 1, 1), _rca("p/0#2", TestStatus.FAILED, 2, 1),
         result("incidents/e#seed0", TestStatus.PASSED, kind="incident", difficulty=1)]  # fmt: skip
    b = [_rca("p/0#1", TestStatus.PASSED, 1, 1), result("incidents/e#seed0", TestStatus.FAILED, kind="incident")]
    with Store(db) as store:
        for run_id, results, minute in (("run-a", a, 0), ("run-b", b, 1)):
            begin(store, run_id, started_at=T0 + timedelta(minutes=minute))
            for r in results:
                store.write_result(run_id, r, None)
            store.finish_run(run_id, report_of(run_id, results))
        records = {r.run_id: r for r in store.list_runs()}
        diff = store.compare("run-a", "run-b")
    for run_id, results in (("run-a", a), ("run-b", b)):
        record, summary = records[run_id], summarize(results)
        assert record.summary == summary
        assert (record.counts.total, record.counts.passed, record.counts.failed) == (
            summary.total, summary.passed, summary.failed,
        )  # fmt: skip
        assert record.counts.pass_rate == summary.pass_rate
    assert (diff.pass_rate_a, diff.pass_rate_b) == (pytest.approx(2 / 3), 0.5)
    assert diff.counts == "every result of each run, each counted once"
    rates = {r.key: r for r in diff.rates}
    assert list(rates) == ["all", "rca.axis1", "rca.axis2", "incident"]
    assert (rates["rca.axis2"].pass_rate_a, rates["rca.axis2"].pass_rate_b) == (0.0, None)  # B ran no Axis 2
    assert rates["incident"].counts == "incident episodes (task × seed)"
    assert (rates["incident"].pass_rate_a, rates["incident"].pass_rate_b) == (1.0, 0.0)


def test_a_report_stored_by_an_older_sredrill_is_summarized_again(db: Path) -> None:
    results = [_rca("p/0#1", TestStatus.PASSED, 1, 1), _rca("p/0#2", TestStatus.FAILED, 2, 1)]
    with Store(db) as store:
        begin(store, "old")
        for r in results:
            store.write_result("old", r, None)
        store.finish_run("old", report_of("old", results))
    # What schema 1 stored: Axis 1 counts at the top, `axis2` and `gap` beside them.
    v1 = {"schema_version": "1", "run_id": "old", "agent": "reference", "mode": "axis2",
          "started_at": T0.isoformat(), "duration_ms": 5.0, "insights": None,
          "summary": {"total": 1, "passed": 1, "failed": 0, "errored": 0, "pass_rate": 1.0,
                      "by_difficulty": {"1": {"total": 1, "passed": 1, "failed": 0, "errored": 0}},
                      "axis2": {"total": 1, "passed": 0, "failed": 1, "errored": 0, "pass_rate": 0.0,
                                "by_difficulty": {}}, "gap": {"overall": 100.0, "by_difficulty": {}},
                      "pass_at_k": None, "pass_hat_k": None, "flaky": 0}}  # fmt: skip
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET report = ? WHERE run_id = 'old'", (json.dumps(v1),))
    with Store(db) as store:
        report = store.report("old")
        record = store.get_run("old")
    assert report is not None and report.schema_version == SCHEMA_VERSION and report.mode == "axis2"
    assert report.summary == summarize(results) and report.summary.total == 2
    assert record is not None and record.summary is None and record.counts.total == 2


async def test_finish_run_writes_again_only_what_the_writer_did_not_store_as_it_is(db: Path) -> None:
    from sredrill.store.writer import ResultWriter

    with Store(db) as store:
        begin(store, "r1")
        writer = ResultWriter(store)
        a, b = result("a"), result("b")
        writer.write("r1", a, None, [])
        writer.write("r1", b, None, [])
        await writer.close()
        changed_b = b.model_copy(update={"status": TestStatus.FAILED})  # the report's b is not the written one
        report = report_of("r1", [a, changed_b, result("c")])
        stored = writer.written_as(report.results)
        assert stored == {"a"}
        store.finish_run("r1", report, stored=stored)
        statuses = {r.id: r.status for r in store.results("r1")}
    assert statuses == {"a": TestStatus.PASSED, "b": TestStatus.FAILED, "c": TestStatus.PASSED}
