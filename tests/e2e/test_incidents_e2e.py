"""`sredrill run --pack incidents` and `sredrill baselines --pack incidents` on the same engine."""

from __future__ import annotations

import json
import re

from sredrill.env import TaskKind, list_tasks

from .conftest import Project


def test_the_reference_agent_resolves_every_incident_task_on_seeds_0_to_4(project: Project) -> None:
    cli = project.run("run", "--pack", "incidents", "--json")
    assert cli.code == 0, cli.stdout[-3000:]
    report = cli.report()
    tasks = [t for t in list_tasks() if t.kind == TaskKind.INCIDENT]
    assert report["summary"]["total"] == 5 * len(tasks) == report["summary"]["passed"]
    for r in report["results"]:
        assert r["kind"] == "incident" and r["difficulty"] in (1, 2, 3)
        assert 0 < r["score"] <= 1  # the episode's grade
        checks = {s["name"]: s["passed"] for s in r["signals"] if s["kind"] == "check"}
        assert checks == {"resolved": True, "declared": True}
        assert r["metrics"]["tool_calls"] >= 2  # it acted through the tools


def test_an_agent_that_gives_up_fails_every_incident(project: Project) -> None:
    project.write(
        "quitter.py",
        """
        async def agent(task):
            await task.call_tool("declare_unfixable")
            return "gave up"
        """,
    )
    cli = project.run("run", "--pack", "incidents", "--agent", "py:quitter:agent", "--json")
    assert cli.code == 1
    results = cli.report()["results"]
    assert all(r["status"] == "failed" and r["score"] == 0 for r in results)
    assert all(r["failure_reason"] == "the incident was not resolved" for r in results)


def test_baselines_on_the_incidents_pack(project: Project) -> None:
    cli = project.run("baselines", "--pack", "incidents", "--json")
    assert cli.code == 0, cli.stderr
    rows = {row["agent"]: row for row in __import__("json").loads(cli.stdout)}
    assert rows["reference"]["pass_rate"] == 1.0
    for naive in ("majority", "keyword", "random"):
        assert rows[naive]["pass_rate"] < 0.5


_SCORE_WORDS = re.compile(r"\b(reward|episode_reward|normalized_reward|grade|resolved)\b")


def test_no_tool_result_an_agent_gets_in_the_incidents_pack_carries_a_reward(project: Project) -> None:
    """The step reward locates the fault; `sredrill run` keeps it (and every score) from the agent."""
    seen = project.root / "seen.jsonl"
    project.write(
        "prober.py",
        f"""
        import json

        async def agent(task):
            names = [t.name for t in task.tools]
            with open({str(seen)!r}, "a") as out:
                out.write(json.dumps(await task.call_tool("observe")) + "\\n")
                for name, args in (("inspect_logs", {{"target": "api_workers"}}),
                                   ("inspect_metrics", {{"target": "cpu"}}), ("wait", {{}}),
                                   ("declare_healthy", {{}})):
                    if name in names:
                        out.write(json.dumps(await task.call_tool(name, **args)) + "\\n")
            return "probed"
        """,
    )
    cli = project.run(
        "run", "--pack", "incidents", "--scenario", "easy_cpu_spike#seed0", "--scenario", "hard_mixed#seed1",
        "--agent", "py:prober:agent", "--json",
    )  # fmt: skip
    assert cli.code in (0, 1), cli.stderr[-2000:]
    results = [json.loads(line) for line in seen.read_text().splitlines()]
    assert len(results) == 2 * 5
    for result in results:
        # Whole words: "degraded" is a status, not a grade.
        assert not _SCORE_WORDS.search(json.dumps(result)), result
    # The run's results still hold the grade, read from the environment.
    assert all(r["score"] is not None for r in cli.report()["results"])
