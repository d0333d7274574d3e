"""`sredrill run --pack incidents` and `sredrill baselines --pack incidents` on the same engine."""

from __future__ import annotations

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
