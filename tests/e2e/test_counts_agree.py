"""One run, every surface, the same numbers: console, progress line, JSON, JUnit, HTML, `runs list`, `runs show
--json`, the runs API and the web UI of a real `sredrill serve` all read the run's one summary.

The run is `sredrill run --axis2 --agent keyword` over the built-in packs: RCA scenarios on two axes and incident
episodes, the mix whose counts used to disagree (48 on the scoreboard, 66 on the progress line).
"""

from __future__ import annotations

import io
import json
import re
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from typing import Any

import httpx

from sredrill.engine.reporters import make_reporter
from sredrill.engine.reporters.tables import interval, percent, score
from sredrill.results import RunReport
from tests.e2e.conftest import Project
from tests.server.launch import launched

_TOTALS = re.compile(r"(\d+) results? · (\d+) passed · (\d+) failed · (\d+) errored · pass@1 (\S+)")
_PROGRESS = re.compile(r"(\d+)/(\d+) results? · (\d+) passed · (\d+) failed · (\d+) errored")
_COUNTS = ("total", "passed", "failed", "errored")


def _counts(block: dict[str, Any]) -> tuple[int, ...]:
    return tuple(block[k] for k in _COUNTS)


def _cells(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("│")] for line in text.splitlines() if "│" in line]


class _Html(HTMLParser):
    """The totals line's data attributes and every summary row (`data-section`, `data-level`) of a run page."""

    def __init__(self) -> None:
        super().__init__()
        self.totals: dict[str, str] = {}
        self.rows: dict[tuple[str, str], list[str]] = {}
        self._row: tuple[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if a.get("id") == "totals":
            self.totals = {k.removeprefix("data-"): v for k, v in a.items() if k.startswith("data-")}
        if tag == "tr" and "data-section" in a:
            self._row = (a["data-section"], a["data-level"])
            self.rows[self._row] = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr":
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._row is not None and data.strip():
            self.rows[self._row].append(data.strip())


def _expected_rows(summary: dict[str, Any]) -> dict[tuple[str, str], list[str]]:
    """Every summary row as the HTML shows it: (section, level) → [level, (axis,) counts, rate, interval, (score)]."""
    rows = {}
    sections = [(f"rca.{k}", v) for k, v in (summary["rca"] or {}).items() if k.startswith("axis") and v]
    sections += [(k, summary[k]) for k in ("incident", "test") if summary[k]]
    for key, section in sections:
        for level, rate in [("all", section), *section["by_difficulty"].items()]:
            axis = [f"{section['axis']} ({section['mode']})"] if key.startswith("rca.") else []
            mean = [score(rate["mean_score"])] if key.startswith("rca.") else []  # RCA rows: the mean score
            ci = interval(tuple(rate["pass_rate_ci"])) if rate["pass_rate_ci"] else ""
            rows[(key, level)] = [level, *axis, *map(str, _counts(rate)), percent(rate["pass_rate"]), ci, *mean]
    return rows


def test_one_run_reads_the_same_on_every_surface(project: Project) -> None:
    ran = project.run("run", "--axis2", "--agent", "keyword")  # the console reporter: progress, scoreboard
    assert ran.code == 1, ran.stderr  # the keyword baseline fails some: a result
    shown = project.run("runs", "show", "latest", "--json")
    assert shown.code == 0, shown.stderr
    report = RunReport.model_validate_json(shown.stdout)
    summary = report.summary.model_dump(mode="json")
    run_id = report.run_id
    total = (summary["total"], summary["passed"], summary["failed"], summary["errored"])

    # The one summary: every result once, and sections that add up to it without mixing kinds or scales.
    rca, incident = summary["rca"], summary["incident"]
    assert total[0] == len(report.results) == rca["axis1"]["total"] + rca["axis2"]["total"] + incident["total"]
    assert rca["axis1"]["total"] == rca["axis2"]["total"] > 0 and incident["total"] > 0
    assert set(rca["axis1"]["by_difficulty"]) <= {"0", "1", "2", "3", "4"}
    assert set(incident["by_difficulty"]) <= {"1", "2", "3"}
    assert sum(c["total"] for c in incident["by_difficulty"].values()) == incident["total"]
    for axis in ("axis1", "axis2"):
        assert sum(c["total"] for c in rca[axis]["by_difficulty"].values()) == rca[axis]["total"]
    assert rca["gap"]["overall"] == round((rca["axis1"]["pass_rate"] - rca["axis2"]["pass_rate"]) * 100, 1)

    # The progress line of the run itself (stderr), in the totals line's words.
    progress = _PROGRESS.findall(ran.stderr)
    assert progress, ran.stderr
    done, planned, *statuses = map(int, progress[-1])
    assert (done, *statuses) == total and planned == total[0]

    # JSON and JUnit reporters on the stored run (what `--json` and `--reporter junit` write at its end).
    out = io.StringIO()
    make_reporter("json", output=None, stdout=out, stderr=io.StringIO()).on_run_end(report)
    assert out.getvalue() == shown.stdout
    junit = project.root / "junit.xml"
    make_reporter("junit", output=junit, stdout=io.StringIO(), stderr=io.StringIO()).on_run_end(report)
    root = ET.parse(junit).getroot()
    attrs = ("tests", "failures", "errors")
    assert tuple(int(root.get(a, "-1")) for a in attrs) == (total[0], total[2], total[3])
    suites = {s.get("name", "").rsplit(" · ", 1)[-1]: s for s in root.findall("testsuite")}
    assert set(suites) == {"RCA scenarios", "incident episodes"}
    both = [sum(rca[a][k] for a in ("axis1", "axis2")) for k in ("total", "failed", "errored")]
    assert [int(suites["RCA scenarios"].get(a, "-1")) for a in attrs] == both
    inc = [incident[k] for k in ("total", "failed", "errored")]
    assert [int(suites["incident episodes"].get(a, "-1")) for a in attrs] == inc
    assert len(root.findall(".//testcase")) == total[0]

    # The console (the run's own stdout, and `runs show`): the totals line, the RCA and incident tables, failures.
    console = ran.stdout
    assert project.run("runs", "show", run_id).stdout.split("\n", 1)[1] == console.split("\n", 1)[1]
    m = _TOTALS.search(console)
    assert m is not None, console
    assert tuple(map(int, m.groups()[:4])) == total and m.group(5) == percent(summary["pass_rate"])
    cells = _cells(console)
    for axis, level_cell in (("axis1", "all"), ("axis2", "")):
        a = rca[axis]
        row = [level_cell, str(a["axis"]), *map(str, _counts(a)), percent(a["pass_rate"])]
        gap = "" if axis == "axis1" else f"{rca['gap']['overall']:+.1f} pp"  # on the Axis 2 row
        assert [*row, gap] in cells
    ci = incident["pass_rate_ci"]  # the incident table's own interval column (RCA tables say theirs below)
    assert ["all", *map(str, _counts(incident)), percent(incident["pass_rate"]), interval(tuple(ci))] in cells
    assert f"failures ({total[2] + total[3]})" in console
    # Each failed check once: under each failure header, one line per failed gate, none repeated elsewhere.
    blocks = re.split(r"\n\n(?=\S+  (?:FAILED|ERRORED))", console.split("\nfailures (", 1)[1])
    by_id = {b.split("  ", 1)[0]: b for b in blocks[1:]}
    for r in report.results:
        if r.status.value != "failed":
            continue
        gates = {s.name for s in r.signals if s.role.value == "gate" and s.passed is False}
        gates |= {k for k, c in (r.checks or {}).items() if c.role.value == "gate" and not c.passed}
        block = by_id[r.id].split("\ninsights\n")[0]
        gate_lines = [line for line in block.splitlines() if line.startswith("  - ")]
        assert len(gate_lines) == len(gates), block
        assert len(set(gate_lines)) == len(gate_lines), block
        messages = {line.removeprefix("  - ").split(": ", 1)[1] for line in gate_lines}
        restated = [ln for ln in block.splitlines() if ln.startswith(("  why: ", "  reason: "))]
        assert not [ln for ln in restated if ln.split(": ", 1)[1] in messages], block  # not as reason or why

    # HTML (`runs show --html`): the totals line's data and every summary row.
    page_file = project.root / "run.html"
    assert project.run("runs", "show", run_id, "--html", str(page_file)).code == 0
    page = _Html()
    page.feed(page_file.read_text())
    assert tuple(int(page.totals[k]) for k in _COUNTS) == total
    assert page.rows == _expected_rows(summary)

    # `runs list`: the run's row holds the same counts and pass rate.
    listed = project.run("runs", "list").stdout
    row = next(c[1:] for c in _cells(listed) if len(c) > 1 and c[1] == run_id)  # c[0]: the table's edge
    numbers = [int(c) for c in row if c.isdigit()]
    assert any(numbers[i : i + 3] == list(total[1:]) for i in range(len(numbers))), row
    rate = next(c for c in row if c.endswith("%"))
    assert abs(float(rate.rstrip("%")) - summary["pass_rate"] * 100) <= 0.5, row

    # The runs API and the web UI of a real server on a loopback port, over the same database.
    env = project.env()
    cmd = [sys.executable, "-m", "sredrill", "serve", "--port", "0", "--db", str(project.db)]
    with (
        launched(cmd, env=env, cwd=str(project.root)) as server,
        httpx.Client(base_url=server.url, timeout=60, headers=server.auth()) as http,
    ):
        runs = http.get("/api/runs").json()["runs"]
        api_row = next(r for r in runs if r["run_id"] == run_id)
        assert _counts(api_row["counts"]) == total
        assert api_row["pass_rate"] == api_row["counts"]["pass_rate"] == summary["pass_rate"]
        assert api_row["summary"] == summary
        body = http.get(f"/api/runs/{run_id}").json()
        assert body["report"]["summary"] == summary
        assert json.loads(json.dumps(body["report"]["results"])) == [r.model_dump(mode="json") for r in report.results]
        events = http.get(f"/api/runs/{run_id}/events").text
        finished = json.loads(events.split("data: ", 1)[1])
        assert finished["summary"] == summary
        ui_page = _Html()
        ui_page.feed(http.get(f"/ui/runs/{run_id}").text)
        assert tuple(int(ui_page.totals[k]) for k in _COUNTS) == total
        assert ui_page.rows == _expected_rows(summary)
        ui_list = http.get("/ui").text
        cell = re.search(rf'data-run-id="{run_id}">.*?class="num pass-rate">([^<]*)<', ui_list)
        results_cell = re.search(rf'data-run-id="{run_id}">.*?class="num results">([^<]*)<', ui_list)
        assert cell is not None and cell.group(1) == percent(summary["pass_rate"])
        assert results_cell is not None and results_cell.group(1) == f"{total[1]}/{total[0]}"
