"""Loading eval files: import each one once, collect what it registers, keep going past broken files."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sredrill.errors import EvalFileError
from sredrill.harness import TestDef, collecting, display_path, exit_text

__all__ = ["LoadedTests", "discover_files", "load_eval_files", "select_tests"]

EVAL_PATTERNS = ("*_eval.py", "eval_*.py")
_SKIP_DIRS = {"__pycache__", ".venv", ".tools", "node_modules", ".git"}


@dataclass(slots=True)
class LoadedTests:
    """Every test and evaluator the given files registered, and one error per file that failed to load."""

    tests: list[TestDef] = field(default_factory=list)
    evaluators: dict[str, Callable[..., Any]] = field(default_factory=dict)
    errors: list[EvalFileError] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    empty_folders: list[EvalFileError] = field(default_factory=list)
    """The errors of `errors` that are a named folder with no eval file in it (nothing selected, as pytest)."""


def discover_files(paths: Sequence[str | Path]) -> tuple[list[Path], list[EvalFileError]]:
    """Files named on the command line, and eval files (`*_eval.py`, `eval_*.py`) inside named folders."""
    files, errors, _ = _discover(paths)
    return files, errors


def _discover(paths: Sequence[str | Path]) -> tuple[list[Path], list[EvalFileError], list[EvalFileError]]:
    """`discover_files`, and which of its errors are folders with no eval file."""
    files: list[Path] = []
    errors: list[EvalFileError] = []
    empty: list[EvalFileError] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            found = sorted(
                p
                for pattern in EVAL_PATTERNS
                for p in path.rglob(pattern)
                if not (_SKIP_DIRS & set(p.relative_to(path).parts))
            )
            if not found:
                error = EvalFileError(
                    "no eval files in this folder",
                    path=display_path(path),
                    hint=f"eval files are named {' or '.join(EVAL_PATTERNS)}",
                )
                errors.append(error)
                empty.append(error)
            files.extend(found)
        else:
            errors.append(EvalFileError("no such file or folder", path=str(raw), hint="check the path"))
    unique = list(dict.fromkeys(p.resolve() for p in files))
    return unique, errors, empty


def _import(path: Path, display: str) -> Any:
    # A unique module name per file: two eval files with the same name in different folders do not clash,
    # and the SDK they import is the one already in sys.modules (one SDK instance however they import it).
    name = "sredrill_eval_" + re.sub(r"\W", "_", path.stem) + "_" + hashlib.sha1(str(path).encode()).hexdigest()[:8]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise EvalFileError("cannot be imported as Python", path=display)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder = str(path.parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except EvalFileError as exc:
        sys.modules.pop(name, None)
        if exc.path is None:
            exc.path = display
            exc.args = (exc.render(),)
        raise
    except SyntaxError as exc:
        sys.modules.pop(name, None)
        raise EvalFileError(f"syntax error: {exc.msg}", path=f"{display}:{exc.lineno}") from exc
    except BaseException as exc:  # the loader's per-file boundary: one broken file never stops the others
        # sys.exit(), KeyboardInterrupt, GeneratorExit or any other BaseException at import is the file's own
        # (loading is synchronous: a real Ctrl-C reaches the engine as a cancellation at its next await).
        sys.modules.pop(name, None)
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
        where = f"{display}:{frames[-1].lineno}" if frames else display
        what = f"{type(exc).__name__}: {exc}" if isinstance(exc, Exception) else exit_text(exc, "its top-level code")
        raise EvalFileError(f"importing the file raised {what}", path=where) from exc
    finally:
        if added:
            sys.path.remove(folder)
    return module


def load_eval_files(paths: Sequence[str | Path]) -> LoadedTests:
    """Import every eval file once and collect its tests and evaluators.

    A file that fails to import (syntax error, exception, `sys.exit()` or any BaseException, invalid
    registration) adds one EvalFileError naming the file and line; the other files still load.
    """
    files, errors, empty = _discover(paths)
    loaded = LoadedTests(errors=errors, empty_folders=empty)
    cwd = str(Path.cwd())
    if cwd not in sys.path:
        sys.path.insert(0, cwd)  # so `py:examples.agents...` and helpers next to the project import
    seen: set[str] = set()
    for path in files:
        display = display_path(path)
        loaded.files.append(display)
        with collecting(path, display) as suite:
            try:
                _import(path, display)
            except EvalFileError as exc:
                loaded.errors.append(exc)
                continue
        for name, fn in suite.evaluators.items():
            other = loaded.evaluators.get(name)
            if other is not None and other is not fn:
                loaded.errors.append(
                    EvalFileError(f"evaluator {name!r} is also registered by another file", path=display)
                )
                continue
            loaded.evaluators[name] = fn
        for t in suite.tests:
            if t.id not in seen:  # a file imported by another registers into both; keep one
                seen.add(t.id)
                loaded.tests.append(t)
        if not suite.tests:
            loaded.warnings.append(f"{display}: registers no tests (decorate async functions with @test(...))")
    return loaded


def select_tests(tests: Iterable[TestDef], *, grep: str | None = None, labels: Sequence[str] = ()) -> list[TestDef]:
    """Tests whose id matches `grep` (re.search) and that carry every label given."""
    pattern = None
    if grep:
        try:
            pattern = re.compile(grep)
        except re.error as exc:
            raise EvalFileError(f"--grep {grep!r} is not a valid regular expression: {exc}") from exc
    out = []
    for t in tests:
        if pattern and not pattern.search(t.id):
            continue
        if any(label not in t.labels for label in labels):
            continue
        out.append(t)
    return out


def environ_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}
