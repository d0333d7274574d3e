"""What test authors import: `test`, `describe`, hooks, `expect`, `judge`, `evaluator`, `scenario`, `RunResult`.

Only the authoring surface: what a test is once registered, its context and its fixtures are the engine's
(`sredrill.harness`, below this package), as `pytest` sits over `_pytest`.
"""

from sredrill.harness.result import RunResult, TestInfo
from sredrill.results import Verdict
from sredrill.sdk.expect import Expectation, expect
from sredrill.sdk.judge import Judge, JudgeSpec, judge
from sredrill.sdk.registry import after_all, after_each, before_all, before_each, describe, evaluator, test
from sredrill.sdk.result import AgentFixture, FunctionTools
from sredrill.sdk.scenario import RCA_PROMPT, ScenarioCase, scenario

__all__ = [
    "RCA_PROMPT",
    "AgentFixture",
    "Expectation",
    "FunctionTools",
    "Judge",
    "JudgeSpec",
    "RunResult",
    "ScenarioCase",
    "TestInfo",
    "Verdict",
    "after_all",
    "after_each",
    "before_all",
    "before_each",
    "describe",
    "evaluator",
    "expect",
    "judge",
    "scenario",
    "test",
]
