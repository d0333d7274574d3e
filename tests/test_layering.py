"""The import rule of DESIGN §1: a module imports only modules listed above it, so data flows one way."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "sredrill"

# DESIGN §1's table, top to bottom. Modules on one row may not import each other's row-mates upward either:
# the order inside a row is the order given here.
LAYERS = [
    "errors",
    "text",
    "processes",
    "workers",
    "trajectory",
    "diagnosis",
    "results",
    "scenarios",
    "evidence",
    "grading",
    "incidents",
    "env",
    "traces",
    "agents",
    "store",
    "harness",
    "sdk",
    "engine",
    "server",
    "cli_scenarios",
    "cli",
]
# Package-level files that belong to no layer: the lazy public face and the entry point.
EXEMPT = {"__init__", "__main__"}


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "sredrill" or len(parts) < 2:
        return None
    return parts[1]


def imports_of(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    rel = path.relative_to(SRC.parent).with_suffix("")
    package = list(rel.parts[:-1])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                found.append((node.lineno, ".".join([*base, node.module or ""]).rstrip(".")))
            elif node.module:
                found.append((node.lineno, node.module))
    return found


def test_every_module_imports_only_upward_layers() -> None:
    violations = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC)
        own = rel.parts[0].removesuffix(".py")
        if own in EXEMPT:
            continue
        assert own in LAYERS, f"{rel}: module {own!r} is not in DESIGN §1's table; add it to LAYERS"
        for lineno, module in imports_of(path):
            target = layer_of(module)
            if target is None or target == own:
                continue
            if target not in LAYERS or LAYERS.index(target) > LAYERS.index(own):
                violations.append(f"{rel}:{lineno}: {own} imports {module} (a layer below it)")
    assert not violations, "upward imports break the one-way data flow:\n" + "\n".join(violations)


def test_the_checker_catches_an_upward_import(tmp_path: Path) -> None:
    bad = SRC / "errors.py"
    tree = imports_of(bad)
    assert all(layer_of(m) in (None, "errors") for _, m in tree)
    assert layer_of("sredrill.engine.runner") == "engine"
    assert LAYERS.index("engine") > LAYERS.index("sdk")


def private_imports(path: Path) -> list[str]:
    """`from M import _name` of our own modules (absolute `sredrill…` or relative): another module's private name."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.ImportFrom) or node.module == "__future__":
            continue
        ours = node.level > 0 or (node.module or "").split(".")[0] in {"sredrill", *LOCAL_TOOLS}
        if ours:
            found += [f"{node.lineno}: {a.name}" for a in node.names if a.name.startswith("_")]
    return found


LOCAL_TOOLS = {p.stem for p in (SRC.parents[1] / "tools").glob("*.py")}
"""The generator scripts in tools/ import each other by file name."""


def test_no_module_imports_another_modules_private_names() -> None:
    # A private name is its module's to change: reaching for it from elsewhere ties two modules together
    # where nobody sees it. Make it public (and documented) instead.
    paths = [*SRC.rglob("*.py"), *(SRC.parents[1] / "tools").glob("*.py")]
    bad = [f"{p.relative_to(SRC.parents[1])}:{hit}" for p in paths for hit in private_imports(p)]
    assert not bad, "imports of another module's private names:\n" + "\n".join(bad)


def test_the_private_import_check_sees_one(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from sredrill.harness.context import _current\nfrom .x import ok, _hidden\nimport os\n")
    assert private_imports(module) == ["1: _current", "2: _hidden"]
