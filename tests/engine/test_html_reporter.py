"""The HTML reporter: the UI's run page as one self-contained file, from the factory and from the CLI."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from sredrill.engine import run as engine_run
from sredrill.engine.reporters import make_reporter
from sredrill.engine.reporters.html import render_run_html
from sredrill.errors import InputError
from tests.engine.test_reporters import drive, report_of, results


class _Refs(HTMLParser):
    """Every URL the page would fetch (src, href of stylesheets, url(...) in CSS)."""

    def __init__(self) -> None:
        super().__init__()
        self.fetched: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("src"):
            self.fetched.append(str(values["src"]))
        # A `data:` URI (the inline favicon) is part of the page, not a fetch.
        if tag == "link" and values.get("href") and not str(values["href"]).startswith("data:"):
            self.fetched.append(str(values["href"]))


def fetched_by(page: str) -> list[str]:
    parser = _Refs()
    parser.feed(page)
    return parser.fetched + re.findall(r"url\(([^)]*)\)", page)


def test_the_reporter_writes_one_self_contained_page(tmp_path: Path) -> None:
    out = tmp_path / "report" / "run.html"
    report = report_of(results())
    drive(make_reporter("html", output=out, stdout=io.StringIO(), stderr=io.StringIO()), report)
    page = out.read_text()
    assert page.startswith("<!doctype html>")
    assert fetched_by(page) == []
    assert "<style>" in page and "<svg" in page
    assert report.run_id in page
    assert "failure_modes" in page  # the first failed check of the failed RCA test
    assert "&lt;red&gt;" not in page and "[red]survives a crash" in page  # escaped, not markup
    assert "\x00" not in page or "agent crashed" in page
    assert 'href="/ui' not in page  # no links into a server
    assert "<script" not in page  # a static document


def test_html_needs_an_output_path() -> None:
    with pytest.raises(InputError, match="html needs --output PATH"):
        make_reporter("html", output=None, stdout=io.StringIO(), stderr=io.StringIO())


def test_axis_bars_and_gap_are_drawn(tmp_path: Path) -> None:
    report = engine_run(["rds_postgres"], agent="reference", axis2=True)
    page = render_run_html(report)
    assert 'class="a1"' in page and 'class="a2"' in page
    assert "gap" in page
    assert page.count("<tr data-test-id=") == len(report.results)


def test_cli_runs_show_html_and_reporter_html(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    out = tmp_path / "run.html"
    cmd = [sys.executable, "-m", "sredrill"]
    ran = subprocess.run(
        [*cmd, "run", "--pack", "rds_postgres", "--agent", "keyword", "--reporter", "html", "--output", str(out),
         "--db", str(db)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert ran.returncode == 1, ran.stderr  # the keyword baseline fails: a result, not an error
    assert "RCA scenarios · pass rate by difficulty" in out.read_text()
    shown = tmp_path / "shown.html"
    again = subprocess.run([*cmd, "runs", "show", "latest", "--html", str(shown), "--db", str(db)],
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert fetched_by(shown.read_text()) == []
    assert "keyword" in shown.read_text()


def test_the_page_labels_pass_at_1_and_shows_scores_and_uncited_claims() -> None:
    from sredrill.engine.reporters.html_pages import result_page
    from tests.engine.test_reporters import _retried, _scored

    retried = render_run_html(report_of(_retried()))
    assert '· pass@1 <b id="pass-rate">33.3%</b>' in retried
    assert "pass@3 75.0% with retries (2 passed only on a retry)" in retried
    scored = [_scored("000", "passed", 0.8, 3, 0), _scored("001", "failed", 0.4, 5, 2)]
    page = render_run_html(report_of(scored))
    assert '<td class="num score">0.60</td>' in page  # the RCA rows' mean score
    assert 'id="uncited" data-axis1="0.25"' in page and "axis 1: 2 of 8 (25.0%)" in page
    one = result_page("r", scored[1], None, evidence="")
    assert 'data-score="0.4">0.40 (modes 1.00, location 1.00, evidence 0.50, ruling_out 1.00, efficiency 0.50)' in one
    assert 'data-claims="5" data-uncited="2">5 claim(s), 2 citing no evidence item' in one
