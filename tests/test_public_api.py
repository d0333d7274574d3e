"""The public API of DESIGN §1: every package declares its `__all__`, each complete and true, the SDK exactly the
authoring surface, and `import sredrill` stays light."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import sredrill

SRC = Path(__file__).resolve().parents[1] / "src" / "sredrill"


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def runtime_body(tree: ast.Module) -> list[ast.stmt]:
    """The statements that run at import: the module's own, those under `if`/`try` too, not `TYPE_CHECKING`."""
    out: list[ast.stmt] = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If):
                if "TYPE_CHECKING" not in ast.unparse(node.test):
                    visit(node.body)
                    visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
            else:
                out.append(node)

    visit(tree.body)
    return out


def declared_all(tree: ast.Module) -> list[str] | None:
    """The module's `__all__` as written (a literal list of names), or None when it has none."""
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            assert isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None
            names = ast.literal_eval(node.value)
            assert isinstance(names, list) and all(isinstance(n, str) for n in names), "__all__ must be a list of str"
            return names
    return None


def defined_names(tree: ast.Module) -> dict[str, str]:
    """Every name the module binds at import -> how: "def" (a def, class or assignment) or the module it imports."""
    out: dict[str, str] = {}
    for node in runtime_body(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out[node.name] = "def"
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                out.update((n.id, "def") for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Import):
            out.update(((a.asname or a.name).split(".")[0], a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = "." * node.level + (node.module or "")
            out.update((a.asname or a.name, source) for a in node.names)
    return out


def modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


PACKAGE_INITS = [p for p in modules() if p.name == "__init__.py"]


def test_every_package_declares_all() -> None:
    missing = [module_name(p) for p in PACKAGE_INITS if declared_all(ast.parse(p.read_text())) is None]
    hint = "add one (`__all__: list[str] = []` when it exports nothing)"
    assert not missing, f"packages without __all__: {missing}; {hint}"


def all_problems(path: Path) -> list[str]:
    """What is wrong with one module's `__all__`: a name twice, or a name the module does not have."""
    tree = ast.parse(path.read_text())
    names = declared_all(tree)
    if names is None:
        return []
    problems = [f"{n!r} is listed twice" for n in sorted({n for n in names if names.count(n) > 1})]
    defined = defined_names(tree)
    unknown = [n for n in names if n not in defined]
    if unknown and "__getattr__" in defined:  # a lazy face (STYLE #3): its names resolve on first access
        module = importlib.import_module(module_name(path))
        unknown = [n for n in unknown if not hasattr(module, n)]
    problems += [f"{n!r} is listed but not defined" for n in unknown]
    return problems


def test_every_all_lists_each_name_once_and_only_names_that_exist() -> None:
    # Sorting is ruff's (RUF022: constants, then classes, then functions); this checks what ruff cannot.
    bad = [f"{module_name(p)}: {problem}" for p in modules() for problem in all_problems(p)]
    assert not bad, "\n".join(bad)


def unlisted_reexports(path: Path) -> list[str]:
    """Public names a package's `__init__` imports from sredrill, or defines, that its `__all__` leaves out."""
    tree = ast.parse(path.read_text())
    listed = set(declared_all(tree) or ())
    ours = [n for n, how in defined_names(tree).items() if how == "def" or how.startswith(("sredrill", "."))]
    return sorted(n for n in ours if not n.startswith("_") and n not in listed)


def test_every_package_lists_what_it_gives() -> None:
    # A package's face is its __all__: a name imported into `__init__` but not listed is exported by accident.
    bad = {module_name(p): names for p in PACKAGE_INITS if (names := unlisted_reexports(p))}
    assert not bad, f"names a package imports or defines but leaves out of __all__: {bad}"
    # The lazy faces (STYLE #3) give what their `_LAZY` table names: all of it listed too.
    for path in PACKAGE_INITS:
        if "_LAZY" in defined_names(ast.parse(path.read_text())):
            module = importlib.import_module(module_name(path))
            assert set(module._LAZY) <= set(module.__all__), f"{module.__name__}: lazy names left out of __all__"


def test_the_all_checks_see_what_is_wrong(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_text(
        "from sredrill.errors import InputError, StateError\nfrom typing import Any\n"
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from sredrill.store import Store\n"
        "LIMIT = 3\n__all__ = ['InputError', 'Missing', 'InputError']\n"
    )
    assert all_problems(init) == ["'InputError' is listed twice", "'Missing' is listed but not defined"]
    assert unlisted_reexports(init) == ["LIMIT", "StateError"]  # not `Any` (not ours), not `Store` (typing only)
    assert declared_all(ast.parse("x = 1\n")) is None


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
