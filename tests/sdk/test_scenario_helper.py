"""`scenario(ID)` in SDK tests: what the agent gets and how it is graded are what `sredrill run` gives and does.

In process, a real agent (the reference agent, the keyword baseline, a capturing one) runs through the real
`agent.run()`; end to end, an eval file using `scenario()` runs under `python -m sredrill test`, and its
checks are compared with `sredrill run` on the same scenario and agent.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sredrill import scenario
from sredrill.agents import AgentReply, Task, resolve_agent
from sredrill.domains.rds import DOMAIN as RDS
from sredrill.errors import PackError, StateError
from sredrill.harness import Runtime, TestContext, enter_context, exit_context
from sredrill.results import SignalKind, SignalRole
from sredrill.scenarios import load_pack
from sredrill.sdk import RCA_PROMPT, AgentFixture, RunResult, ScenarioCase
from sredrill.trajectory import Recorder
from tests.sdk.test_expect import _testdef

ROOT = Path(__file__).resolve().parents[2]
LAG = "rds_postgres/001-replication-lag"


def _context(agent: Any) -> TestContext:
    return TestContext(test=_testdef(), runtime=Runtime(run_id="r", agent=agent))


def _in_test(ctx: TestContext, body: Any) -> Any:
    """Run `body()` as the engine runs a test body: with `ctx` as the current test's context."""

    async def main() -> Any:
        token = enter_context(ctx)
        try:
            return await body()
        finally:
            exit_context(token)

    return asyncio.run(main())


def _run(spec: str, case: ScenarioCase) -> tuple[RunResult, list[Any]]:
    ctx = _context(resolve_agent(spec))

    async def body() -> tuple[RunResult, list[Any]]:
        result = await AgentFixture(ctx).run(case.prompt, tools=case.tools)
        return result, case.grade(result)

    return _in_test(ctx, body)


class Capture:
    """A `py:`-style agent that keeps the Task it was given and answers nothing."""

    spec = "py:capture"

    def __init__(self) -> None:
        self.tasks: list[Task] = []

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        self.tasks.append(task)
        return AgentReply(output="no idea")


def test_the_reference_agent_passes_every_gate_check() -> None:
    _, signals = _run("reference", scenario(LAG))
    assert [s.name for s in signals][:3] == ["root_cause_present", "category", "failure_modes"]
    assert all(s.kind == SignalKind.CHECK for s in signals)
    gates = [s for s in signals if s.role == SignalRole.GATE]
    assert gates and all(s.passed for s in gates), [(s.name, s.message) for s in gates if not s.passed]


def test_the_keyword_baseline_fails_it_with_the_checks_detail() -> None:
    _, signals = _run("keyword", scenario(LAG))
    failed = {s.name: s.message for s in signals if s.role == SignalRole.GATE and not s.passed}
    # It calls every tool once (so it queried the evidence), but cites nothing that backs the lag it names.
    assert "evidence_queried" not in failed
    assert failed["decisive_evidence"].startswith("no claim backs replication_lag: cite one of metric=ReplicaLag")


def test_the_agent_gets_the_rca_prompt_the_blinded_alert_and_the_rca_tools() -> None:
    agent = Capture()
    case = scenario(LAG)
    ctx = _context(agent)

    async def body() -> None:
        await AgentFixture(ctx).run(case.prompt, tools=case.tools)

    _in_test(ctx, body)
    (task,) = agent.tasks
    assert task.prompt == RDS.task_prompt(load_pack("rds_postgres").vocabulary) == case.prompt
    assert task.alert == case.alert
    assert task.alert is not None and "replication_lag" not in json.dumps(task.alert)  # blinded
    assert [t.name for t in task.tools] == list(RDS.tool_names)


def test_the_prompt_is_the_one_sredrill_run_asks() -> None:
    from sredrill.engine.rca import RCA_PROMPT as SUITE_PROMPT
    from sredrill.engine.rca import axes_for, rca_tests

    assert RCA_PROMPT == SUITE_PROMPT  # the domain-neutral shape, exported by both
    pack = load_pack("rds_postgres")
    assert {t.prompt for t in rca_tests([pack], axes_for(None, False))} == {RDS.task_prompt(pack.vocabulary)}


def test_each_test_gets_its_own_toolset_and_grades_what_it_served() -> None:
    case = scenario(LAG)  # as at an eval file's top level: shared by every test of the file
    first, second = _context(Capture()), _context(Capture())

    async def tools_twice() -> tuple[Any, Any]:
        return case.tools, case.tools

    a1, a2 = _in_test(first, tools_twice)
    b1, _ = _in_test(second, tools_twice)
    assert a1 is a2
    assert a1 is not b1
    assert list(first.rca_toolsets.values()) == [a1]  # the context holds the toolset it built, for grading
    assert a1.alert == case.alert


def test_grading_a_run_that_did_not_get_the_scenarios_tools_is_a_state_error() -> None:
    case = scenario(LAG)
    ctx = _context(Capture())

    async def body() -> None:
        result = await AgentFixture(ctx).run(case.prompt)
        case.grade(result)

    with pytest.raises(StateError, match=r"tools=sc.tools"):
        _in_test(ctx, body)


def test_axis_2_makes_ruling_out_gate() -> None:
    folder = "011-cpu-storage-compositional"
    roles = {axis: {s.name: s.role for s in _run("keyword", scenario(folder, axis=axis))[1]} for axis in (1, 2)}
    assert roles[1]["ruling_out"] == SignalRole.OBSERVE
    assert roles[2]["ruling_out"] == SignalRole.GATE


def test_ids_and_modes() -> None:
    case = scenario("001-replication-lag", mode="temporal")
    assert (case.id, case.difficulty, case.mode.value) == (LAG, 1, "temporal")
    assert case.tools.mode.value == "temporal"


@pytest.fixture
def own_pack(tmp_path: Path) -> Iterator[Path]:
    """A pack of one scenario, 001-replication-lag, whose alert carries its answer in a label."""
    pack = tmp_path / "mypack"
    pack.mkdir()
    builtin = load_pack("rds_postgres").root
    shutil.copytree(builtin / "001-replication-lag", pack / "001-lag")
    shutil.copy(builtin / "pack.yml", pack / "pack.yml")
    alert_file = pack / "001-lag" / "alert.json"
    alert = json.loads(alert_file.read_text())
    alert["commonLabels"]["rds_failure_mode"] = "replication_lag"
    alert_file.write_text(json.dumps(alert))
    yield pack


def test_the_alert_is_blind_unless_asked(own_pack: Path) -> None:
    assert "rds_failure_mode" not in scenario("001-lag", pack=own_pack).alert["labels"]
    assert scenario("001-lag", pack=own_pack, blind=False).alert["labels"]["rds_failure_mode"] == "replication_lag"


def test_a_pack_of_your_own_by_path_or_loaded(own_pack: Path) -> None:
    assert scenario("001-lag", pack=own_pack).id == "mypack/001-lag"
    assert scenario("mypack/001-lag", pack=load_pack(own_pack)).id == "mypack/001-lag"
    assert scenario(f"{own_pack}/001-lag").id == "mypack/001-lag"
    _, signals = _run("reference", scenario("001-lag", pack=own_pack))
    assert all(s.passed for s in signals if s.role == SignalRole.GATE)


@pytest.mark.parametrize(
    ("given", "kwargs", "says"),
    [
        ("rds_postgres/001-replicaton-lag", {}, "did you mean '001-replication-lag'?"),
        ("001-replicaton-lag", {}, "did you mean '001-replication-lag'?"),
        ("rds_postgress/001-replication-lag", {}, "did you mean 'rds_postgres'?"),
        ("incidents/easy_cpu_spike", {}, "sredrill run --pack incidents"),
        ("", {}, "needs a scenario id"),
        (LAG, {"mode": "fast"}, "allowed: full, selective, temporal"),
        (LAG, {"axis": 3}, "axis 3 is not an axis"),
        (LAG, {"pack": "nosuchpack"}, "no pack 'nosuchpack'"),
    ],
)
def test_bad_input_is_a_clear_pack_error(given: str, kwargs: dict[str, Any], says: str) -> None:
    with pytest.raises(PackError) as caught:
        scenario(given, **kwargs)
    assert says in str(caught.value)


def test_a_scenario_id_naming_another_pack_than_pack_is_an_error(own_pack: Path) -> None:
    with pytest.raises(PackError, match=r"names pack 'rds_postgres', but pack='mypack'"):
        scenario(LAG, pack=own_pack)


# End to end: the real CLI, the real eval loader, body workers, and (for `cmd:`) the HTTP tool server.

EVAL = """
    import json
    from sredrill import expect, scenario, test

    sc = scenario("{sid}")

    @test("diagnoses the scenario")
    async def _(agent):
        result = await agent.run(sc.prompt, tools=sc.tools)
        signals = sc.grade(result)
        print(json.dumps({{s.name: [s.passed, s.role, s.message] for s in signals}}))
        expect([s.name for s in signals if s.role == "gate" and not s.passed]).to_equal([])
"""


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sredrill", *args, "--db", str(cwd / "runs.db")],
        cwd=cwd, capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


def _eval_file(tmp_path: Path, sid: str = LAG) -> Path:
    path = tmp_path / "scenario_eval.py"
    path.write_text(textwrap.dedent(EVAL.format(sid=sid)))
    return path


def test_an_eval_file_using_scenario_passes_with_the_reference_agent(tmp_path: Path) -> None:
    done = _cli(tmp_path, "test", str(_eval_file(tmp_path)), "--agent", "reference")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stderr


@pytest.mark.parametrize(
    "agent", ["keyword", f"cmd:{sys.executable} {ROOT / 'examples' / 'agents' / 'http_tools_agent.py'}"]
)
def test_the_sdk_test_grades_as_sredrill_run_does(tmp_path: Path, agent: str) -> None:
    tested = _cli(tmp_path, "test", str(_eval_file(tmp_path)), "--agent", agent, "--json")
    ran = _cli(
        tmp_path, "run", "--pack", "rds_postgres", "--scenario", "001-replication-lag", "--agent", agent, "--json"
    )
    assert ran.returncode in (0, 1), ran.stderr
    (run_result,) = json.loads(ran.stdout)["results"]
    (test_result,) = json.loads(tested.stdout)["results"]
    printed = json.loads(test_result["stdout"].strip().splitlines()[-1])
    expected = {
        name: [check["passed"], check["role"], "" if check["passed"] else check["detail"]]
        for name, check in run_result["checks"].items()
    }
    assert printed == expected
    assert test_result["status"] == run_result["status"]
    assert tested.returncode == ran.returncode
