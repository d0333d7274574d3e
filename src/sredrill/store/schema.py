"""The SQLite schema of the store and the one function that opens a database with it.

The schema is versioned with `PRAGMA user_version`: `MIGRATIONS[i]` takes a database from version `i` to
`i + 1`, so a database written by an older sredrill is upgraded in place when it is opened, and one written
by a newer sredrill is refused instead of being misread.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from sredrill.errors import InputError
from sredrill.store.failures import is_busy, store_error

__all__ = ["SCHEMA_VERSION", "connect"]

# Version 1: runs, results (one row per test id of a run, in completion order), trajectories, judge cache.
_V1 = (
    """
    CREATE TABLE runs (
        run_id      TEXT PRIMARY KEY,
        kind        TEXT NOT NULL,
        agent       TEXT,
        mode        TEXT,
        started_at  TEXT NOT NULL,   -- ISO 8601, as given
        started_ts  REAL NOT NULL,   -- epoch seconds, for ordering
        config      TEXT NOT NULL,   -- JSON: what `--resume` needs to rerun exactly
        finished    INTEGER NOT NULL DEFAULT 0,
        finished_at TEXT,
        duration_ms REAL,
        report      TEXT             -- JSON: the finished RunReport without its results
    )
    """,
    "CREATE INDEX runs_by_start ON runs (started_ts DESC)",
    """
    CREATE TABLE results (
        seq        INTEGER PRIMARY KEY AUTOINCREMENT,   -- insertion order
        run_id     TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
        test_id    TEXT NOT NULL,
        status     TEXT NOT NULL,
        kind       TEXT NOT NULL,
        difficulty INTEGER,
        written_ts REAL NOT NULL,
        result     TEXT NOT NULL,   -- JSON: TestResult.model_dump_json()
        UNIQUE (run_id, test_id)
    )
    """,
    "CREATE INDEX results_by_status ON results (run_id, status)",
    """
    CREATE TABLE trajectories (
        run_id  TEXT NOT NULL,
        test_id TEXT NOT NULL,
        steps   TEXT NOT NULL,      -- JSON: the full trajectory steps
        PRIMARY KEY (run_id, test_id),
        FOREIGN KEY (run_id, test_id) REFERENCES results (run_id, test_id) ON DELETE CASCADE
    )
    """,
    """
    CREATE TABLE judge_cache (
        key        TEXT PRIMARY KEY,
        verdict    TEXT NOT NULL,   -- JSON: Verdict.model_dump_json()
        created_ts REAL NOT NULL
    )
    """,
)

# Version 2: OpenTelemetry spans of each agent run (sredrill's and the agent's, `source`), by run and test.
# No foreign key to `results`: a span may arrive before its test's result is written.
_V2 = (
    """
    CREATE TABLE spans (
        run_id         TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
        test_id        TEXT NOT NULL,
        agent_run_id   TEXT NOT NULL,
        trace_id       TEXT NOT NULL,
        span_id        TEXT NOT NULL,
        parent_span_id TEXT,
        name           TEXT NOT NULL,
        start_ns       INTEGER NOT NULL,
        end_ns         INTEGER NOT NULL,
        source         TEXT NOT NULL,
        span           TEXT NOT NULL,   -- JSON: Span.model_dump_json()
        PRIMARY KEY (run_id, trace_id, span_id, source)
    )
    """,
    "CREATE INDEX spans_by_test ON spans (run_id, test_id, start_ns)",
)

MIGRATIONS: tuple[tuple[str, ...], ...] = (_V1, _V2)
SCHEMA_VERSION = len(MIGRATIONS)

# Another process (a second `sredrill run`, the server) may hold the write lock for a moment.
_BUSY_TIMEOUT_S = 30.0
_DB_HINT = "pass another file with --db PATH, or move this one aside"
# Between two tries of the switch to WAL, which SQLite answers "database is locked" without waiting.
_WAL_RETRY_S = 0.005


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating or upgrading) the sredrill database at `path`.

    The connection is in autocommit mode (`isolation_level=None`): callers open their own transactions, so
    each one is exactly as long as they mean it to be. It may be used from any thread, under the caller's
    lock.

    Args:
        path: the database file (created when missing) or `:memory:`.

    Returns:
        An open connection in WAL mode with `synchronous=NORMAL` and foreign keys on.

    Raises:
        InputError: the file is not a SQLite database, belongs to another program, was written by a newer
            sredrill, or cannot be opened.
        StoreError: the disk is full, read-only or failing, or another process kept the file locked.
    """
    try:
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=_BUSY_TIMEOUT_S)
    except sqlite3.Error as exc:
        raise InputError(f"cannot open the database: {exc}", path=str(path), hint=_DB_HINT) from exc
    try:
        # WAL lets readers (another `sredrill runs show`, the server) read while a run writes; NORMAL
        # loses no committed result when the process dies, only (maybe) the last ones on power loss.
        _switch_to_wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        _migrate(conn, path)
    except sqlite3.OperationalError as exc:
        # The file may be a fine database on a full, read-only or failing disk: say that, not "not a database".
        conn.close()
        raise store_error(exc, path, action="open") from exc
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise InputError(f"not a sredrill database (sqlite: {exc})", path=str(path), hint=_DB_HINT) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _switch_to_wal(conn: sqlite3.Connection) -> None:
    # Changing the journal mode answers SQLITE_BUSY at once, without the busy timeout, while another process
    # opens the same new file (6 processes creating one database failed this way 1 time in 4): retry for as
    # long as the busy timeout would have waited.
    deadline = time.monotonic() + _BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() > deadline:
                raise
        time.sleep(_WAL_RETRY_S)


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    # IMMEDIATE: two processes opening a fresh file at once must not both create the tables.
    conn.execute("BEGIN IMMEDIATE")
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version > SCHEMA_VERSION:
            raise InputError(
                f"the database has schema version {version}, newer than this sredrill's {SCHEMA_VERSION}",
                path=str(path),
                hint="upgrade sredrill, or " + _DB_HINT,
            )
        if version == 0:
            (tables,) = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            if tables:
                raise InputError(
                    "a SQLite database of another program (it has tables but no sredrill schema)",
                    path=str(path),
                    hint=_DB_HINT,
                )
        for statements in MIGRATIONS[version:]:
            for statement in statements:
                conn.execute(statement)
        if version != SCHEMA_VERSION:
            # PRAGMA does not take parameters; the value is our own integer constant.
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
