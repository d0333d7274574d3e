"""The engine: load eval files, run tests through one code path, derive statuses, store and report."""

from sredrill.engine.api import (
    BASELINE_AGENTS,
    TestPlan,
    list_tests,
    plan_tests,
    run,
    run_baselines,
    run_eval_files,
    run_packs,
    run_sync,
)
from sredrill.engine.config import Settings, load_settings
from sredrill.engine.execute import RunListener, RunOptions, execute, new_run_id
from sredrill.engine.loader import LoadedTests, discover_files, load_eval_files, select_tests
from sredrill.engine.runner import AttemptOutcome, HookState, run_test

__all__ = [
    "BASELINE_AGENTS",
    "AttemptOutcome",
    "HookState",
    "LoadedTests",
    "RunListener",
    "RunOptions",
    "Settings",
    "TestPlan",
    "discover_files",
    "execute",
    "list_tests",
    "load_eval_files",
    "load_settings",
    "new_run_id",
    "plan_tests",
    "run",
    "run_baselines",
    "run_eval_files",
    "run_packs",
    "run_sync",
    "run_test",
    "select_tests",
]
