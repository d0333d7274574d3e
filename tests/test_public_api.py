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


def test_import_sredrill_loads_no_heavy_dependency() -> None:
    code = (
        "import sys, sredrill; from sredrill import test, expect, judge;"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
