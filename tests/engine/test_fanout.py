"""`FanOut` and `choose_reporters` in process: every reporter hears every event in order, one that fails does
not stop the others, and the choices a user gives are checked before anything runs."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from sredrill.engine.reporters.fanout import FanOut, ReporterChoice, choose_reporters, make_reporters
from sredrill.errors import InputError
from sredrill.results import RunReport, TestResult, TestStatus
from tests.store.test_store import report_of, result


class Recording:
    def __init__(self, name: str, log: list[str], *, fails: bool = False, shows_stop: bool = False) -> None:
        self.name, self.log, self.fails = name, log, fails
        if shows_stop:
            self.on_run_stopped = lambda message: log.append(f"{name} stopped: {message}")

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None:
        self.log.append(f"{self.name} start {run_id} {total}")

    def on_test_start(self, test_id: str, name: str) -> None:
        self.log.append(f"{self.name} test {test_id}")

    def on_test_end(self, result: TestResult) -> None:
        self.log.append(f"{self.name} end {result.id}")

    def on_run_end(self, report: RunReport) -> None:
        self.log.append(f"{self.name} report")
        if self.fails:
            raise OSError(f"{self.name}: disk full")


def _play(fanout: FanOut) -> None:
    fanout.on_run_start("r1", 1, title="t")
    fanout.on_test_start("a", "a")
    fanout.on_test_end(result("a"))
    fanout.on_run_end(report_of("r1", [result("a")]))


def test_every_reporter_hears_every_event_in_the_order_given() -> None:
    log: list[str] = []
    _play(FanOut([Recording("one", log), Recording("two", log)], stderr=io.StringIO()))
    assert log == [
        "one start r1 1", "two start r1 1", "one test a", "two test a", "one end a", "two end a",
        "one report", "two report",
    ]  # fmt: skip


def test_a_reporter_that_fails_does_not_stop_the_others_and_its_error_comes_after() -> None:
    log: list[str] = []
    fanout = FanOut([Recording("one", log, fails=True), Recording("two", log)], stderr=io.StringIO())
    with pytest.raises(OSError, match="one: disk full"):
        _play(fanout)
    assert log[-2:] == ["one report", "two report"]


def test_the_maxfail_stop_goes_to_a_reporter_that_shows_it_else_to_stderr_after_the_reports() -> None:
    log: list[str] = []
    FanOut([Recording("one", log, shows_stop=True)], stderr=io.StringIO()).on_run_stopped("stopped after 1")
    assert log == ["one stopped: stopped after 1"]
    stderr = io.StringIO()
    quiet = FanOut([Recording("two", [])], stderr=stderr)
    quiet.on_run_stopped("stopped after 1")
    assert stderr.getvalue() == ""  # not before the reports
    quiet.on_run_end(report_of("r1", [result("a", TestStatus.FAILED)]))
    assert stderr.getvalue() == "stopped after 1\n"


def test_file_reporters_keep_the_console_and_write_their_files(tmp_path: Path) -> None:
    choices = choose_reporters([f"junit={tmp_path / 'r.xml'}", f"json={tmp_path / 'r.json'}"], output=None)
    assert [c.name.value for c in choices] == ["junit", "json", "console"]
    stdout = io.StringIO()
    _play(make_reporters(choices, stdout=stdout, stderr=io.StringIO(), color=False))
    assert (tmp_path / "r.xml").read_text().startswith("<?xml")
    assert RunReport.model_validate_json((tmp_path / "r.json").read_text()).run_id == "r1"
    assert " · 1 passed · 0 failed · 0 errored" in stdout.getvalue()


@pytest.mark.parametrize(
    ("values", "output", "words"),
    [
        (["consol"], None, "did you mean 'console'"),
        (["junit="], None, "the path after '=' is empty"),
        (["junit"], None, "junit writes a file, and none was given"),
        (["json", "console"], None, "json and console would both write to stdout"),
        (["junit=same.xml", "html=same.xml"], None, "write the same file"),
        (["junit", "html"], Path("x"), "it names the file of a single reporter"),
    ],
)
def test_a_bad_choice_is_an_input_error_that_names_it(
    tmp_path: Path, values: list[str], output: Path | None, words: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=words):
        choose_reporters(values, output=output)


def test_a_folder_is_not_a_report_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="it is a folder"):
        choose_reporters([f"html={tmp_path}"], output=None)
    assert str(ReporterChoice(choose_reporters(["json"], output=None)[0].name, None)) == "json"
