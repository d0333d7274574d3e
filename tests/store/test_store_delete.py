"""`Store.delete_run` on a real SQLite file: the run and every row stored for it go, other runs stay."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sredrill.errors import InputError
from sredrill.results import TestStatus
from sredrill.store import DeletedRun, Store
from sredrill.traces import Span, SpanSource
from tests.store.test_store import begin, report_of, result

_TABLES = ("runs", "results", "trajectories", "spans")


def _span(span_id: str) -> Span:
    return Span(
        trace_id="0" * 31 + "1", span_id=span_id.rjust(16, "0"), parent_span_id=None, name="tool", start_ns=1,
        end_ns=2, source=SpanSource.SREDRILL, attributes={},
    )  # fmt: skip


def _stored(store: Store, run_id: str, *, finish: bool = True) -> None:
    begin(store, run_id)
    results = [result("a"), result("b", TestStatus.FAILED)]
    for r in results:
        store.write_result(run_id, r, [{"kind": "user", "content": "why?"}])
    store.write_spans(run_id, "a", [("agent-1", _span("1")), ("agent-1", _span("2"))])
    if finish:
        store.finish_run(run_id, report_of(run_id, results))


def _rows(db: Path, run_id: str) -> dict[str, int]:
    with sqlite3.connect(db) as con:
        return {t: con.execute(f"SELECT count(*) FROM {t} WHERE run_id = ?", (run_id,)).fetchone()[0] for t in _TABLES}


def test_a_deleted_run_leaves_no_row_and_the_other_runs_stay(tmp_path: Path) -> None:
    db = tmp_path / "sredrill.db"
    with Store(db) as store:
        _stored(store, "run-1")
        _stored(store, "run-2")
        assert _rows(db, "run-1") == {"runs": 1, "results": 2, "trajectories": 2, "spans": 2}
        deleted = store.delete_run("run-1")
        assert deleted == DeletedRun("run-1", finished=True, results=2, trajectories=2, spans=2)
        assert _rows(db, "run-1") == dict.fromkeys(_TABLES, 0)
        assert _rows(db, "run-2") == {"runs": 1, "results": 2, "trajectories": 2, "spans": 2}
        assert [r.run_id for r in store.list_runs()] == ["run-2"]
        with pytest.raises(InputError, match="unknown run 'run-1'"):
            store.delete_run("run-1")


def test_a_run_that_has_not_ended_is_deleted_only_with_force(tmp_path: Path) -> None:
    db = tmp_path / "sredrill.db"
    with Store(db) as store:
        _stored(store, "going-on", finish=False)
        with pytest.raises(InputError, match="has not ended") as refused:
            store.delete_run("going-on")
        assert "sredrill runs delete going-on --force" in (refused.value.hint or "")
        assert _rows(db, "going-on")["results"] == 2  # nothing was deleted
        deleted = store.delete_run("going-on", force=True)
        assert deleted.finished is False and deleted.results == 2
        assert _rows(db, "going-on") == dict.fromkeys(_TABLES, 0)
