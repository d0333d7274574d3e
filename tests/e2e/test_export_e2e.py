"""`sredrill export` end to end: a stored run, and a pack run first, written as JSON lines and Parquet that Hugging
Face `datasets` loads; the reference agent's episodes as demonstrations; bad input named."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from .conftest import Project

SCENARIO = "004-cpu-saturation-bad-query"

EVAL = """
from sredrill import test, expect

@test("answers", prompt="Why is the database slow?")
async def _(agent):
    result = await agent.run(tools={"lookup": lookup})
    expect(result.output).to_contain("saturated")

@test("misses", prompt="Why is the database slow?")
async def _(agent):
    result = await agent.run(tools={"lookup": lookup})
    expect(result.output).to_contain("replica")

async def lookup(metric_name: str) -> dict:
    \"\"\"Look a metric up.\"\"\"
    return {"metric_name": metric_name, "values": [1, 2, 3]}
"""

AGENT = """
async def agent(task):
    seen = await task.call_tool("lookup", metric_name="CPUUtilization")
    return f"CPU is saturated ({seen['values'][-1]})"
"""


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _load(kind: str, path: Path, cache: Path) -> Any:
    """The file loaded as a training set is: `datasets.load_dataset`, offline, with a cache of its own."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from datasets import load_dataset

    return load_dataset(kind, data_files=str(path), split="train", cache_dir=str(cache))


def test_a_pack_run_exports_one_record_per_episode_that_datasets_loads(project: Project, tmp_path: Path) -> None:
    picked = ["--scenario", SCENARIO, "--scenario", "002-connection-exhaustion"]
    ran = project.run("export", "--pack", "rds_postgres", *picked, "--axis2", "-o", "demo.jsonl", "--passed-only")
    assert ran.code == 0, ran.stderr
    run_id = json.loads(project.run("runs", "list", "--json").stdout)[0]["run_id"]
    records = _lines(project.root / "demo.jsonl")
    assert ran.stderr.strip().endswith(f"exported {len(records)} episodes of run {run_id} to demo.jsonl")
    report = json.loads(project.run("runs", "show", run_id, "--json").stdout)
    passed = [r["id"] for r in report["results"] if r["status"] == "passed"]
    assert [r["test_id"] for r in records] == passed and len(passed) == 4
    first = next(r for r in records if r["test_id"] == f"rds_postgres/{SCENARIO}#2")
    assert (first["kind"], first["pack"], first["agent"], first["axis"], first["mode"]) == (
        "rca", "rds_postgres", "reference", 2, "selective",
    )  # fmt: skip
    assert first["reward"] == 1.0 and first["grade"]["status"] == "passed"
    assert {c["name"]: c["passed"] for c in first["grade"]["checks"]}["failure_modes"] is True
    # The messages: the prompt, then each tool call on an assistant message and its result as a tool message.
    messages = first["messages"]
    assert messages[0]["role"] == "user" and "PostgreSQL" in messages[0]["content"]
    calls = [c for m in messages if m["role"] == "assistant" for c in m["tool_calls"] or []]
    answers = [m for m in messages if m["role"] == "tool"]
    assert [c["function"]["name"] for c in calls] == [c["name"] for c in first["tool_calls"]]
    assert [a["tool_call_id"] for a in answers] == [c["id"] for c in calls]
    assert calls[-1]["function"]["name"] == "submit_diagnosis"
    assert "failure_modes" in json.loads(calls[-1]["function"]["arguments"])
    assert messages[-1]["role"] == "assistant" and messages[-1]["content"]
    tools = json.loads(first["tools"])
    assert "submit_diagnosis" in {t["function"]["name"] for t in tools}
    # The same run as Parquet; `datasets` loads both files into the same rows.
    parquet = project.run("export", run_id, "--format", "parquet", "--passed-only")
    assert parquet.code == 0, parquet.stderr
    as_parquet = _load("parquet", project.root / f"{run_id}.parquet", tmp_path / "hf")
    as_json = _load("json", project.root / "demo.jsonl", tmp_path / "hf")
    assert as_parquet.num_rows == as_json.num_rows == len(records)
    assert as_parquet[0]["messages"] == as_json[0]["messages"] == records[0]["messages"]
    assert as_parquet[0]["grade"]["checks"] == records[0]["grade"]["checks"]
    assert as_parquet["reward"] == [r["reward"] for r in records]


def test_an_eval_run_exports_failed_episodes_with_reward_zero(project: Project) -> None:
    project.write("agent_mod.py", AGENT)
    project.write("slow_eval.py", EVAL)
    ran = project.run("test", "slow_eval.py", "--agent", "py:agent_mod:agent", "--json")
    assert ran.code == 1, ran.stderr
    exported = project.run("export", "latest", "-o", "all.jsonl")
    assert exported.code == 0, exported.stderr
    records = {r["test_id"].rsplit("::", 1)[-1]: r for r in _lines(project.root / "all.jsonl")}
    assert {k: r["reward"] for k, r in records.items()} == {"answers": 1.0, "misses": 0.0}
    miss = records["misses"]
    assert miss["kind"] == "test" and miss["status"] == "failed" and miss["tools"] is None
    assert "replica" in miss["grade"]["failure_reason"]
    assert [m["role"] for m in miss["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert json.loads(miss["messages"][2]["content"]) == {"metric_name": "CPUUtilization", "values": [1, 2, 3]}
    assert json.loads(miss["tool_calls"][0]["arguments"]) == {"metric_name": "CPUUtilization"}


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ((), "give a stored run, or --pack/--generate to run one first"),
        (("latest", "--pack", "rds_postgres"), "give a stored run, or --pack/--generate to run one first"),
        (("latest", "--format", "csv"), "--format 'csv' is not an export format"),
        (("nosuchrun",), "unknown run 'nosuchrun'"),
        (
            ("latest", "--agent", "reference"),
            "--agent, --scenario and --axis2 choose the run that --pack/--generate starts",
        ),
        (("--generate", "rds:seed=1"), "count"),
        (("--pack", "no_such_pack"), "no_such_pack"),
    ],
)
def test_bad_export_input_is_a_usage_error_naming_the_fix(project: Project, args: tuple[str, ...], said: str) -> None:
    project.write("agent_mod.py", AGENT)
    project.write("slow_eval.py", EVAL)
    assert project.run("test", "slow_eval.py", "--agent", "py:agent_mod:agent").code == 1
    cli = project.run("export", *args)
    assert cli.code == 2, cli.stdout + cli.stderr
    assert said in cli.stderr and "Traceback" not in cli.stderr, cli.stderr
    assert not list(project.root.glob("*.jsonl"))


def test_an_export_that_cannot_be_written_says_where(project: Project) -> None:
    project.write("agent_mod.py", AGENT)
    project.write("slow_eval.py", EVAL)
    assert project.run("test", "slow_eval.py", "--agent", "py:agent_mod:agent").code == 1
    cli = project.run("export", "latest", "-o", "missing/dir/out.jsonl")
    assert cli.code == 2 and "cannot write the export" in cli.stderr and "missing/dir/out.jsonl" in cli.stderr
