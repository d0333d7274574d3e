"""`sredrill run --pack incidents` and `sredrill baselines --pack incidents` on the same engine."""

from __future__ import annotations

import json
import re
from typing import Any

from sredrill.engine.incident_suite import FAMILY_SEEDS
from sredrill.env import TaskKind, list_tasks
from sredrill.incidents.families import FAMILIES, family_task

from .conftest import Project


def test_the_reference_agent_resolves_every_classic_task_and_family_episode(project: Project) -> None:
    cli = project.run("run", "--pack", "incidents", "--json")
    assert cli.code == 0, cli.stdout[-3000:]
    report = cli.report()
    tasks = [t for t in list_tasks() if t.kind in (TaskKind.INCIDENT, TaskKind.FAMILY)]
    assert len(tasks) == 6 + 3  # six classic tasks (seeds 0-4), three families (the first evaluation seeds)
    assert report["summary"]["total"] == 5 * len(tasks) == report["summary"]["passed"]
    ids = {r["id"] for r in report["results"]}
    assert {f"incidents/{f}#seed{n}" for f in FAMILIES for n in FAMILY_SEEDS} <= ids
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
        "--isolation", "process",  # the prober writes what it got into the project, read-only in a sandbox
    )  # fmt: skip
    assert cli.code in (0, 1), cli.stderr[-2000:]
    results = [json.loads(line) for line in seen.read_text().splitlines()]
    assert len(results) == 2 * 5
    for result in results:
        # Whole words: "degraded" is a status, not a grade.
        assert not _SCORE_WORDS.search(json.dumps(result)), result
    # The run's results still hold the grade, read from the environment.
    assert all(r["score"] is not None for r in cli.report()["results"])


def test_seeds_choose_the_episodes_on_the_command_line(project: Project) -> None:
    cli = project.run(
        "run", "--pack", "incidents", "--seeds", "100010-100011,7", "--scenario", "web_api",
        "--scenario", "easy_cpu_spike", "--json",
    )  # fmt: skip
    assert cli.code in (0, 1), cli.stderr[-2000:]
    assert sorted(r["id"] for r in cli.report()["results"]) == sorted(
        f"incidents/{t}#seed{n}" for t in ("web_api", "easy_cpu_spike") for n in (100010, 100011, 7)
    )
    for bad, message in (("x-y", "is not a seed or a range"), ("9-3", "ends before it starts"),
                         ("3000000000", "a family seed is an integer from 0 to 2147483647")):  # fmt: skip
        refused = project.run("run", "--pack", "incidents", "--seeds", bad)
        assert refused.code == 2, (bad, refused.stderr)
        assert "error:" in refused.stderr and message in refused.stderr and "Traceback" not in refused.stderr
    elsewhere = project.run("run", "--pack", "rds_postgres", "--seeds", "1")
    assert elsewhere.code == 2 and "--pack incidents" in elsewhere.stderr
    unplayed = project.run("run", "--pack", "incidents", "--scenario", "web_api#seed7")
    assert unplayed.code == 2 and "seeds 100000-100004" in unplayed.stderr


def test_baselines_take_seeds_too(project: Project) -> None:
    cli = project.run("baselines", "--pack", "incidents", "--seeds", "100020", "--json")
    assert cli.code == 0, cli.stderr
    rows = {row["agent"]: row for row in json.loads(cli.stdout)}
    assert rows["reference"]["total"] == 6 + 3  # each task and family once, on seed 100020
    assert project.run("baselines", "--pack", "incidents", "--seeds", "-1").code == 2


# -- keyed episodes: the public generator cannot regenerate an evaluated episode ------------------------------


def _outputs(report: dict[str, Any]) -> dict[str, str]:
    return {r["id"]: r["output"] for r in report["results"]}


def test_each_run_keys_its_family_episodes_and_a_key_file_pins_them(project: Project) -> None:
    key = project.write("episode.key", "0123456789abcdef0123456789abcdef\n")
    args = ("run", "--pack", "incidents", "--scenario", "web_api", "--seeds", "100000-100002", "--json")
    first, second = project.run(*args), project.run(*args)
    pinned = [project.run(*args, "--episode-key-file", str(key)) for _ in range(2)]
    for cli in (first, second, *pinned):
        assert cli.code == 0, cli.stderr[-2000:]
    # Each run draws its own episodes (the reference agent's actions name their components)...
    assert _outputs(first.report()) != _outputs(second.report())
    # ...and the same key plays the same ones: the key's holder can compare two agents episode by episode.
    assert _outputs(pinned[0].report()) == _outputs(pinned[1].report())
    # The key is never reported.
    for cli in (first, *pinned):
        assert "0123456789abcdef" not in cli.stdout + cli.stderr


def test_the_regenerating_oracle_passes_only_the_false_alarms_of_a_run(project: Project) -> None:
    """An agent that rebuilds every public episode and plays the matching one's fix (no inspection at all)."""
    key_text = "fedcba9876543210fedcba9876543210"
    key = project.write("episode.key", key_text)
    seeds = range(100000, 100010)
    cli = project.run(
        "run", "--pack", "incidents", "--seeds", f"{seeds.start}-{seeds.stop - 1}", "--episode-key-file", str(key),
        "--agent", "py:sredrill.agents.incident_probes:regenerate", *[a for f in FAMILIES for a in ("--scenario", f)],
        "--json", timeout=300,
    )  # fmt: skip
    assert cli.code in (0, 1), cli.stderr[-2000:]
    passed = {r["id"] for r in cli.report()["results"] if r["status"] == "passed"}
    false_alarms = {
        f"incidents/{f}#seed{s}" for f in FAMILIES for s in seeds if family_task(f, s, key=key_text).cause.fix is None
    }
    assert passed <= false_alarms
    assert len(cli.report()["results"]) == len(FAMILIES) * len(seeds)


def test_a_bad_episode_key_file_is_a_clear_error(project: Project) -> None:
    short = project.write("short.key", "abc\n")
    missing = project.root / "missing.key"
    for path, message in ((missing, "cannot read the episode key"), (short, "at least 16 characters")):
        cli = project.run("run", "--pack", "incidents", "--episode-key-file", str(path))
        assert cli.code == 2, cli.stderr
        assert message in cli.stderr and str(path) in cli.stderr and "Traceback" not in cli.stderr
