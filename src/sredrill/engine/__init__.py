"""The engine: load eval files, run tests through one code path, derive statuses, store and report."""

from sredrill.engine.api import (
    BASELINE_AGENTS,
    TestPlan,
    eval_plan,
    list_tests,
    pack_plan,
    plan_tests,
    run,
    run_baselines,
    run_eval_files,
    run_packs,
    run_sync,
)
from sredrill.engine.config import Settings, load_settings
from sredrill.engine.execute import RunListener, RunOptions, execute, new_run_id
from sredrill.engine.launch import resume_run, start_run
from sredrill.engine.loader import LoadedTests, discover_files, load_eval_files, select_tests
from sredrill.engine.plan import RunPlan, stored_plan
from sredrill.engine.runner import AttemptOutcome, HookState, run_test

__all__ = [
    "BASELINE_AGENTS",
    "AttemptOutcome",
    "HookState",
    "LoadedTests",
    "RunListener",
    "RunOptions",
    "RunPlan",
    "Settings",
    "TestPlan",
    "discover_files",
    "eval_plan",
    "execute",
    "list_tests",
    "load_eval_files",
    "load_settings",
    "new_run_id",
    "pack_plan",
    "plan_tests",
    "resume_run",
    "run",
    "run_baselines",
    "run_eval_files",
    "run_packs",
    "run_sync",
    "run_test",
    "select_tests",
    "start_run",
    "stored_plan",
]
