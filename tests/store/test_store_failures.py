"""The store's failure boundaries on real SQLite files: one result, text that is not Unicode, a failing disk,
and many processes creating one database at once."""

from __future__ import annotations

import asyncio
import multiprocessing
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sredrill.errors import StoreError
from sredrill.results import Insights, RunReport, TestResult, TestStatus, Verdict, summarize
from sredrill.store import UNSTORABLE_PREFIX, Store
from sredrill.store.writer import ResultWriter
from sredrill.text import REPLACED_NOTE
from sredrill.traces import Span, SpanSource

T0 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
BAD = "\ud800"  # a lone surrogate: not encodable as UTF-8


def result(test_id: str, **kw: object) -> TestResult:
    return TestResult(id=test_id, name=test_id, status=kw.pop("status", TestStatus.PASSED), duration_ms=3.0, **kw)


def span(name: str, **attributes: object) -> Span:
    return Span(
        trace_id="0" * 31 + "1", span_id="0" * 15 + "2", parent_span_id=None, name=name, start_ns=1, end_ns=2,
        source=SpanSource.AGENT, attributes=attributes,
    )  # fmt: skip


def begin(store: Store, run_id: str = "r1", **config: object) -> None:
    store.begin_run(run_id, kind="test", agent="py:agents:echo", mode=None, started_at=T0, config=dict(config))


def raw_texts(db: Path) -> list[bytes]:
    """Every TEXT value in the file, as the bytes SQLite holds (a lone surrogate cannot be among them)."""
    conn = sqlite3.connect(db)
    conn.text_factory = bytes
    try:
        tables = [r[0].decode() for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return [v for t in tables for row in conn.execute(f"SELECT * FROM {t}") for v in row if isinstance(v, bytes)]
    finally:
        conn.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "sredrill.db"


# -- one result is the boundary ---------------------------------------------------------------------------


def test_a_result_sqlite_refuses_is_stored_errored_and_the_rest_of_its_batch_is_written(db: Path) -> None:
    with Store(db) as store:
        begin(store)
        steps = [{"kind": "response", "content": "ok"}]
        # SQLite stores 64-bit integers: this difficulty (from a `difficulty:N` label) cannot be bound.
        items = [(result("a"), steps, ()), (result("b", difficulty=2**70), steps, ()), (result("c"), steps, ())]
        changed = store.write_results("r1", items)

        assert [r.id for r in changed] == ["b"]
        stored = {r.id: r for r in store.results("r1")}
        assert list(stored) == ["a", "b", "c"]
        assert stored["a"] == result("a") and stored["c"] == result("c")
        b = stored["b"]
        assert b == changed[0]
        assert b.status == TestStatus.ERRORED
        assert b.failure_reason.startswith(UNSTORABLE_PREFIX + "the database refused it")
        assert "too large" in b.failure_reason
        assert "the test was passed before its result could not be stored" in b.notes
        assert store.trajectory("r1", "a") == steps and store.trajectory("r1", "b") is None


def test_a_value_too_big_for_sqlite_fails_only_its_own_result(db: Path) -> None:
    with Store(db) as store:
        begin(store)
        # A real SQLite limit (SQLITE_LIMIT_LENGTH), lowered so that one output exceeds it: "string or blob too big".
        store._conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 50_000)
        store.write_results("r1", [(result("small"), None, ()), (result("huge", output="x" * 60_000), None, ())])
        stored = {r.id: r for r in store.results("r1")}
    assert stored["small"].status == TestStatus.PASSED
    assert stored["huge"].status == TestStatus.ERRORED
    assert "too big" in stored["huge"].failure_reason


def test_a_result_that_is_not_json_is_stored_errored_with_the_reason(db: Path) -> None:
    class Opaque:
        pass

    with Store(db) as store:
        begin(store)
        stored = store.write_result("r1", result("odd", reasoning={"x": Opaque()}), None)
        deep: list[object] = []
        node = deep
        for _ in range(5_000):
            node.append([])
            node = node[0]  # type: ignore[assignment]
        deep_one = store.write_result("r1", result("deep"), [{"kind": "tool_result", "result": deep}])
        ok = store.write_result("r1", result("fine"), None)
        assert [r.id for r in store.results("r1")] == ["odd", "deep", "fine"]
    assert stored.status == TestStatus.ERRORED
    assert stored.failure_reason.startswith(UNSTORABLE_PREFIX + "it cannot be encoded as JSON")
    assert "Opaque" in stored.failure_reason
    assert deep_one.status == TestStatus.ERRORED
    assert deep_one.failure_reason == UNSTORABLE_PREFIX + "its trajectory: it is nested too deeply to encode as JSON"
    assert ok == result("fine")


# -- lone surrogates never reach SQLite ---------------------------------------------------------------------


def test_lone_surrogates_are_repaired_in_everything_the_store_writes(db: Path) -> None:
    with Store(db) as store:
        store.begin_run(
            "r1", kind="test", agent=f"py:agent{BAD}", mode=None, started_at=T0, config={"paths": [f"x{BAD}.py"]}
        )
        bad = result(f"t{BAD}", output=f"out {BAD}", failure_reason=f"why {BAD}", reasoning={f"k{BAD}": [BAD]})
        steps = [{"kind": "response", "content": f"said {BAD}"}]
        stored = store.write_result("r1", bad, steps, [("run-1", span(f"tool {BAD}", arg=BAD))])
        # Late spans (an agent exporting after its test was written) go the same way.
        store.write_spans("r1", f"t{BAD}", [("run-1", span("late", note=f"x{BAD}"))])
        report = RunReport(
            run_id="r1", agent=None, started_at=T0, duration_ms=1.0, summary=summarize([stored]), results=[bad],
            insights=Insights(source="rules", summary=f"sum {BAD}"),
        )  # fmt: skip
        store.finish_run("r1", report)
        store.judge_cache_put(f"key{BAD}", Verdict(passed=True, reasoning=f"fine {BAD}"))

        assert stored.id == "t\ufffd" and stored.output == "out \ufffd" and stored.failure_reason == "why \ufffd"
        assert stored.reasoning == {"k\ufffd": ["\ufffd"]}
        assert stored.notes == [REPLACED_NOTE]
        assert store.results("r1") == [stored]
        assert store.trajectory("r1", "t\ufffd") == [{"kind": "response", "content": "said \ufffd"}]
        spans = store.spans("r1")
        assert [s.name for s in spans] == ["late"] and spans[0].attributes == {"note": "x\ufffd"}
        record = store.get_run("r1")
        assert record.agent == "py:agent\ufffd" and record.config == {"paths": ["x\ufffd.py"]}
        assert store.report("r1").insights.summary == "sum \ufffd"
        assert store.judge_cache_get("key\ufffd").reasoning == "fine \ufffd"
    for value in raw_texts(db):
        value.decode("utf-8")  # raises if anything unencodable slipped through


def test_the_first_span_of_a_test_is_stored_repaired_with_its_result(db: Path) -> None:
    with Store(db) as store:
        begin(store)
        stored = store.write_result("r1", result("t"), None, [("run-1", span(f"tool {BAD}", arg=BAD))])
        assert stored.notes == [REPLACED_NOTE]
        assert [(s.name, s.attributes) for s in store.spans("r1", "t")] == [("tool \ufffd", {"arg": "\ufffd"})]


# -- the writer thread ------------------------------------------------------------------------------------


def test_the_writer_gives_back_each_result_as_the_store_kept_it(db: Path) -> None:
    given = [result("a"), result(f"b{BAD}", output=BAD), result("c", difficulty=2**64), result("d")]

    async def main(store: Store) -> list[TestResult]:
        writer = ResultWriter(store)
        for r in given:
            writer.write("r1", r, None, [])
        await writer.close()
        assert writer.store_error is None
        return writer.as_stored(given)

    with Store(db) as store:
        begin(store)
        as_stored = asyncio.run(main(store))
        assert store.results("r1") == as_stored
    assert as_stored[0] == given[0] and as_stored[3] == given[3]
    assert (as_stored[1].id, as_stored[1].output, as_stored[1].notes) == ("b\ufffd", "\ufffd", [REPLACED_NOTE])
    assert as_stored[2].status == TestStatus.ERRORED and as_stored[2].failure_reason.startswith(UNSTORABLE_PREFIX)


# -- a failing disk ------------------------------------------------------------------------------------------


def fill_the_disk(store: Store) -> None:
    # A real SQLITE_FULL: the database may not grow by one more page (what a full disk answers).
    (pages,) = store._conn.execute("PRAGMA page_count").fetchone()
    store._conn.execute(f"PRAGMA max_page_count = {pages}")


def test_a_full_disk_is_a_store_error_naming_the_file_and_the_fix(db: Path) -> None:
    with Store(db) as store:
        begin(store)
        store.write_result("r1", result("kept"), None)
        fill_the_disk(store)
        with pytest.raises(StoreError) as caught:
            store.write_results("r1", [(result(f"t{i}", output="x" * 20_000), None, ()) for i in range(5)])
        assert [r.id for r in store.results("r1")] == ["kept"]  # the store still reads
    err = caught.value
    assert err.path == str(db)
    assert "is full" in err.message and "(sqlite: database or disk is full)" in err.message
    assert "free space" in err.hint and "--db PATH" in err.hint and "--resume" in err.hint
    assert err.render().startswith(f"{db}: cannot write to the store: the disk")
    assert isinstance(err.__cause__, sqlite3.OperationalError)


def test_a_read_only_database_is_a_store_error_saying_to_make_it_writable(db: Path) -> None:
    with Store(db) as store:
        begin(store)
        # Tests run as root, which file modes do not stop: SQLite's own read-only switch fails the same way.
        store._conn.execute("PRAGMA query_only = ON")
        with pytest.raises(StoreError) as caught:
            store.write_result("r1", result("t"), None)
        with pytest.raises(StoreError):
            store.judge_cache_put("k", Verdict(passed=True))
    assert "read-only" in caught.value.message and "writable" in caught.value.hint


def test_the_writer_keeps_the_run_going_when_the_disk_fills(db: Path) -> None:
    async def main(store: Store) -> ResultWriter:
        writer = ResultWriter(store)
        for i in range(20):
            writer.write("r1", result(f"t{i}", output="x" * 20_000), None, [])  # never raises: the run goes on
        await writer.close()  # nor does this
        return writer

    with Store(db) as store:
        begin(store)
        store.write_result("r1", result("first"), None)
        fill_the_disk(store)
        writer = asyncio.run(main(store))
        assert [r.id for r in store.results("r1")] == ["first"]
    assert isinstance(writer.store_error, StoreError) and writer.store_error.path == str(db)


def test_a_disk_io_error_is_a_store_error(tmp_path: Path) -> None:
    db = tmp_path / "sredrill.db"
    with Store(db) as store:
        begin(store)
    # A real I/O error: a child process whose files may not grow past 64 KiB (RLIMIT_FSIZE), as a full disk.
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_write_until_failure, args=(str(db), queue))
    child.start()
    outcome = queue.get(timeout=120)
    child.join(timeout=120)
    kind, message, hint = outcome
    assert kind == "StoreError", outcome
    assert message.startswith("cannot write to the store: a disk I/O error") and "--db PATH" in hint
    with Store(db) as store:
        assert len(store.results("r1")) >= 1  # what was written before stays readable


def _write_until_failure(db: str, queue: multiprocessing.Queue) -> None:
    import resource

    store = Store(db)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, resource.RLIM_INFINITY))
    try:
        for i in range(200):
            store.write_result("r1", result(f"t{i}", output="x" * 3_000), [{"kind": "response", "content": "y"}])
        queue.put(("none", "", ""))
    except StoreError as exc:
        queue.put(("StoreError", exc.message, exc.hint))
    except Exception as exc:  # reported to the test, which fails on it
        queue.put((type(exc).__name__, str(exc), ""))


def test_a_corrupt_file_is_still_an_input_error_not_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"not a database at all" * 100)
    with pytest.raises(Exception) as caught:
        Store(path)
    assert type(caught.value).__name__ == "InputError" and "not a sredrill database" in str(caught.value)


# -- processes creating one database at once ----------------------------------------------------------------


def _open_and_write(db: str, start: multiprocessing.synchronize.Event, queue: multiprocessing.Queue) -> None:
    start.wait()
    try:
        with Store(db) as store:
            run_id = f"run-{multiprocessing.current_process().pid}"
            store.begin_run(run_id, kind="test", agent=None, mode=None, started_at=T0, config={})
            store.write_result(run_id, result("t"), None)
        queue.put("ok")
    except Exception as exc:  # reported to the test, which fails on it
        queue.put(f"{type(exc).__name__}: {exc}")


def test_six_processes_creating_the_same_new_database_at_once_all_succeed(tmp_path: Path) -> None:
    # Before the switch to WAL retried, about 1 round in 4 of this failed with "database is locked".
    ctx = multiprocessing.get_context("fork")
    for round_ in range(12):
        db = tmp_path / f"round{round_}" / "sredrill.db"
        db.parent.mkdir()
        start, queue = ctx.Event(), ctx.Queue()
        children = [ctx.Process(target=_open_and_write, args=(str(db), start, queue)) for _ in range(6)]
        for child in children:
            child.start()
        start.set()  # all six open the missing file together
        outcomes = [queue.get(timeout=120) for _ in children]
        for child in children:
            child.join(timeout=120)
        assert outcomes == ["ok"] * 6, f"round {round_}: {outcomes}"
        with Store(db) as store:
            assert [r.counts.total for r in store.list_runs()] == [1] * 6


def test_opening_waits_for_a_process_that_holds_the_new_files_write_lock(tmp_path: Path) -> None:
    # What the race above comes down to: while another connection holds the write lock of the new file (it is
    # creating it), switching to WAL answers "database is locked" at once, without the busy timeout.
    db = tmp_path / "sredrill.db"
    creator = sqlite3.connect(db, isolation_level=None)
    creator.execute("BEGIN IMMEDIATE")
    outcome: list[object] = []

    def open_store() -> None:
        try:
            with Store(db) as store:
                outcome.append(store.list_runs())
        except Exception as exc:  # reported to the test, which fails on it
            outcome.append(exc)

    opener = threading.Thread(target=open_store)
    opener.start()
    opener.join(timeout=0.5)  # a store that gave up at once has finished by now, with the error
    creator.execute("COMMIT")
    creator.close()
    opener.join(timeout=60)
    assert outcome == [[]]
