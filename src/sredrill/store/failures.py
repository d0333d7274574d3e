"""What a failed SQLite call means for the user: a `StoreError` naming the database and the fix."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sredrill.errors import StoreError

__all__ = ["ROW_ERRORS", "is_busy", "is_row_error", "store_error"]

_MOVE = "or pass another file with --db PATH"
# By SQLite's primary result code (`sqlite_errorname` up to its first "_" after "SQLITE_"): the cause, the fix.
_FIXES = {
    "SQLITE_FULL": ("the disk (or the database's size limit) is full", f"free space on its disk, {_MOVE}"),
    "SQLITE_READONLY": (
        "the database is read-only",
        f"make the file, its folder and its -wal/-shm files writable, {_MOVE}",
    ),
    "SQLITE_IOERR": (
        "a disk I/O error (the disk may be full, failing, removed or over a file size limit)",
        f"free space or check the disk, {_MOVE}",
    ),
    "SQLITE_BUSY": (
        "another process kept the database locked",
        f"wait for the other sredrill (or server) to finish, {_MOVE}",
    ),
    "SQLITE_LOCKED": (
        "another process kept the database locked",
        f"wait for the other sredrill (or server) to finish, {_MOVE}",
    ),
    "SQLITE_CANTOPEN": ("the database file (or its -wal/-shm file) cannot be opened", f"check the folder, {_MOVE}"),
}
# What one row's values can make SQLite refuse (too big, out of range, unbindable, a constraint).
ROW_ERRORS = (sqlite3.DataError, sqlite3.IntegrityError, sqlite3.InterfaceError, OverflowError, UnicodeEncodeError)
_RESUME = "; the results stored so far are kept: continue the run with --resume RUN once it is fixed"


def _primary(exc: sqlite3.Error) -> str | None:
    name = getattr(exc, "sqlite_errorname", None)
    if not isinstance(name, str):
        return None
    parts = name.split("_")
    return "_".join(parts[:2])


def store_error(exc: sqlite3.Error, path: Path | str, *, action: str = "write to") -> StoreError:
    """The user's view of a SQLite failure on the whole database (not one row).

    Args:
        exc: the failure.
        path: the database file.
        action: what failed, as in "cannot <action> the store": `write to` (then the hint says how to continue
            the run), `read` or `open`.
    """
    cause, fix = _FIXES.get(_primary(exc) or "", ("the database cannot be used", f"check the disk, {_MOVE}"))
    hint = fix + (_RESUME if action == "write to" else "")
    return StoreError(f"cannot {action} the store: {cause} (sqlite: {exc})", path=str(path), hint=hint)


def is_busy(exc: sqlite3.Error) -> bool:
    """The database was locked by another connection (worth retrying)."""
    return _primary(exc) in ("SQLITE_BUSY", "SQLITE_LOCKED")


def is_row_error(exc: BaseException) -> bool:
    """A failure of one row's values (too big, out of range, a constraint), not of the database or the disk.

    Disk full, read-only, I/O errors and corruption (`OperationalError`, `DatabaseError`) concern every row;
    `ProgrammingError` is a bug.
    """
    return isinstance(exc, ROW_ERRORS)
