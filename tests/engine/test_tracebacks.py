"""Tracebacks and failed asserts as users read them, and what `run_test` fills from them.

In process: eval files written to `tmp_path` (the user's code, outside sredrill's package) run through the
engine's `run_eval_files`, plus the formatter on exceptions raised by code compiled from those files.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from sredrill.engine import RunOptions, Settings, run_eval_files
from sredrill.engine.tracebacks import (
    TRACEBACK_LIMIT_CHARS,
    assert_failure,
    format_trace,
    format_traceback,
    is_user_file,
)
from sredrill.results import RunReport, SignalKind, SignalRole, TestResult, TestStatus
from sredrill.workers import ExceptionTrace, TraceFrame, attach_trace


class Collect:
    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: TestResult) -> None: ...
    def on_run_end(self, report: RunReport) -> None: ...


@pytest.fixture(autouse=True)
def _cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.write_text(textwrap.dedent(text))
    return path


async def run(path: Path, *, agent: str | None = None) -> dict[str, TestResult]:
    report = await run_eval_files(
        [str(path)], settings=Settings(agent=agent), options=RunOptions(), listener=Collect(), store=None
    )
    return {r.name: r for r in report.results}


def raised(tmp_path: Path, source: str, call: str = "main()") -> BaseException:
    """Run `source` as a user's module in tmp_path (a real file, so its lines can be read) and return the error."""
    path = write(tmp_path, "usermod.py", source)
    namespace: dict[str, object] = {"__name__": "usermod"}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    try:
        exec(call, namespace)
    except BaseException as exc:  # the error under test, whatever it is
        # From the user's module on, as if it had been called by sredrill (whose frames are hidden anyway).
        tb = exc.__traceback__
        assert tb is not None and tb.tb_next is not None
        return exc.with_traceback(tb.tb_next.tb_next)
    raise AssertionError("the code did not raise")


# -- the formatter --------------------------------------------------------------------------------------------


def test_user_files_are_neither_sredrill_nor_the_standard_library_nor_installed_packages(tmp_path: Path) -> None:
    import asyncio
    import json

    import pydantic

    import sredrill.engine.runner

    assert is_user_file(str(tmp_path / "evals.py"))
    assert not is_user_file(sredrill.engine.runner.__file__)
    assert not is_user_file(json.__file__) and not is_user_file(asyncio.__file__)
    assert not is_user_file(pydantic.__file__)
    assert not is_user_file("<frozen importlib._bootstrap>")


def test_the_users_frames_are_shown_with_path_line_function_and_source(tmp_path: Path) -> None:
    exc = raised(
        tmp_path,
        """
        def helper(key):
            return {"a": 1}[key]

        def main():
            helper("b")
        """,
    )
    text = format_traceback(exc)
    assert text == (
        'usermod.py:6 in main\n    helper("b")\nusermod.py:3 in helper\n    return {"a": 1}[key]\nKeyError: \'b\''
    )


def test_a_library_that_raised_keeps_its_innermost_frame_and_no_other(tmp_path: Path) -> None:
    exc = raised(tmp_path, "import json\n\ndef main():\n    json.loads('{nope')\n")
    text = format_traceback(exc)
    assert text is not None
    lines = text.splitlines()
    assert lines[:2] == ["usermod.py:4 in main", "    json.loads('{nope')"]
    assert sum("json" in line and ".py:" in line for line in lines) == 1  # json/decoder.py, where it raised
    assert lines[-1].startswith("JSONDecodeError: Expecting property name")


def test_a_chain_is_shown_cause_first_as_python_prints_it(tmp_path: Path) -> None:
    exc = raised(
        tmp_path,
        """
        def main():
            try:
                int("x")
            except ValueError as exc:
                raise RuntimeError("bad config") from exc
        """,
    )
    text = format_traceback(exc) or ""
    first, second = text.split("\n\nThe above exception was the direct cause of the following:\n\n")
    assert first.endswith("ValueError: invalid literal for int() with base 10: 'x'")
    assert second.endswith("RuntimeError: bad config") and 'raise RuntimeError("bad config") from exc' in second


def test_an_exception_group_lists_its_members(tmp_path: Path) -> None:
    exc = raised(
        tmp_path,
        """
        def main():
            raise ExceptionGroup("two failed", [ValueError("one"), KeyError("two")])
        """,
    )
    text = format_traceback(exc) or ""
    assert "ExceptionGroup: two failed (2 sub-exceptions)\n" in text
    assert "  [1]\n    ValueError: one" in text and "  [2]\n    KeyError: 'two'" in text


def test_a_deep_recursion_keeps_head_and_tail_and_says_what_it_left_out(tmp_path: Path) -> None:
    exc = raised(tmp_path, "def main(n=0):\n    return main(n + 1)\n")
    assert isinstance(exc, RecursionError)
    text = format_traceback(exc) or ""
    assert re.match(r"… \d+ frames left out of the middle \(a deep recursion\) …\n", text)
    assert text.count("usermod.py:2 in main") == 50  # 10 head frames and 40 tail frames
    assert len(text) < TRACEBACK_LIMIT_CHARS


def test_no_user_frame_means_no_traceback() -> None:
    trace = ExceptionTrace(
        type_name="AgentError",
        message="agent command exited with code 1",
        frames=[TraceFrame(path=__import__("sredrill").__file__, line=1, function="run", source="x")],
    )
    assert format_trace(trace) is None


def test_a_long_traceback_keeps_its_end(tmp_path: Path) -> None:
    frames = [TraceFrame(path=str(tmp_path / f"m{i}.py"), line=i, function="f", source="x" * 150) for i in range(200)]
    trace = ExceptionTrace(type_name="ValueError", message="the end", frames=frames)
    text = format_trace(trace) or ""
    assert text.startswith("[sredrill] traceback cut") and text.endswith("ValueError: the end")
    assert len(text) <= TRACEBACK_LIMIT_CHARS + 100


def test_a_trace_from_a_worker_is_shown_as_the_cause(tmp_path: Path) -> None:
    remote = ExceptionTrace(
        type_name="RuntimeError",
        message="disk on fire",
        frames=[TraceFrame(path=str(tmp_path / "agent.py"), line=3, function="agent", source="raise RuntimeError()")],
    )
    exc = raised(tmp_path, "def main():\n    raise ValueError('local')\n")
    attach_trace(exc, remote)
    text = format_traceback(exc) or ""
    assert text.startswith("agent.py:3 in agent\n    raise RuntimeError()\nRuntimeError: disk on fire\n\nThe above")
    assert text.endswith("ValueError: local")


# -- plain asserts --------------------------------------------------------------------------------------------


def test_a_failed_assert_shows_its_source_and_the_values_of_its_names(tmp_path: Path) -> None:
    exc = raised(
        tmp_path,
        """
        class Box:
            def __init__(self):
                self.items = [1, 2]

        def main():
            total = 3
            box = Box()
            data = {"k": "v"}
            assert total == len(box.items) + 2 and data["k"] == "w", "too few"
        """,
    )
    assert isinstance(exc, AssertionError)
    found = assert_failure(exc)
    assert found is not None
    assert found.where == 'usermod.py:10: assert total == len(box.items) + 2 and data["k"] == "w", "too few"'
    assert found.message.splitlines() == [
        'too few: assert total == len(box.items) + 2 and data["k"] == "w"',
        "  where total = 3",
        "  where box.items = [1, 2]",
        "  where data[\"k\"] = 'v'",
    ]


def test_reading_values_runs_no_code_of_the_user(tmp_path: Path) -> None:
    exc = raised(
        tmp_path,
        """
        calls = []

        class Sneaky:
            @property
            def value(self):
                calls.append("property")
                return 1

            def method(self):
                calls.append("method")
                return 2

        def main():
            s = Sneaky()
            assert s.value == s.method() + 5
        """,
    )
    assert isinstance(exc, AssertionError)
    namespace_calls = exc.__traceback__.tb_frame.f_globals["calls"]  # type: ignore[union-attr]
    before = list(namespace_calls)
    found = assert_failure(exc)
    assert found is not None and namespace_calls == before  # no property, no method ran
    assert found.message.startswith("assert s.value == s.method() + 5\n  where s = <usermod.Sneaky object")


def test_a_multi_line_assert_is_shown_on_one_line(tmp_path: Path) -> None:
    exc = raised(tmp_path, "def main():\n    x = 1\n    assert (\n        x == 2\n    )\n")
    assert isinstance(exc, AssertionError)
    found = assert_failure(exc)
    assert found is not None
    assert found.where == "usermod.py:3: assert ( x == 2 )"
    assert found.message == "assert x == 2\n  where x = 1"


def test_a_raised_assertion_error_is_shown_as_raised(tmp_path: Path) -> None:
    exc = raised(tmp_path, "def main():\n    raise AssertionError('by hand')\n")
    assert isinstance(exc, AssertionError)
    found = assert_failure(exc)
    assert found is not None
    assert (found.where, found.message) == ("usermod.py:2: raise AssertionError('by hand')", "AssertionError: by hand")


# -- through the engine ---------------------------------------------------------------------------------------

EVAL = """
import asyncio
from sredrill import before_each, describe, expect, test

@test("raises in the body")
async def _(test_info):
    int("x")

@test("plain assert", prompt="p")
async def _(test_info):
    count = 2
    assert count == 3

@test("expect fails")
async def _(test_info):
    expect([1, 2]).to_equal([1, 3])

@test("hangs in the body", timeout=0.5)
async def _(test_info):
    await asyncio.sleep(30)

with describe("hooked"):
    @before_each
    async def _():
        assert 1 == 2

    @test("assert in a hook")
    async def _(test_info): ...
"""


async def test_run_test_fills_traceback_error_type_and_where(tmp_path: Path) -> None:
    results = await run(write(tmp_path, "fail_eval.py", EVAL))

    body = results["raises in the body"]
    assert (body.status, body.error_type, body.error_where) == (TestStatus.ERRORED, "ValueError", "the test body")
    assert body.traceback == (
        "fail_eval.py:7 in _\n    int(\"x\")\nValueError: invalid literal for int() with base 10: 'x'"
    )

    plain = results["plain assert"]
    assert plain.status == TestStatus.FAILED and plain.error_type is None and plain.error_where is None
    assert plain.failure_reason == "assert count == 3\n  where count = 2"
    (signal,) = [s for s in plain.signals if s.name == "assert"]
    assert (signal.kind, signal.role, signal.passed) == (SignalKind.EXPECT, SignalRole.GATE, False)
    assert signal.where == "fail_eval.py:12: assert count == 3"
    assert plain.traceback is not None and plain.traceback.endswith("    assert count == 3\nAssertionError")

    failed = results["expect fails"]
    assert failed.status == TestStatus.FAILED and failed.traceback is None
    (signal,) = [s for s in failed.signals if s.name == "to_equal"]
    assert signal.where == "fail_eval.py:16: expect([1, 2]).to_equal([1, 3])"

    hung = results["hangs in the body"]
    assert (hung.error_type, hung.error_where) == ("timeout", "the test body")
    assert hung.failure_reason == "timed out after 0.5s in the test body"
    assert hung.traceback == (
        "fail_eval.py:20 in _\n    await asyncio.sleep(30)\nstopped here: timed out after 0.5s in the test body"
    )

    hook = results["assert in a hook"]  # in a hook an assert is that hook's error, as in pytest
    assert (hook.status, hook.error_type, hook.error_where) == (
        TestStatus.ERRORED,
        "AssertionError",
        "a before_each hook",
    )
    assert hook.traceback is not None and "assert 1 == 2" in hook.traceback


async def test_a_py_agents_error_shows_the_agents_frames_and_the_call(tmp_path: Path) -> None:
    write(tmp_path, "crash_agent.py", "async def agent(task):\n    return {}['missing']\n")
    path = write(
        tmp_path,
        "agent_eval.py",
        """
        from sredrill import test

        @test("the agent raises", prompt="p")
        async def _(agent):
            await agent.run()
        """,
    )
    r = (await run(path, agent="py:crash_agent:agent"))["the agent raises"]
    assert (r.status, r.error_type, r.error_where) == (TestStatus.ERRORED, "AgentError", "the agent (agent.run())")
    assert r.traceback is not None
    assert r.traceback.startswith("crash_agent.py:2 in agent\n    return {}['missing']\nKeyError: 'missing'")
    assert r.traceback.endswith(
        "agent_eval.py:6 in _\n    await agent.run()\nAgentError: agent raised KeyError: 'missing'"
    )


async def test_a_teardown_error_alone_is_errored_in_teardown(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "teardown_eval.py",
        """
        from sredrill import test

        async def db():
            yield 1
            raise RuntimeError("could not drop the schema")

        dtest = test.extend(db=db)

        @dtest("fails in teardown")
        async def _(db): ...
        """,
    )
    r = (await run(path))["fails in teardown"]
    assert (r.status, r.error_type, r.error_where) == (TestStatus.ERRORED, "RuntimeError", "teardown")
    assert r.traceback is not None and 'raise RuntimeError("could not drop the schema")' in r.traceback
