"""Registration errors are clear and found at load time, not partway through a run."""

from __future__ import annotations

from pathlib import Path

import pytest

from sredrill.errors import EvalFileError
from sredrill.harness import collecting
from sredrill.sdk import describe
from sredrill.sdk import test as sd_test


def _collect(tmp_path: Path, body):
    with collecting(tmp_path / "x_eval.py", "x_eval.py") as suite:
        body()
    return suite


def test_sync_body_is_rejected(tmp_path: Path) -> None:
    def body():
        @sd_test("sync")
        def _(agent): ...

    with pytest.raises(EvalFileError, match="must be `async def`"):
        _collect(tmp_path, body)


def test_unknown_fixture_names_the_closest(tmp_path: Path) -> None:
    def body():
        @sd_test("typo")
        async def _(agnet): ...

    with pytest.raises(EvalFileError, match="fixture 'agnet' not found; did you mean 'agent'"):
        _collect(tmp_path, body)


def test_duplicate_names_in_one_scope_are_rejected(tmp_path: Path) -> None:
    def body():
        for _i in range(2):

            @sd_test("same")
            async def _(agent): ...

    with pytest.raises(EvalFileError, match="registered twice"):
        _collect(tmp_path, body)


def test_describe_nests_ids(tmp_path: Path) -> None:
    def body():
        with describe("outer"), describe("inner"):

            @sd_test("t", labels=["difficulty:3"])
            async def _(agent): ...

    suite = _collect(tmp_path, body)
    assert suite.tests[0].id.endswith("::outer::inner::t")
    assert suite.tests[0].difficulty == 3


def test_test_outside_loading_says_how_to_run(tmp_path: Path) -> None:
    with pytest.raises(EvalFileError, match="sredrill test PATH"):
        sd_test("x")


def test_extend_rejects_sync_fixtures_and_builtin_names() -> None:
    def sync_fixture():
        yield 1

    with pytest.raises(EvalFileError, match="must be async"):
        sd_test.extend(db=sync_fixture)

    async def agent():
        yield 1

    with pytest.raises(EvalFileError, match="built in"):
        sd_test.extend(agent=agent)


def test_fixture_cycles_are_rejected(tmp_path: Path) -> None:
    async def a(b):
        yield 1

    async def b(a):
        yield 2

    it = sd_test.extend(a=a, b=b)

    def body():
        @it("cycle")
        async def _(a): ...

    with pytest.raises(EvalFileError, match="depends on itself"):
        _collect(tmp_path, body)


def test_content_hash_changes_with_the_body(tmp_path: Path) -> None:
    def one():
        @sd_test("t")
        async def _(agent):
            return 1

    def two():
        @sd_test("t")
        async def _(agent):
            return 2

    assert _collect(tmp_path, one).tests[0].content_hash != _collect(tmp_path, two).tests[0].content_hash
