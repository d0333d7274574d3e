"""The SDK users import: `test`, `describe`, hooks, `expect`, `judge`, `evaluator`, `scenario`, and `RunResult`."""

from sredrill.results import Verdict
from sredrill.sdk.context import JudgeConfig, Runtime, TestContext, current_context
from sredrill.sdk.expect import Expectation, expect
from sredrill.sdk.fixtures import FixtureSet, call_with_fixtures
from sredrill.sdk.judge import Judge, JudgeSpec, judge
from sredrill.sdk.registry import (
    BUILTIN_FIXTURES,
    Scope,
    Suite,
    TestDef,
    TestFn,
    after_all,
    after_each,
    before_all,
    before_each,
    collecting,
    describe,
    display_path,
    evaluator,
    test,
)
from sredrill.sdk.result import AgentFixture, FunctionTools, RunResult, TestInfo
from sredrill.sdk.scenario import RCA_PROMPT, ScenarioCase, scenario

__all__ = [
    "BUILTIN_FIXTURES",
    "RCA_PROMPT",
    "AgentFixture",
    "Expectation",
    "FixtureSet",
    "FunctionTools",
    "Judge",
    "JudgeConfig",
    "JudgeSpec",
    "RunResult",
    "Runtime",
    "ScenarioCase",
    "Scope",
    "Suite",
    "TestContext",
    "TestDef",
    "TestFn",
    "TestInfo",
    "Verdict",
    "after_all",
    "after_each",
    "before_all",
    "before_each",
    "call_with_fixtures",
    "collecting",
    "current_context",
    "describe",
    "display_path",
    "evaluator",
    "expect",
    "judge",
    "scenario",
    "test",
]
