"""The oracles, per isolation level, through `sredrill test` (issue 17): an eval file that loads the run's scenario
with the SDK's `scenario(…)` (answer key included) and holds the answer as an expectation.

The project is the one of tests/e2e/test_isolation_oracles.py (a copy of a small pack, a store primed by an
earlier run and named by `SREDRILL_DB`, a loopback server that answers without a token) plus
`evals/oracle_eval.py`: it loads `001-ledger-memory` from the pack copy by its path, names the truth in a constant
(`EXPECTED_FAILURE_MODE = "oom_killed"`) and expects the agent's failure modes to contain it. So the body worker's
heap (the loaded Scenario, the eval module), the eval file on disk and the pack copy are all answer material.

One run per level and form, of the combined oracle (`oracle_all`: every channel, each reported on its own; both
forms walk the filesystem here, since each form's sandbox is built by the body worker that starts it). The table
this file asserts:

- sandbox: every oracle gets nothing, and the expectation fails (the pack copy the eval file loads by its path
  sits in the launch directory, which is bound read-only as it is on sys.path: its scenario folders are masked
  because they hold an answer.yml);
- process: the heap walk and the agent's own argv and environment get nothing; the parent's environment (a body
  worker's, which holds `SREDRILL_DB`), `load_pack()`, the disk, `/proc` and the loopback do, as for `sredrill run`;
- none: a `py:` agent runs inline in the body worker, so the heap walk finds the loaded Scenario and the eval
  module's expectation (and the agent passes the eval file's expectation with them); a `cmd:` agent's heap is its
  own, empty; both inherit `SREDRILL_DB` (own environment).

Sandbox tests skip, loudly, where bubblewrap does not work, unless `SREDRILL_REQUIRE_SANDBOX=1` (`.ci/run`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.oracle_support import (
    ORACLES,
    SCENARIO,
    TRUTH,
    Got,
    OracleProject,
    all_spec,
    gots_of,
    leaky_store,
    oracles_of,
    sandbox_or_skip,
)

EVAL_FILE = """\
\"\"\"The oracle project's eval file: the scenario with its answer key, and the answer as an expectation.\"\"\"

import json

from sredrill import expect, scenario, test

PACK = "{pack}"
EXPECTED_FAILURE_MODE = "{truth}"
LEDGER = scenario("{scenario}", pack=PACK)


@test("the agent names the failure mode")
async def _(agent):
    result = await agent.run(LEDGER.prompt, tools=LEDGER.tools)
    diagnosis = result.diagnosis
    print("ORACLE_REPORT", diagnosis.report if diagnosis is not None else "null")
    expect(diagnosis.failure_modes if diagnosis is not None else []).to_contain(EXPECTED_FAILURE_MODE)
"""
MARK = "ORACLE_REPORT "


class EvalProject(OracleProject):
    """The oracle project with an eval folder holding `oracle_eval.py`."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.evals = root / "evals"
        self.evals.mkdir()
        text = EVAL_FILE.format(pack=self.pack, truth=TRUTH, scenario=SCENARIO)
        (self.evals / "oracle_eval.py").write_text(text)

    def oracles(self, form: str, level: str) -> tuple[dict[str, Got], str]:
        """Run the combined oracle on the eval folder; what each oracle got, and the test's status."""
        spec = all_spec(form)
        args = ["test", str(self.evals), "--agent", spec, "--isolation", level, "--agent-dir", str(ORACLES)]
        cli = self.run(*args, "--json", env=self.driver_env(), db=False, timeout=180)
        assert cli.code in (0, 1), f"exit {cli.code}\n{cli.stderr[-3000:]}"
        report = cli.report()
        (result,) = report["results"]
        lines = [line for line in result["stdout"].splitlines() if line.startswith(MARK)]
        assert len(lines) == 1, f"{spec}: no report printed: {result['failure_reason']}\n{result['stdout'][-2000:]}"
        body = lines[0].removeprefix(MARK)
        assert body != "null", f"{spec} gave no diagnosis: {result['failure_reason']}\n{result.get('agent_log')}"
        gots = gots_of({"report": body}, result["status"], report.get("isolation"))
        assert sorted(gots) == sorted(oracles_of()), gots
        _show(form, level, gots, result["status"])
        return gots, result["status"]


def _show(form: str, level: str, gots: dict[str, Got], status: str) -> None:
    """The measured row, in the test's captured output (`pytest -rA` shows it)."""
    for name, got in gots.items():
        what = ", ".join(sorted(got.channels())) or ("nothing" if not got.found else f"other: {sorted(got.found)}")
        print(f"sredrill test | {level:8} | {name:9} | {form:3} | {what}")
    print(f"sredrill test | {level:8} | status    | {form:3} | {status}")


@pytest.fixture(scope="module")
def leaky_port() -> Iterator[int]:
    with leaky_store() as port:
        yield port


@pytest.fixture(scope="module")
def eval_project(tmp_path_factory: pytest.TempPathFactory) -> EvalProject:
    return EvalProject(tmp_path_factory.mktemp("oracle-evals"))


FORMS = ["py", "cmd"]


@pytest.mark.parametrize("form", FORMS)
def test_under_sandbox_every_oracle_gets_nothing(eval_project: EvalProject, leaky_port: int, form: str) -> None:
    sandbox_or_skip()
    gots, status = eval_project.oracles(form, "sandbox")
    assert {got.isolation for got in gots.values()} == {"sandbox"}
    for name, got in gots.items():
        if name != "fs":
            assert got.root_cause == "found nothing", (name, got)
            assert got.found == {}, (name, got)
    fs = gots["fs"]
    assert fs.root_cause == "found nothing" and fs.found == {}, fs
    assert status == "failed"


@pytest.mark.parametrize("form", FORMS)
def test_under_process_the_heap_and_own_argv_env_give_nothing_and_disk_proc_loopback_still_do(
    eval_project: EvalProject, leaky_port: int, form: str
) -> None:
    gots, status = eval_project.oracles(form, "process")
    assert {got.isolation for got in gots.values()} == {"process"}
    assert gots["heap"].found == {}, gots["heap"]
    parent = gots["parent"]
    assert "own argv" not in parent.found and "own environment" not in parent.found, parent
    assert "parent environment" in parent.channels(), parent
    for name in ("load_pack", "fs", "proc", "loopback"):
        assert gots[name].answer, (name, gots[name])
    assert any(f"127.0.0.1:{leaky_port}" in m for m in gots["loopback"].found["loopback"]), gots["loopback"]
    # The driver's argv names the eval folder: its eval file names the truth, and the pack it loads.
    assert any(ch.endswith("/cmdline") for ch in gots["proc"].channels()), gots["proc"]
    assert "eval file" in gots["fs"].channels(), gots["fs"]
    # With the answer in hand, the oracle passes the eval file's expectation.
    assert status == "passed"


@pytest.mark.parametrize("form", FORMS)
def test_under_none_a_py_agent_runs_inline_in_the_body_worker_and_its_heap_walk_finds_the_answer(
    eval_project: EvalProject, leaky_port: int, form: str
) -> None:
    gots, status = eval_project.oracles(form, "none")
    assert {got.isolation for got in gots.values()} == {"none"}
    heap = gots["heap"]
    if form == "py":
        # The loaded scenario (its answer key) and the eval module's expectation share the agent's heap.
        assert {"heap", "eval module"} <= heap.channels(), heap
        assert heap.root_cause.startswith("found: heap: Scenario in the agent's heap:"), heap
    else:
        assert heap.found == {}, heap
    parent = gots["parent"]
    assert {"parent environment", "own environment"} <= parent.channels(), parent
    for name in ("load_pack", "fs", "proc", "loopback"):
        assert gots[name].answer, (name, gots[name])
    assert status == "passed"
