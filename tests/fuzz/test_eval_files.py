"""Fuzzing the engine with generated eval files (issue: hardening, items 3 and 11).

Random mixes of passing and failing tests, syntax errors, bodies, hooks and fixtures raising every kind of
BaseException, fixtures that never yield or yield twice, and odd test names (unicode, lone surrogates,
duplicates) go through the engine in process. Whatever they do: no exception leaves the engine, every
discovered test and every broken file is reported, every errored result says why, and the report still
serializes (JSON and console).
"""

from __future__ import annotations

import asyncio
import io
import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sredrill.engine import LoadedTests, RunOptions, execute, load_eval_files
from sredrill.engine.reporters import make_reporter
from sredrill.harness import Runtime
from sredrill.results import TestResult, TestStatus
from sredrill.text import scrub

RAISES = [
    "sys.exit(0)",
    "sys.exit(1)",
    "sys.exit('bye')",
    "sys.exit()",
    "raise KeyboardInterrupt",
    "raise asyncio.CancelledError('mine')",
    "raise GeneratorExit",
    "raise Stop('custom')",
    "raise RuntimeError('boom')",
    "raise StopIteration",
    "raise StopAsyncIteration",
    "raise RecursionError('deep')",
    "raise BaseExceptionGroup('group', [KeyboardInterrupt(), ValueError('v')])",
    "raise ExceptionGroup('group', [ValueError('v')])",
    "raise TimeoutError('not the engine timing out')",
    "expect(1).to_be(2)",
    "expect.soft(1).to_be(2)",
    "pass",
]

PRELUDE = """\
import asyncio, sys
from sredrill import after_all, after_each, before_all, before_each, describe, expect, test

class Stop(BaseException):
    pass

"""

# Mostly names that register; sometimes ones that must not break anything: a duplicate in its scope or a lone
# surrogate (each makes its file a load error), control characters, combining marks.
plain_names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
names = st.one_of(
    plain_names,
    plain_names,
    plain_names,
    st.sampled_from(["same", "ünïcødé ✓ e\u0301", "tab\tname", "new\nline", "\x1b[31mred", "lone \ud800", "\udcff"]),
)
statements = st.sampled_from(RAISES)


@st.composite
def eval_source(draw: st.DrawFn) -> str:
    """The body of one eval file: tests, hooks and fixtures, each doing one of RAISES."""
    lines: list[str] = []
    fixtures: list[str] = []
    for i in range(draw(st.integers(0, 3))):
        shape = draw(st.sampled_from(["setup", "teardown", "no yield", "yields twice"]))
        stmt = draw(statements)
        name = f"fx{i}"
        fixtures.append(name)
        if shape == "setup":
            lines += [f"async def {name}():", f"    {stmt}", "    yield 1"]
        elif shape == "teardown":
            lines += [f"async def {name}():", "    yield 1", f"    {stmt}"]
        elif shape == "no yield":
            lines += [f"async def {name}():", "    if False:", "        yield 1"]
        else:
            lines += [f"async def {name}():", "    yield 1", "    yield 2"]
    extend = ", ".join(f"{f}={f}" for f in fixtures)
    lines.append(f"ftest = test.extend({extend})" if fixtures else "ftest = test")
    for i in range(draw(st.integers(0, 5))):
        hooked = draw(st.sampled_from([None, "before_each", "after_each", "before_all", "after_all"]))
        indent = ""
        if hooked is not None:
            lines += [f"with describe({f'scope {i}'!r}):", f"    @{hooked}", "    async def _():"]
            lines.append(f"        {draw(statements)}")
            indent = "    "
        used = draw(st.lists(st.sampled_from(fixtures), max_size=2, unique=True)) if fixtures else []
        params = ", ".join(used) or "test_info"
        lines += [
            f"{indent}@ftest({draw(names)!r})",
            f"{indent}async def _({params}):",
            f"{indent}    {draw(statements)}",
        ]
    return "\n".join(lines) + "\n"


eval_file = st.one_of(
    eval_source().map(lambda body: PRELUDE + body),
    st.sampled_from(
        [
            "def broken(:\n",  # a syntax error
            "import sys\nsys.exit(0)\n",
            "raise KeyboardInterrupt\n",
            "import asyncio\nraise asyncio.CancelledError()\n",
            "from sredrill import test\n\n@test('sync body')\ndef _(test_info): ...\n",
            "",
        ]
    ),
)

_examples = itertools.count()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _load_errors(loaded: LoadedTests) -> list[TestResult]:
    # As `sredrill test` reports them: one errored result per file that failed to load.
    return [
        TestResult(id=e.path or "?", name=e.path or "?", status=TestStatus.ERRORED, failure_reason=e.render(),
                   duration_ms=0.0)
        for e in loaded.errors
    ]  # fmt: skip


@settings(settings.get_profile("fuzz"))
@given(files=st.lists(eval_file, min_size=1, max_size=3))
def test_generated_eval_files_never_break_the_engine(project: Path, files: list[str]) -> None:
    root = project / f"example{next(_examples)}"  # fresh paths: every example imports its own modules
    root.mkdir()
    paths = []
    for i, source in enumerate(files):
        path = root / f"gen{i}_eval.py"
        path.write_text(source, encoding="utf-8", errors="surrogateescape")
        paths.append(str(path))

    loaded = load_eval_files(paths)  # never raises: a broken file is one error naming it
    assert all(e.path and "gen" in e.path and e.render() for e in loaded.errors)
    out = io.StringIO()
    listener = make_reporter("json", output=None, stdout=out, stderr=io.StringIO())
    # In process (the engine's own path, `run_test` under `execute`): nothing the tests do may escape it.
    report = asyncio.run(
        execute(
            loaded.tests,
            Runtime(run_id="fuzz", agent=None),
            RunOptions(),
            listener=listener,
            store=None,
            title="fuzz",
            preset=_load_errors(loaded),
        )
    )

    assert len(report.results) == len(loaded.tests) + len(loaded.errors)  # discovered = reported
    assert {r.id for r in report.results} >= {scrub(t.id)[0] for t in loaded.tests}
    for result in report.results:
        if result.status == TestStatus.ERRORED:
            assert result.failure_reason, result
    assert len(json.loads(out.getvalue())["results"]) == len(report.results)  # the report serializes
    console = io.StringIO()
    make_reporter("console", output=None, stdout=console, stderr=io.StringIO()).on_run_end(report)
    assert report.summary.passed == len(report.results) or "failures (" in console.getvalue()
