"""The Store: runs, test results, trajectories and the judge cache in one SQLite file.

Every write is one transaction, committed before the call returns, so an interrupted run keeps every
result written so far and `--resume` continues from `completed_ids`. The engine calls the store from
`asyncio.to_thread` with many tests in flight: the one connection is shared under a lock, and the
JSON encoding is done before the lock is taken.

Failures have two sizes. One result that cannot be written (text that is not valid Unicode is repaired first,
see `store/encoding.py`; a value SQLite refuses) is replaced by an errored result saying why, inside its own
SAVEPOINT, and every other result of the batch is written. A failure of the whole database (disk full,
read-only, I/O error, corruption) is a `StoreError` naming the file and the fix.

Examples:
    >>> with Store(tmp_path / "sredrill.db") as store:  # doctest: +SKIP
    ...     store.begin_run("r1", kind="run", agent="reference", mode="full", started_at=now, config={})
    ...     store.write_result("r1", result, steps=trajectory.dump())
    ...     store.finish_run("r1", report)
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import JsonValue, ValidationError

from sredrill.errors import InputError, StateError, did_you_mean
from sredrill.results import SCHEMA_VERSION as REPORT_VERSION
from sredrill.results import Counts, RunReport, Summary, TestResult, TestStatus, Verdict, summarize
from sredrill.store.encoding import Unstorable, dump_json, dump_model, scrub_model, scrub_text
from sredrill.store.failures import ROW_ERRORS, is_row_error, store_error
from sredrill.store.records import DeletedRun, RunComparison, RunRecord, compare_reports
from sredrill.store.schema import connect
from sredrill.text import REPLACED_NOTE, scrub
from sredrill.traces import Span

__all__ = ["DEFAULT_DB_PATH", "UNSTORABLE_PREFIX", "AmbiguousRun", "Store"]

log = logging.getLogger(__name__)

DEFAULT_DB_PATH = Path(".sredrill/sredrill.db")
_LATEST = "latest"
# How many run ids an "unknown run" error lists (the newest ones).
_SHOWN_RUNS = 11


class AmbiguousRun(InputError):
    """Raised by `Store.resolve_run` when several runs start with what was typed (`allowed` lists them), so a
    caller can tell it from an unknown run (the runs API answers 409 to this one, 404 to that one)."""


_UPSERT_RESULT = """
    INSERT INTO results (run_id, test_id, status, kind, difficulty, written_ts, result)
    VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (run_id, test_id) DO UPDATE SET
        status = excluded.status, kind = excluded.kind, difficulty = excluded.difficulty,
        written_ts = excluded.written_ts, result = excluded.result
"""
# At finish the report's results are folded in, but their completion times stay those of write_result.
_UPSERT_FINAL_RESULT = """
    INSERT INTO results (run_id, test_id, status, kind, difficulty, written_ts, result)
    VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (run_id, test_id) DO UPDATE SET
        status = excluded.status, kind = excluded.kind, difficulty = excluded.difficulty,
        result = excluded.result
"""
_UPSERT_TRAJECTORY = """
    INSERT INTO trajectories (run_id, test_id, steps) VALUES (?, ?, ?)
    ON CONFLICT (run_id, test_id) DO UPDATE SET steps = excluded.steps
"""
_NEWEST_FIRST = "ORDER BY started_ts DESC, rowid DESC"
# The failure reason of a result the store could not write as it was (it is stored errored instead).
UNSTORABLE_PREFIX = "could not store this result: "
_RUN_COLUMNS = "run_id, kind, agent, mode, started_at, finished, duration_ms, config, report"


class Store:
    """SQLite persistence of runs; safe to share between threads, and between processes on one file.

    Args:
        path: the database file; created with its parent folders when missing.

    Raises:
        InputError: the file is not a sredrill database (or cannot be created); the message names it and
            suggests `--db`.
    """

    def __init__(self, path: str | Path = DEFAULT_DB_PATH) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InputError(
                    f"cannot create the database folder: {exc.strerror}",
                    path=str(self.path),
                    hint="pass another file with --db PATH",
                ) from exc
        self._conn: sqlite3.Connection | None = connect(self.path)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection; closing twice is harmless, using the store afterwards is a StateError."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @contextmanager
    def _transaction(self, *, write: bool) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._conn is None:
                raise StateError(f"the store at {self.path} is closed: open a new Store to use it")
            conn = self._conn
            try:
                # IMMEDIATE takes the write lock up front, so a write never fails half-way on a lock that
                # another process took after our reads.
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    # A failed COMMIT leaves the transaction open; the next call must start clean.
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.DatabaseError as exc:
                # A row's own failure was handled (or is a bug) where it happened; this one is the database's.
                if is_row_error(exc):
                    raise
                raise store_error(exc, self.path, action="write to" if write else "read") from exc

    # -- runs ---------------------------------------------------------------------------------------

    def begin_run(
        self,
        run_id: str,
        *,
        kind: str,
        agent: str | None,
        mode: str | None,
        started_at: datetime,
        config: dict[str, JsonValue],
    ) -> None:
        """Record that a run started.

        Beginning a run that exists (a `--resume`) keeps its start time and results, replaces its kind,
        agent, mode and config, and marks it unfinished until `finish_run` is called again.

        Args:
            run_id: the run's id.
            kind: what started it (`run`, `test`, …).
            agent: the agent spec, when there is one.
            mode: the evidence backend mode, when it applies.
            started_at: when the run started.
            config: the options needed to resume the run exactly (argv-like, JSON values).

        Raises:
            StoreError: the database cannot be written (disk full, read-only, I/O error).
        """
        # argv may hold undecodable bytes (lone surrogates under Python's surrogateescape): stored repaired.
        config_json, _ = dump_json(config)
        run_id, kind, agent, mode = (scrub(run_id)[0], scrub(kind)[0], scrub_text(agent), scrub_text(mode))
        with self._transaction(write=True) as conn:
            conn.execute(
                """
                INSERT INTO runs (run_id, kind, agent, mode, started_at, started_ts, config)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (run_id) DO UPDATE SET
                    kind = excluded.kind, agent = excluded.agent, mode = excluded.mode,
                    config = excluded.config, finished = 0, finished_at = NULL, duration_ms = NULL,
                    report = NULL
                """,
                (run_id, kind, agent, mode, started_at.isoformat(), started_at.timestamp(), config_json),
            )

    def write_result(
        self,
        run_id: str,
        result: TestResult,
        steps: list[dict[str, JsonValue]] | None,
        spans: Sequence[tuple[str, Span]] = (),
    ) -> TestResult:
        """Store one finished test, committed before returning; the same test id again replaces it.

        A replaced result keeps its place in the run's order; its trajectory is replaced too (removed when
        `steps` is None).

        Args:
            run_id: a run begun with `begin_run`.
            result: the test's result.
            steps: the test's full trajectory (`Trajectory.dump()`), or None when it has none.
            spans: the test's spans as (agent run id, span), stored in the same transaction.

        Returns:
            The result as stored: `result` itself, or its text repaired (with `REPLACED_NOTE` in its notes), or
            an errored result whose reason starts with `UNSTORABLE_PREFIX` when it could not be written.

        Raises:
            StateError: the run was never begun.
            StoreError: the database cannot be written (disk full, read-only, I/O error).
        """
        changed = self.write_results(run_id, [(result, steps, spans)])
        return changed[0] if changed else result

    def write_results(
        self,
        run_id: str,
        items: Sequence[tuple[TestResult, list[dict[str, JsonValue]] | None, Sequence[tuple[str, Span]]]],
    ) -> list[TestResult]:
        """Store several finished tests (result, trajectory, spans) in one transaction, committed on return.

        The engine's writer uses it to catch up when results complete faster than one commit each. Each
        result is written in its own SAVEPOINT: one that cannot be written is stored errored instead (its
        reason starting with `UNSTORABLE_PREFIX`), and the others are written all the same.

        Returns:
            The results stored differently from how they were given (text repaired, or errored), as stored.

        Raises:
            StateError: the run was never begun.
            StoreError: the database cannot be written (disk full, read-only, I/O error): none of the batch is.
        """
        run_id = scrub(run_id)[0]
        prepared = [_prepare(run_id, result, steps, spans) for result, steps, spans in items]
        with self._transaction(write=True) as conn:
            self._require_run(conn, run_id)
            stored = [_write_isolated(conn, run_id, item, final=False) for item in prepared]
        return [item.result for item in stored if item.changed]

    def finish_run(self, run_id: str, report: RunReport, *, stored: Collection[str] = ()) -> None:
        """Mark a run finished and store its report (summary, duration, insights).

        The report's results are folded into the stored ones (a result the engine did not write yet is
        added; stored trajectories are kept), so `report(run_id)` gives back every result of the run.

        Args:
            run_id: a run begun with `begin_run`.
            report: the run's report.
            stored: ids of the report's results already stored exactly as they are in it (the engine's writer
                wrote them: `ResultWriter.written_as`); they are not encoded and written again.

        Raises:
            StateError: the run was never begun.
            StoreError: the database cannot be written (disk full, read-only, I/O error).
        """
        run_id = scrub(run_id)[0]
        header, _ = dump_model(report, exclude={"results"})
        prepared = [_prepare(run_id, r, None, ()) for r in report.results if r.id not in stored]
        finished_at = datetime.now().astimezone().isoformat()
        with self._transaction(write=True) as conn:
            self._require_run(conn, run_id)
            for item in prepared:
                _write_isolated(conn, run_id, item, final=True)
            conn.execute(
                "UPDATE runs SET finished = 1, finished_at = ?, duration_ms = ?, report = ? WHERE run_id = ?",
                (finished_at, report.duration_ms, header, run_id),
            )

    def get_run(self, run_id: str) -> RunRecord | None:
        """The run's record, or None when no run has this exact id (see `resolve_run` for prefixes)."""
        with self._transaction(write=False) as conn:
            row = conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                return None
            counts = self._counts(conn, [run_id])
        return _record(row, counts.get(run_id, Counts()))

    def list_runs(self, limit: int = 50) -> list[RunRecord]:
        """The newest `limit` runs, newest first."""
        with self._transaction(write=False) as conn:
            rows = conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs {_NEWEST_FIRST} LIMIT ?", (limit,)).fetchall()
            counts = self._counts(conn, [r[0] for r in rows])
        return [_record(r, counts.get(r[0], Counts())) for r in rows]

    def resolve_run(self, ref: str) -> str:
        """Turn what a user typed into a run id: a full id, a unique prefix of one, or `latest`.

        Raises:
            InputError: no run matches, several do, or the store has no run yet.
        """
        ref = ref.strip()
        with self._transaction(write=False) as conn:
            known: list[str] = [r[0] for r in conn.execute(f"SELECT run_id FROM runs {_NEWEST_FIRST}")]
        if ref == _LATEST:
            if not known:
                raise InputError(
                    "no run is stored yet, so there is no 'latest' run",
                    path=str(self.path),
                    hint="start one with: sredrill run (or point at another database with --db PATH)",
                )
            return known[0]
        if ref in known:
            return ref
        matches = [k for k in known if ref and k.startswith(ref)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise AmbiguousRun(
                f"run {ref!r} is ambiguous: {len(matches)} runs start with it",
                path=str(self.path),
                allowed=matches[:_SHOWN_RUNS],
                hint="type more characters of the run id",
            )
        guess = did_you_mean(ref, known)
        raise InputError(
            f"unknown run {ref!r}" + (f"; {guess}" if guess else ""),
            path=str(self.path),
            allowed=[_LATEST, *known[:_SHOWN_RUNS]],
            hint="list the stored runs with: sredrill runs list",
        )

    def delete_run(self, run_id: str, *, force: bool = False) -> DeletedRun:
        """Delete a run and everything stored for it (results, trajectories, spans) in one transaction.

        Args:
            run_id: the exact id (`resolve_run` turns a prefix or `latest` into one).
            force: delete a run that has not ended too (it may be going on in another process).

        Raises:
            InputError: no run has this id, or it has not ended and `force` is False.
        """
        with self._transaction(write=True) as conn:
            row = conn.execute("SELECT finished FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                raise InputError(
                    f"unknown run {run_id!r}", path=str(self.path), hint="list the stored runs with: sredrill runs list"
                )
            finished = bool(row[0])
            if not finished and not force:
                raise InputError(
                    f"run {run_id!r} has not ended: it is going on, or it was interrupted",
                    path=str(self.path),
                    hint=f"let it end, or resume it (sredrill run|test --resume {run_id}); to delete it anyway: "
                    f"sredrill runs delete {run_id} --force",
                )
            counted = {
                table: conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,)).rowcount
                for table in ("spans", "trajectories", "results")  # children first: no cascade is relied on
            }
            conn.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
        return DeletedRun(run_id, finished, counted["results"], counted["trajectories"], counted["spans"])

    # -- results --------------------------------------------------------------------------------------

    def results(self, run_id: str) -> list[TestResult]:
        """The run's stored results in the order they were first written (empty for an unknown run)."""
        with self._transaction(write=False) as conn:
            rows = conn.execute("SELECT result FROM results WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
        return [TestResult.model_validate_json(r[0]) for r in rows]

    def completed_ids(self, run_id: str) -> set[str]:
        """Ids of every result already written for the run, whatever its status (for `--resume`)."""
        with self._transaction(write=False) as conn:
            rows = conn.execute("SELECT test_id FROM results WHERE run_id = ?", (run_id,)).fetchall()
        return {r[0] for r in rows}

    def report(self, run_id: str) -> RunReport | None:
        """The run's report: the stored one once finished, else one rebuilt from the results so far.

        A rebuilt report's summary comes from `results.summarize` (with `config["repeat"]` when the run
        was repeated) and its duration spans the start to the last result written. A report stored by an older
        sredrill (another `results.SCHEMA_VERSION`) gets its summary computed again from its results.

        Returns:
            The report, or None when no run has this exact id.
        """
        with self._transaction(write=False) as conn:
            run = conn.execute(
                "SELECT agent, mode, started_at, started_ts, config, report FROM runs WHERE run_id = ?",
                (run_id,),
            ).fetchone()
            if run is None:
                return None
            rows = conn.execute(
                "SELECT result, written_ts FROM results WHERE run_id = ? ORDER BY seq", (run_id,)
            ).fetchall()
        agent, mode, started_at, started_ts, config_json, header_json = run
        results = [TestResult.model_validate_json(r[0]) for r in rows]
        repeat = json.loads(config_json).get("repeat")
        repeat = repeat if isinstance(repeat, int) and repeat > 1 else 1
        if header_json is not None:
            header = json.loads(header_json)
            # A summary stored by an older sredrill (version 1 mixed kinds of result) is computed again.
            summary = _stored_summary(header) or summarize(results, repeat=repeat)
            # Result instances are not revalidated by pydantic: this costs one parse per result.
            return RunReport.model_validate(
                {**header, "schema_version": REPORT_VERSION, "summary": summary, "run_id": run_id, "results": results}
            )
        last_ts = max((r[1] for r in rows), default=started_ts)
        return RunReport(
            run_id=run_id,
            agent=agent,
            mode=mode,
            started_at=datetime.fromisoformat(started_at),
            # Wall time covered by the stored results: an interrupted run's end is not known.
            duration_ms=round(max(0.0, last_ts - started_ts) * 1000, 3),
            summary=summarize(results, repeat=repeat),
            results=results,
        )

    def trajectory(self, run_id: str, test_id: str) -> list[dict[str, JsonValue]] | None:
        """The full trajectory steps stored with a result, or None when there are none."""
        with self._transaction(write=False) as conn:
            row = conn.execute(
                "SELECT steps FROM trajectories WHERE run_id = ? AND test_id = ?", (run_id, test_id)
            ).fetchone()
        return None if row is None else json.loads(row[0])

    def write_spans(self, run_id: str, test_id: str, spans: Sequence[tuple[str, Span]]) -> None:
        """Store a test's spans, as (agent run id, span); a span stored before is replaced (it may have ended).

        A span that cannot be stored even with its text repaired is left out (and logged).

        Raises:
            StateError: the run was never begun.
            StoreError: the database cannot be written (disk full, read-only, I/O error).
        """
        run_id, test_id = scrub(run_id)[0], scrub(test_id)[0]
        rows = []
        for agent_run_id, span in spans:
            try:
                rows.append(_span_row(run_id, test_id, agent_run_id, span)[0])
            except Unstorable as exc:
                log.warning("span %s of %s left out of the store: %s", span.span_id, test_id, exc)
        with self._transaction(write=True) as conn:
            self._require_run(conn, run_id)
            conn.executemany(_UPSERT_SPAN, rows)

    def test_spans(self, run_id: str, test_id: str) -> list[tuple[str, Span]]:
        """A test's spans as `write_results` takes them: (agent run id, span), in start order."""
        with self._transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT agent_run_id, span FROM spans WHERE run_id = ? AND test_id = ? ORDER BY start_ns, span_id",
                (run_id, test_id),
            ).fetchall()
        return [(row[0], Span.model_validate_json(row[1])) for row in rows]

    def spans(self, run_id: str, test_id: str | None = None) -> list[Span]:
        """The spans stored for a run (or one of its tests), in start order."""
        query = "SELECT span FROM spans WHERE run_id = ?"
        params: tuple[str, ...] = (run_id,)
        if test_id is not None:
            query += " AND test_id = ?"
            params = (run_id, test_id)
        with self._transaction(write=False) as conn:
            rows = conn.execute(query + " ORDER BY start_ns, span_id", params).fetchall()
        return [Span.model_validate_json(row[0]) for row in rows]

    def compare(self, a: str, b: str) -> RunComparison:
        """Compare two runs test by test (`sredrill runs compare A B`).

        Args:
            a: the baseline run: a full id, a unique prefix, or `latest`.
            b: the run compared with it, likewise.

        Raises:
            InputError: a reference matches no run or several.
        """
        report_a = self.report(self.resolve_run(a))
        report_b = self.report(self.resolve_run(b))
        if report_a is None or report_b is None:
            # Only when a run is deleted between resolving and reading it (another process).
            raise InputError(f"run {a if report_a is None else b!r} disappeared while it was read")
        return compare_reports(report_a, report_b)

    # -- judge cache ------------------------------------------------------------------------------------

    def judge_cache_get(self, key: str) -> Verdict | None:
        """The cached verdict for a content key (marked `cached=True`), or None on a miss."""
        with self._transaction(write=False) as conn:
            row = conn.execute("SELECT verdict FROM judge_cache WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return Verdict.model_validate_json(row[0]).model_copy(update={"cached": True})

    def judge_cache_put(self, key: str, verdict: Verdict) -> None:
        """Cache a verdict under a content key computed by the caller (replacing any previous one)."""
        verdict_json, _ = dump_model(verdict)
        with self._transaction(write=True) as conn:
            conn.execute(
                "INSERT OR REPLACE INTO judge_cache (key, verdict, created_ts) VALUES (?, ?, ?)",
                (scrub(key)[0], verdict_json, time.time()),
            )

    # -- internals ----------------------------------------------------------------------------------

    def _require_run(self, conn: sqlite3.Connection, run_id: str) -> None:
        if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None:
            raise StateError(f"run {run_id!r} is not in {self.path}: call begin_run({run_id!r}, …) first")

    @staticmethod
    def _counts(conn: sqlite3.Connection, run_ids: list[str]) -> dict[str, Counts]:
        if not run_ids:
            return {}
        marks = ", ".join("?" * len(run_ids))
        counts: dict[str, Counts] = {}
        for run_id, status, n in conn.execute(
            f"SELECT run_id, status, count(*) FROM results WHERE run_id IN ({marks}) GROUP BY run_id, status",
            run_ids,
        ):
            c = counts.setdefault(run_id, Counts())
            setattr(c, TestStatus(status).value, n)
            c.total += n
        return counts


def _stored_summary(header: dict[str, Any]) -> Summary | None:
    """The summary of a stored report header, or None when it is of another report version than this one's."""
    if header.get("schema_version") != REPORT_VERSION:
        return None
    try:
        return Summary.model_validate(header.get("summary"))
    except ValidationError:  # written by a development version of this schema: computed again by the caller
        return None


def _record(row: tuple[Any, ...], counts: Counts) -> RunRecord:
    run_id, kind, agent, mode, started_at, finished, duration_ms, config_json, header_json = row
    # An older report's summary is left out here (`report` computes it again from the results).
    summary = None if header_json is None else _stored_summary(json.loads(header_json))
    return RunRecord(
        run_id=run_id,
        kind=kind,
        agent=agent,
        mode=mode,
        started_at=datetime.fromisoformat(started_at),
        finished=bool(finished),
        duration_ms=duration_ms,
        config=json.loads(config_json),
        summary=summary,
        counts=counts,
    )


_UPSERT_SPAN = """
    INSERT INTO spans (run_id, test_id, agent_run_id, trace_id, span_id, parent_span_id, name,
                       start_ns, end_ns, source, span)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (run_id, trace_id, span_id, source) DO UPDATE SET
        end_ns = excluded.end_ns, span = excluded.span
"""


@dataclass(frozen=True, slots=True)
class _Prepared:
    """One result encoded for its rows, before the lock is taken."""

    result: TestResult
    """As it will be stored."""
    changed: bool
    """`result` is not the one the caller gave (its text repaired, or errored)."""
    row: tuple[Any, ...]
    steps_json: str | None
    span_rows: list[tuple[Any, ...]]


def _prepare(
    run_id: str, result: TestResult, steps: list[dict[str, JsonValue]] | None, spans: Sequence[tuple[str, Span]]
) -> _Prepared:
    try:
        return _encode(run_id, result, steps, spans)
    except Unstorable as exc:
        return _encode(run_id, _unstorable(result, str(exc)), None, (), changed=True)


def _encode(
    run_id: str,
    result: TestResult,
    steps: list[dict[str, JsonValue]] | None,
    spans: Sequence[tuple[str, Span]],
    *,
    changed: bool = False,
) -> _Prepared:
    """The rows of one result; text that is not valid Unicode is repaired and noted in the result."""
    result_json, repaired = dump_model(result)
    if repaired:
        result, _ = scrub_model(result)
    steps_json = None
    if steps is not None:
        try:
            steps_json, bad = dump_json(steps)
        except Unstorable as exc:
            raise Unstorable(f"its trajectory: {exc}") from None
        repaired |= bad
    span_rows = []
    for agent_run_id, span in spans:
        try:
            row, bad = _span_row(run_id, result.id, agent_run_id, span)
        except Unstorable as exc:
            raise Unstorable(f"its span {scrub(span.name)[0]!r}: {exc}") from None
        span_rows.append(row)
        repaired |= bad
    if repaired and REPLACED_NOTE not in result.notes:
        result = result.model_copy(update={"notes": [*result.notes, REPLACED_NOTE]})
        result_json = result.model_dump_json()  # the repaired result, which dump_model encoded
    row = (run_id, result.id, result.status.value, result.kind.value, result.difficulty, time.time(), result_json)
    return _Prepared(result, changed or repaired, row, steps_json, span_rows)


def _unstorable(result: TestResult, reason: str) -> TestResult:
    """The errored result stored instead of one that cannot be: what identifies the test, and why."""
    scrubbed = [scrub(note)[0] for note in result.notes]
    return TestResult(
        id=scrub(result.id)[0],
        name=scrub(result.name)[0],
        kind=result.kind,
        file=scrub_text(result.file),
        labels=[scrub(label)[0] for label in result.labels],
        content_hash=scrub_text(result.content_hash),
        status=TestStatus.ERRORED,
        failure_reason=UNSTORABLE_PREFIX + scrub(reason)[0],
        notes=[*scrubbed, f"the test was {result.status.value} before its result could not be stored"],
        agent_run_id=scrub_text(result.agent_run_id),
        axis=result.axis,
        mode=scrub_text(result.mode),
        duration_ms=result.duration_ms,
    )


def _write_isolated(conn: sqlite3.Connection, run_id: str, item: _Prepared, *, final: bool) -> _Prepared:
    """Write one result's rows in a SAVEPOINT; when SQLite refuses them, the errored stand-in instead."""
    # Any other failure concerns the whole database: the caller's transaction rolls back, savepoint included.
    conn.execute("SAVEPOINT one_result")
    try:
        _write_rows(conn, run_id, item, final=final)
    except ROW_ERRORS as exc:
        conn.execute("ROLLBACK TO one_result")
        item = _encode(run_id, _unstorable(item.result, f"the database refused it ({exc})"), None, (), changed=True)
        _write_rows(conn, run_id, item, final=final)
    conn.execute("RELEASE one_result")
    return item


def _write_rows(conn: sqlite3.Connection, run_id: str, item: _Prepared, *, final: bool) -> None:
    test_id = item.row[1]
    # At finish the trajectories and spans written with each result are kept as they are.
    conn.execute(_UPSERT_FINAL_RESULT if final else _UPSERT_RESULT, item.row)
    if final:
        return
    if item.steps_json is None:
        conn.execute("DELETE FROM trajectories WHERE run_id = ? AND test_id = ?", (run_id, test_id))
    else:
        conn.execute(_UPSERT_TRAJECTORY, (run_id, test_id, item.steps_json))
    if item.span_rows:
        conn.executemany(_UPSERT_SPAN, item.span_rows)


def _span_row(run_id: str, test_id: str, agent_run_id: str, span: Span) -> tuple[tuple[Any, ...], bool]:
    """A span's row, its text repaired when it is not valid Unicode; and whether it was."""
    span_json, repaired = dump_model(span)
    if repaired:
        span, _ = scrub_model(span)  # for its columns
    agent_run_id, bad = scrub(agent_run_id)
    row = (
        run_id, test_id, agent_run_id, span.trace_id, span.span_id, span.parent_span_id, span.name, span.start_ns,
        span.end_ns, span.source.value, span_json,
    )  # fmt: skip
    return row, repaired or bad
