"""SQLite persistence: runs, test results, trajectories and the judge cache (DESIGN §1, §10).

Examples:
    >>> from sredrill.store import Store
    >>> with Store(".sredrill/sredrill.db") as store:  # doctest: +SKIP
    ...     run_id = store.resolve_run("latest")
    ...     report = store.report(run_id)
"""

from sredrill.store.records import (
    DeletedRun,
    Direction,
    PairedTest,
    RateChange,
    RunComparison,
    RunRecord,
    RunStatus,
    StatusChange,
    UsageChange,
    ui_run_path,
    ui_test_path,
    usage_change,
)
from sredrill.store.store import DEFAULT_DB_PATH, UNSTORABLE_PREFIX, AmbiguousRun, Store

__all__ = [
    "DEFAULT_DB_PATH",
    "UNSTORABLE_PREFIX",
    "AmbiguousRun",
    "DeletedRun",
    "Direction",
    "PairedTest",
    "RateChange",
    "RunComparison",
    "RunRecord",
    "RunStatus",
    "StatusChange",
    "Store",
    "UsageChange",
    "ui_run_path",
    "ui_test_path",
    "usage_change",
]
