"""Loading eval files: one SDK instance however a file imports it, discovery, selection, broken files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from sredrill.engine import discover_files, load_eval_files, select_tests


def _write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture(autouse=True)
def _cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_every_import_path_registers_into_the_same_suite(tmp_path: Path) -> None:
    _write(tmp_path, "shared_tests.py", """
        from sredrill.sdk.registry import test as registry_test

        @registry_test("from a helper module")
        async def _(agent): ...
    """)  # fmt: skip
    _write(tmp_path, "a_eval.py", """
        import sredrill
        from sredrill import test
        from sredrill.sdk import test as sdk_test
        import shared_tests  # noqa: F401

        @test("top-level import")
        async def _(agent): ...

        @sdk_test("package import")
        async def _(agent): ...

        @sredrill.test("attribute access")
        async def _(agent): ...
    """)  # fmt: skip
    loaded = load_eval_files([tmp_path / "a_eval.py"])
    assert not loaded.errors
    assert sorted(t.name for t in loaded.tests) == [
        "attribute access", "from a helper module", "package import", "top-level import",
    ]  # fmt: skip
    helper = next(t for t in loaded.tests if t.name == "from a helper module")
    assert helper.id == "shared_tests.py::from a helper module"  # ids name the file that defines the body


def test_a_helper_imported_by_two_eval_files_registers_once(tmp_path: Path) -> None:
    _write(tmp_path, "common.py", """
        from sredrill import test

        @test("shared")
        async def _(agent): ...
    """)  # fmt: skip
    _write(tmp_path, "one_eval.py", "import common  # noqa: F401\n")
    _write(tmp_path, "two_eval.py", "import common  # noqa: F401\n")
    loaded = load_eval_files([tmp_path])
    assert [t.id for t in loaded.tests] == ["common.py::shared"]


def test_discovery_finds_eval_files_and_reports_bad_paths(tmp_path: Path) -> None:
    _write(tmp_path, "evals/x_eval.py", "")
    _write(tmp_path, "evals/eval_y.py", "")
    _write(tmp_path, "evals/helper.py", "")
    _write(tmp_path, "evals/.venv/z_eval.py", "")
    files, errors = discover_files([tmp_path / "evals", tmp_path / "missing"])
    assert sorted(p.name for p in files) == ["eval_y.py", "x_eval.py"]
    assert len(errors) == 1 and "no such file" in errors[0].render()


def test_a_file_that_raises_at_import_is_named_with_its_line(tmp_path: Path) -> None:
    _write(tmp_path, "boom_eval.py", "x = 1\nraise RuntimeError('config missing')\n")
    _write(tmp_path, "ok_eval.py", "from sredrill import test\n\n@test('ok')\nasync def _(agent): ...\n")
    loaded = load_eval_files([tmp_path])
    assert [t.name for t in loaded.tests] == ["ok"]
    (error,) = loaded.errors
    assert error.render().startswith("boom_eval.py:2: importing the file raised RuntimeError: config missing")


def test_select_by_grep_and_label(tmp_path: Path) -> None:
    _write(tmp_path, "s_eval.py", """
        from sredrill import test

        @test("alpha", labels=["fast", "difficulty:1"])
        async def _(agent): ...

        @test("beta", labels=["slow"])
        async def _(agent): ...
    """)  # fmt: skip
    tests = load_eval_files([tmp_path]).tests
    assert [t.name for t in select_tests(tests, grep="alp")] == ["alpha"]
    assert [t.name for t in select_tests(tests, labels=["slow"])] == ["beta"]
    assert select_tests(tests, grep="zzz") == []
    with pytest.raises(Exception, match="not a valid regular expression"):
        select_tests(tests, grep="(")
