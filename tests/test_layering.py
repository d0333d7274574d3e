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
    # Interval and paired-test arithmetic on counts (issue 20): every surface showing a pass rate reads it.
    "stats",
    "processes",
    # Isolation levels, agent environments and the sandbox (issue 17): the workers and connectors wrap the
    # processes they start with it; it needs only errors.
    "isolation",
    "workers",
    "trajectory",
    "diagnosis",
    "results",
    "scenarios",
    "evidence",
    # After evidence (DESIGN puts it just after scenarios): a domain's tool handlers are built on the evidence
    # layer's primitives (time filters, points, argument models). Nothing below imports a domain: the loader,
    # the toolset and grading reach it through the registry (`scenarios.domain.DOMAINS`, lazy "module:attr").
    "domains",
    # Scenario generators (issue 18): they write the pack format of `scenarios` with a domain's vocabulary.
    "generate",
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


def module_files(root: Path) -> dict[str, Path]:
    """Every module under the package folder `root`, by dotted name (a package's `__init__.py` is the package)."""
    out = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def import_graph(root: Path) -> dict[str, dict[str, int]]:
    """Module -> the modules of the same tree it imports, with a line of each import.

    Every import counts, wherever it is (module level, inside a function, under `TYPE_CHECKING`): each ties
    the two files together. `from package import name` counts as an import of `package` (its `__init__`
    runs and is read first) and, when `name` is a submodule, of that submodule too.
    """
    files = module_files(root)
    graph: dict[str, dict[str, int]] = {}
    for name, path in files.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join([*package[: len(package) - node.level + 1], *([base] if base else [])])
                targets = [base, *(f"{base}.{a.name}" for a in node.names)]
            for target in targets:
                if target in files and target != name:
                    edges.setdefault(target, node.lineno)
        graph[name] = edges
    return graph


def import_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or around a circle (Tarjan's SCCs), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(groups)


def describe_cycle(graph: dict[str, dict[str, int]], group: list[str]) -> str:
    members = set(group)
    edges = [f"  {src} -> {dst} (line {graph[src][dst]})" for src in group for dst in graph[src] if dst in members]
    return " <-> ".join(group) + "\n" + "\n".join(edges)


def test_no_import_circles_between_files() -> None:
    # Two files that import each other (even inside a function) load in an order that works by accident, and
    # neither can be understood or moved alone. Import from the defining submodule, not the package, or move
    # the shared piece down into a module both import.
    graph = import_graph(SRC)
    cycles = import_cycles(graph)
    assert not cycles, "import circles:\n" + "\n".join(describe_cycle(graph, c) for c in cycles)


def test_no_import_circles_between_the_tools() -> None:
    # tools/ are scripts importing each other by file name (`from rds_drill import Drill`).
    files = {p.stem: p for p in (SRC.parents[1] / "tools").glob("*.py")}
    graph: dict[str, dict[str, int]] = {}
    for name, path in files.items():
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                targets = [node.module or ""]
            else:
                continue
            for target in targets:
                if target in files and target != name:
                    edges.setdefault(target, node.lineno)
        graph[name] = edges
    assert len(graph) >= 3 and any(graph.values())  # it sees the scripts and their imports
    cycles = import_cycles(graph)
    assert not cycles, "import circles:\n" + "\n".join(describe_cycle(graph, c) for c in cycles)


def test_the_cycle_check_catches_planted_circles(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from pkg.a import A\n")
    (pkg / "a.py").write_text("A = 1\n\ndef f():\n    from .b import B\n")  # a function-level import counts
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import A\nB = 2\n")
    (pkg / "sub" / "__init__.py").write_text("from .c import C\n")
    (pkg / "sub" / "c.py").write_text("from pkg.sub import d\nC = 3\n")  # through its own package's __init__
    (pkg / "sub" / "d.py").write_text("import pkg.a\n")  # imports upward only: no circle
    graph = import_graph(pkg)
    assert graph["pkg.sub.c"] == {"pkg.sub": 1, "pkg.sub.d": 1}
    assert import_cycles(graph) == [["pkg.a", "pkg.b"], ["pkg.sub", "pkg.sub.c"]]
    assert "pkg.a -> pkg.b (line 4)" in describe_cycle(graph, ["pkg.a", "pkg.b"])
