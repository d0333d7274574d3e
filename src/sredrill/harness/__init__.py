"""The engine's side of the SDK: what a test is once registered, its per-attempt context, its fixtures.

`sredrill.sdk` is what test authors import; it builds on this package, as `pytest` sits over `_pytest`.
The engine and the suites it generates (RCA, incidents) use these names; an eval file never needs them.
"""

from sredrill.harness.context import (
    JudgeConfig,
    Runtime,
    TestContext,
    context_or_none,
    current_context,
    enter_context,
    exit_context,
    exit_text,
    is_engine_cancelled,
)
from sredrill.harness.fixtures import FixtureSet, call_with_fixtures
from sredrill.harness.paths import display_path, is_sredrill_file, shown_path
from sredrill.harness.registry import (
    BUILTIN_FIXTURES,
    Fixture,
    GeneratedCase,
    Scope,
    Suite,
    TestDef,
    collecting,
    collecting_suite,
)
from sredrill.harness.result import TRACES_TIMEOUT_S, RunResult, TestInfo

__all__ = [
    "BUILTIN_FIXTURES",
    "TRACES_TIMEOUT_S",
    "Fixture",
    "FixtureSet",
    "GeneratedCase",
    "JudgeConfig",
    "RunResult",
    "Runtime",
    "Scope",
    "Suite",
    "TestContext",
    "TestDef",
    "TestInfo",
    "call_with_fixtures",
    "collecting",
    "collecting_suite",
    "context_or_none",
    "current_context",
    "display_path",
    "enter_context",
    "exit_context",
    "exit_text",
    "is_engine_cancelled",
    "is_sredrill_file",
    "shown_path",
]
