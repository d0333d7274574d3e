"""The public API of DESIGN §1: `__all__` is sorted and complete, and `import sredrill` stays light."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import sredrill

PACKAGES = [
    "sredrill",
    "sredrill.agents",
    "sredrill.sdk",
    "sredrill.harness",
    "sredrill.engine",
    "sredrill.store",
    "sredrill.engine.reporters",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_unique_and_resolves(name: str) -> None:
    # Sorting is checked by ruff (RUF022: constants, then classes, then functions).
    module = importlib.import_module(name)
    names = list(module.__all__)
    assert len(names) == len(set(names)), f"{name}.__all__ has duplicates"
    for attr in names:
        assert getattr(module, attr) is not None


def test_design_public_names_are_exported() -> None:
    expected = {
        "test", "describe", "expect", "judge", "evaluator",
        "before_each", "after_each", "before_all", "after_all",
        "Diagnosis", "RunResult", "Verdict", "run", "scenario",
    }  # fmt: skip
    assert expected <= set(sredrill.__all__)


SDK_SURFACE = {
    "test", "describe", "before_all", "after_all", "before_each", "after_each", "evaluator",
    "expect", "Expectation", "judge", "Judge", "JudgeSpec", "Verdict",
    "scenario", "ScenarioCase", "RCA_PROMPT",
    "AgentFixture", "FunctionTools", "RunResult", "TestInfo",
}  # fmt: skip
"""What a test author writes: the decorators and hooks, the matchers and judges, scenarios, and the types of the
built-in fixtures and of `agent.run()`'s result. Nothing of the engine's (`sredrill.harness`)."""


def test_sdk_exports_exactly_the_authoring_surface() -> None:
    import sredrill.harness
    import sredrill.sdk

    assert set(sredrill.sdk.__all__) == SDK_SURFACE
    machinery = set(sredrill.harness.__all__) - {"RunResult", "TestInfo"}  # the two the SDK hands to authors
    assert not machinery & set(sredrill.sdk.__all__)
    assert not [n for n in machinery if hasattr(sredrill.sdk, n)], "sredrill.sdk re-exports engine machinery"


def test_the_sdk_surface_is_the_harness_objects_themselves() -> None:
    # Re-exported, not copied: the engine's RunResult is the one a test body gets and type-checks against.
    import sredrill.harness
    import sredrill.sdk

    assert sredrill.sdk.RunResult is sredrill.harness.RunResult
    assert sredrill.sdk.TestInfo is sredrill.harness.TestInfo


def test_scenario_is_the_function_not_its_module() -> None:
    # `sredrill/sdk/scenario.py` shares its name with the function it defines: the package's attribute must
    # stay the function, whichever is imported first.
    code = (
        "import sredrill.sdk.scenario, sredrill, sredrill.sdk; from sredrill import scenario;"
        "print(callable(scenario) and sredrill.sdk.scenario is scenario and sredrill.scenario is scenario)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


HEAVY = (
    "fastapi", "starlette", "uvicorn", "sse_starlette", "websockets", "httpx", "httpcore", "anyio", "openai",
    "opentelemetry", "google.protobuf", "mcp", "gymnasium", "numpy", "ray", "rich", "typer", "jsonschema",
)  # fmt: skip
"""What the authoring surface (`from sredrill import test, expect, judge`) must not import: the server, HTTP
and model clients, tracing, the environment's extras, and the CLI's own libraries load where they are used."""


@pytest.mark.parametrize(
    "imports",
    ["import sredrill; from sredrill import test, expect, judge", "import sredrill.sdk", "import sredrill.harness"],
)
def test_the_authoring_surface_loads_no_heavy_dependency(imports: str) -> None:
    code = f"import sys; {imports}; heavy = [m for m in {HEAVY!r} if m in sys.modules]; print(','.join(heavy))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_light_import_check_sees_a_heavy_module() -> None:
    # The CLI loads typer: the same probe that finds nothing for the SDK finds it there.
    code = f"import sys, sredrill.cli; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "typer" in out.stdout.strip().split(",")
