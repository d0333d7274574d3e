"""`sredrill run` end to end: packs through the same engine, graded, stored; and blind mode's byte capture."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from sredrill.evidence import tool_specs
from sredrill.scenarios import get_domain, leak_needles, load_pack

from .conftest import Project

# Sees everything an agent can see: the Task, then every tool with every argument worth trying.
EXPLORER = """
import json, os, pathlib

async def agent(task):
    # The tool catalogue and the prompt list the whole vocabulary (it is published) identically for every
    # scenario, so they carry nothing about this one: they are captured apart and compared across runs.
    seen = [task.model_dump_json(exclude={"tools", "prompt"})]
    catalogue = json.dumps([t.model_dump(mode="json") for t in task.tools], sort_keys=True)
    async def call(name, **args):
        result = await task.call_tool(name, **args)
        seen.append(json.dumps(result))
        return result
    await call("get_alert")
    listed = await call("list_metrics")
    for m in listed["metrics"]:
        await call("query_metrics", metric_name=m["metric_name"])
    await call("get_events")
    await call("get_performance_insights")
    out = pathlib.Path(os.environ["CAPTURE_DIR"]) / (task.run_id + ".txt")
    out.write_text("\\n".join(seen))
    out.with_suffix(".tools").write_text(catalogue)
    out.with_suffix(".prompt").write_text(task.prompt)
    return {"root_cause": "nothing conclusive", "failure_modes": ["unknown"], "category": "unknown"}
"""

# Answers every scenario the same way, after looking at the evidence: the checks decide.
CONSTANT = """
async def agent(task):
    for name in ("get_alert", "list_metrics", "get_events", "get_performance_insights"):
        await task.call_tool(name)
    await task.call_tool("query_metrics", metric_name="ReplicaLag")
    return {
        "root_cause": "Replication lag on the read replica: WAL generation on the primary outpaced replay.",
        "category": "resource_exhaustion",
        "failure_modes": ["replication_lag"],
        "causal_chain": ["write-heavy workload", "WAL volume", "replica lag"],
        "claims": [{"text": "ReplicaLag climbed", "evidence": ["aws_cloudwatch_metrics"]}],
    }
"""


def test_run_grades_a_pack_on_both_axes_and_reports_the_gap(project: Project) -> None:
    project.write("constant.py", CONSTANT)
    cli = project.run("run", "--pack", "rds_postgres", "--agent", "py:constant:agent", "--axis2", "--json")
    assert cli.code == 1, cli.stderr  # some scenarios fail: a result, not a crash
    report = cli.report()
    pack = load_pack("rds_postgres")
    n = len(pack.scenarios)
    rca = report["summary"]["rca"]
    assert report["summary"]["total"] == 2 * n  # every result once: each scenario on each axis
    assert rca["axis1"]["total"] == n and rca["axis2"]["total"] == n
    assert report["mode"] == "axis2" and report["agent"] == "py:constant:agent"
    results = {r["id"]: r for r in report["results"]}
    for scenario in pack.scenarios:
        one, two = results[f"{scenario.qualified_id}#1"], results[f"{scenario.qualified_id}#2"]
        assert (one["axis"], one["mode"], two["axis"], two["mode"]) == (1, "full", 2, "selective")
        assert one["kind"] == "rca" and one["difficulty"] == scenario.difficulty
        assert one["expected"]["failure_modes"] == sorted(one["expected"]["failure_modes"]) or True
        assert one["actual"]["failure_modes"] == ["replication_lag"]
        assert set(one["checks"]) >= {"root_cause_present", "category", "failure_modes", "evidence_queried"}
        passed = one["checks"]["failure_modes"]["passed"]
        assert passed == (set(scenario.failure_modes) == {"replication_lag"})
        if one["status"] == "failed":
            assert one["failure_reason"].split(":")[0] in one["checks"]
    gap = rca["gap"]
    a1, a2 = rca["axis1"]["pass_rate"], rca["axis2"]["pass_rate"]
    assert gap["overall"] == round((a1 - a2) * 100, 1)
    assert "gap" in project.run("runs", "show", report["run_id"]).stdout.lower()


def test_a_broken_scenario_is_errored_and_the_rest_of_the_pack_runs(project: Project) -> None:
    src = Path(load_pack("rds_postgres").root)
    pack = project.root / "mypack"
    for folder in ("000-healthy", "001-replication-lag"):
        shutil.copytree(src / folder, pack / folder)
    if (src / "pack.yml").exists():
        shutil.copy(src / "pack.yml", pack / "pack.yml")
    (pack / "001-replication-lag" / "aws_rds_events.json").write_text("{not json")
    project.write("constant.py", CONSTANT)
    cli = project.run("run", "--pack", str(pack), "--agent", "py:constant:agent", "--json")
    assert cli.code == 3
    results = {r["id"]: r for r in cli.report()["results"]}
    broken = results["mypack/001-replication-lag#1"]
    assert broken["status"] == "errored" and "aws_rds_events.json" in broken["failure_reason"]
    assert results["mypack/000-healthy#1"]["status"] in ("passed", "failed")


def test_unknown_scenario_and_bad_flags_are_usage_errors(project: Project) -> None:
    cli = project.run("run", "--scenario", "001-replication-lga")
    assert cli.code == 2 and "did you mean '001-replication-lag'" in cli.stderr
    assert project.run("run", "--mode", "sideways").code == 2
    assert project.run("run", "--difficulty", "9").code == 2
    assert project.run("run", "--pack", "no_such_pack").code == 2


def test_blind_mode_sends_agents_no_answer_over_a_whole_pack(project: Project) -> None:
    capture = project.root / "capture"
    capture.mkdir()
    project.write("explorer.py", EXPLORER)
    cli = project.run(
        "run", "--pack", "rds_postgres", "--agent", "py:explorer:agent", "--axis2", "--json",
        # Process level: the spy writes what it was sent to a folder a sandbox would not let it write.
        "--isolation", "process", "--agent-env", "CAPTURE_DIR",
        env={"CAPTURE_DIR": str(capture)},
    )  # fmt: skip
    report = cli.report()
    pack = load_pack("rds_postgres")
    by_run = {r["agent_run_id"]: r["id"] for r in report["results"]}
    files = list(capture.glob("*.txt"))
    assert len(files) == 2 * len(pack.scenarios)
    # One catalogue and one prompt for every scenario: the published ones (the pack's vocabulary, how to cite).
    domain = get_domain(pack.domain)
    published = json.dumps([t.model_dump(mode="json") for t in tool_specs(domain, pack.vocabulary)], sort_keys=True)
    assert {p.read_text() for p in capture.glob("*.tools")} == {published}
    assert {p.read_text() for p in capture.glob("*.prompt")} == {domain.task_prompt(pack.vocabulary)}
    leaks = []
    for path in files:
        seen = path.read_text()
        scenario = pack.scenario(by_run[path.stem].split("#")[0])
        for needle in leak_needles(scenario, pack.vocabulary):
            if needle.lower() in seen.lower():
                leaks.append(f"{scenario.id}: {needle!r}")
    assert not leaks, "the agent saw the answer:\n" + "\n".join(leaks)


def test_blind_mode_for_a_subprocess_agent_covers_argv_env_and_stdin(project: Project) -> None:
    capture = project.root / "capture"
    capture.mkdir()
    project.write(
        "spy.py",
        """
        import json, os, sys, pathlib
        stdin = sys.stdin.read()
        task = json.loads(stdin)
        tools = task.pop("tools")  # the same catalogue for every scenario (checked in the test above)
        prompt = task.pop("prompt")  # the same published prompt for every scenario, checked apart
        pathlib.Path(os.environ["CAPTURE_DIR"], task["run_id"] + ".prompt").write_text(prompt)
        stdin = json.dumps(task)
        env = {k: v for k, v in os.environ.items() if k.startswith(("SREDRILL_", "TRACEPARENT"))}
        pathlib.Path(os.environ["CAPTURE_DIR"], task["run_id"] + ".txt").write_text(
            "\\n".join([" ".join(sys.argv), json.dumps(env), stdin]))
        print(json.dumps({"kind": "response", "content": "no conclusion"}))
        """,
    )
    cli = project.run(
        "run", "--pack", "rds_postgres", "--agent", f"cmd:{sys.executable} spy.py", "--json",
        "--isolation", "process", "--agent-env", "CAPTURE_DIR",  # as above
        env={"CAPTURE_DIR": str(capture)},
    )  # fmt: skip
    report = cli.report()
    pack = load_pack("rds_postgres")
    by_run = {r["agent_run_id"]: r["id"] for r in report["results"]}
    files = list(capture.glob("*.txt"))
    assert len(files) == len(pack.scenarios)
    for path in files:
        seen = path.read_text().lower()
        scenario = pack.scenario(by_run[path.stem].split("#")[0])
        hits = [n for n in leak_needles(scenario, pack.vocabulary) if n.lower() in seen]
        assert not hits, f"{scenario.id}: {hits}"
    assert json.loads(files[0].read_text().splitlines()[2])["alert"]["title"]
    assert {p.read_text() for p in capture.glob("*.prompt")} == {get_domain(pack.domain).task_prompt(pack.vocabulary)}


def test_an_interrupted_pack_run_resumes_with_nothing_lost(project: Project) -> None:
    import sqlite3
    import time

    project.write("slow_constant.py", "import asyncio\n" + CONSTANT.replace(
        "async def agent(task):\n", "async def agent(task):\n    await asyncio.sleep(0.3)\n"))  # fmt: skip
    proc = project.popen("run", "--pack", "rds_postgres", "--agent", "py:slow_constant:agent")
    deadline = time.monotonic() + 60
    done: list[tuple[str, str]] = []
    while time.monotonic() < deadline and len(done) < 3:
        if project.db.exists():
            try:
                with sqlite3.connect(project.db) as con:
                    done = con.execute("select run_id, test_id from results").fetchall()
            except sqlite3.OperationalError:
                done = []
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    total = len(load_pack("rds_postgres").scenarios)
    assert 3 <= len(done) < total
    run_id = done[0][0]
    cli = project.run("run", "--resume", run_id, "--json")
    report = cli.report()
    assert report["run_id"] == run_id and report["agent"] == "py:slow_constant:agent"
    assert report["summary"]["total"] == total
    assert {r["id"] for r in report["results"]} >= {test_id for _, test_id in done}


def test_a_bare_scenario_id_picks_the_pack_that_has_it(project: Project) -> None:
    src = Path(load_pack("rds_postgres").root)
    other = project.root / "otherpack"
    shutil.copytree(src / "000-healthy", other / "000-healthy")
    if (src / "pack.yml").exists():
        shutil.copy(src / "pack.yml", other / "pack.yml")
    project.write("constant.py", CONSTANT)
    base = ["run", "--pack", "rds_postgres", "--pack", str(other), "--agent", "py:constant:agent", "--json"]
    cli = project.run(*base, "--scenario", "001-replication-lag")
    assert [r["id"] for r in cli.report()["results"]] == ["rds_postgres/001-replication-lag#1"]
    cli = project.run(*base, "--scenario", "otherpack/000-healthy")
    assert [r["id"] for r in cli.report()["results"]] == ["otherpack/000-healthy#1"]
    missing = project.run(*base, "--scenario", "nopack/000-healthy")
    assert missing.code == 2 and "no pack 'nopack'" in missing.stderr
