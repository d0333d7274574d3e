"""envs/trace_env/inference.py: exactly the [START]/[STEP]/[END] lines, against a scripted model or none at all."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sredrill.server import ServerThread
from tests.server.conftest import running
from tests.support.openai_server import OpenAIStub, chat_completion, conversation, tool_call

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "envs" / "trace_env" / "inference.py"

START = re.compile(r"^\[START\] task=(?P<task>\S+) env=trace model=(?P<model>\S+)$")
STEP = re.compile(
    r"^\[STEP\] step=(?P<step>\d+) action=(?P<action>null|\{\S*\}) reward=(?P<reward>-?\d+\.\d{2}) "
    r"done=(?P<done>true|false) error=(?P<error>null|.+)$"
)
END = re.compile(
    r"^\[END\] success=(?P<success>true|false) steps=(?P<steps>\d+) score=(?P<score>\d\.\d{3}) "
    r"rewards=(?P<rewards>(-?\d+\.\d{2}(,-?\d+\.\d{2})*)?)$"
)


def run_inference(env: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("API_BASE_URL", "MODEL_NAME", "HF_TOKEN", "API_KEY", "ENV_BASE_URL", "TASKS", "SEED")
    }
    return subprocess.run(
        [sys.executable, str(SCRIPT)], env={**clean, **env}, capture_output=True, text=True, timeout=timeout
    )


def blocks(stdout: str) -> list[dict[str, Any]]:
    """Parse stdout into one block per task; every line must match one of the three formats."""
    parsed: list[dict[str, Any]] = []
    for line in stdout.splitlines():
        if m := START.match(line):
            parsed.append({"start": m.groupdict(), "steps": [], "end": None})
        elif m := STEP.match(line):
            assert parsed and parsed[-1]["end"] is None, line
            parsed[-1]["steps"].append(m.groupdict())
        elif m := END.match(line):
            assert parsed and parsed[-1]["end"] is None, line
            parsed[-1]["end"] = m.groupdict()
        else:
            raise AssertionError(f"a stdout line in no known format: {line!r}")
    assert all(b["end"] is not None for b in parsed)
    return parsed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def env_server() -> Any:
    with running() as server:
        yield server


def test_a_scripted_model_prints_exactly_the_lines(env_server: ServerThread) -> None:
    script = conversation(
        [
            chat_completion('{"action_type": "inspect_logs", "target": "api_workers"}'),
            chat_completion('```json\n{"action_type": "scale_worker", "target": "api_workers", "value": 6}\n```'),
            chat_completion("no idea"),
            chat_completion(tool_calls=[tool_call("scale_workers", {"target": "api_workers", "value": 6})]),
            chat_completion('{"action": {"action_type": "declare_healthy"}}'),
        ]
    )  # fmt: skip
    with OpenAIStub(responder=script) as stub:
        done = run_inference(
            {
                "API_BASE_URL": stub.base_url,
                "MODEL_NAME": "stub-model",
                "HF_TOKEN": "t0ken",
                "ENV_BASE_URL": env_server.url,
                "TASKS": "easy_cpu_spike",
            }
        )
        requests = stub.requests
    assert done.returncode == 0, done.stderr
    [block] = blocks(done.stdout)
    assert block["start"] == {"task": "easy_cpu_spike", "model": "stub-model"}
    steps = block["steps"]
    assert [s["step"] for s in steps] == ["1", "2", "3", "4", "5"]
    assert json.loads(steps[0]["action"]) == {"action_type": "inspect_logs", "target": "api_workers"}
    assert steps[0]["action"] == '{"action_type":"inspect_logs","target":"api_workers"}'  # compact JSON
    assert (steps[0]["reward"], steps[0]["done"], steps[0]["error"]) == ("1.00", "false", "null")
    # an action the environment rejects: a step with its error, reward 0.00, the episode unchanged
    assert steps[1]["reward"] == "0.00" and "did you mean 'scale_workers'?" in steps[1]["error"]
    # a reply that is no action at all
    assert steps[2]["action"] == "null" and "no JSON object" in steps[2]["error"]
    # tool calls are read too
    assert json.loads(steps[3]["action"]) == {"action_type": "scale_workers", "target": "api_workers", "value": 6}
    assert (steps[3]["reward"], steps[3]["error"]) == ("5.00", "null")
    assert steps[4]["action"] == '{"action_type":"declare_healthy"}'
    assert (steps[4]["reward"], steps[4]["done"]) == ("10.00", "true")
    # the grade: resolved in 3 of 5 environment steps
    assert block["end"] == {"success": "true", "steps": "5", "score": "0.760", "rewards": "1.00,0.00,0.00,5.00,10.00"}
    assert {k.lower(): v for k, v in requests[0].headers.items()}["authorization"] == "Bearer t0ken"
    first = requests[0].body
    assert first["model"] == "stub-model" and "scale_workers" in first["messages"][0]["content"]
    assert "That was not accepted" in requests[2].body["messages"][-1]["content"]


def test_without_a_reachable_model_the_reference_plays_and_says_so() -> None:
    done = run_inference({"API_BASE_URL": f"http://127.0.0.1:{free_port()}/v1"})  # nothing listens there
    assert done.returncode == 0, done.stderr
    parsed = blocks(done.stdout)
    assert [b["start"]["task"] for b in parsed] == ["easy_cpu_spike", "medium_cascade", "hard_mixed"]
    assert {b["start"]["model"] for b in parsed} == {"fallback:reference"}
    assert "unreachable" in done.stderr and "fallback:reference" in done.stderr
    for block in parsed:
        assert block["end"]["success"] == "true", block
        assert int(block["end"]["steps"]) == len(block["steps"]) == len(block["end"]["rewards"].split(","))
        assert 0.6 <= float(block["end"]["score"]) <= 1.0
        assert block["steps"][-1]["done"] == "true"
        assert all(s["error"] == "null" for s in block["steps"])


def test_an_unreachable_environment_still_ends_every_task() -> None:
    done = run_inference(
        {
            "API_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
            "ENV_BASE_URL": f"http://127.0.0.1:{free_port()}",
            "TASKS": "easy_cpu_spike,hard_mixed",
        }
    )
    assert done.returncode == 0
    parsed = blocks(done.stdout)
    assert [b["start"]["task"] for b in parsed] == ["easy_cpu_spike", "hard_mixed"]
    assert all(b["end"] == {"success": "false", "steps": "0", "score": "0.000", "rewards": ""} for b in parsed)
    assert "stopped" in done.stderr


def test_an_unknown_task_ends_with_the_environments_error(env_server: ServerThread) -> None:
    done = run_inference(
        {
            "API_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
            "ENV_BASE_URL": env_server.url,
            "TASKS": "easy_cpu_spik,easy_cpu_spike",
        }
    )
    assert done.returncode == 0
    first, second = blocks(done.stdout)
    assert first["end"]["success"] == "false" and first["steps"] == []
    assert "did you mean 'easy_cpu_spike'" in done.stderr
    assert second["end"]["success"] == "true"


def test_tasks_take_families_with_a_seed_and_the_model_sees_the_episodes_system(env_server: ServerThread) -> None:
    from sredrill.incidents.families import family_task

    task = family_task("web_api", 100_017)
    first = task.components[0]
    script = conversation(
        [
            chat_completion(json.dumps({"action_type": "inspect_logs", "target": first})),
            chat_completion('{"action_type": "restart_database", "target": "database"}'),  # not in this system
            chat_completion('{"action_type": "declare_unfixable"}'),
        ]
    )
    with OpenAIStub(responder=script) as stub:
        done = run_inference(
            {
                "API_BASE_URL": stub.base_url,
                "MODEL_NAME": "stub-model",
                "HF_TOKEN": "t",
                "ENV_BASE_URL": env_server.url,
                "TASKS": "web_api#seed100017",
            }
        )
        requests = stub.requests
    assert done.returncode == 0, done.stderr
    [block] = blocks(done.stdout)
    assert block["start"] == {"task": "web_api#seed100017", "model": "stub-model"}
    steps = block["steps"]
    assert json.loads(steps[0]["action"]) == {"action_type": "inspect_logs", "target": first}
    assert steps[0]["error"] == "null"
    assert "cannot target 'database'" in steps[1]["error"] and "allowed" in steps[1]["error"]
    assert steps[2]["done"] == "true" and block["end"]["success"] == "false"
    system = requests[0].body["messages"][0]["content"]
    assert task.description in system  # the episode's own components and wiring
    assert f"Steps allowed: {task.max_steps}" in system
    assert all(name in system for name in task.components)  # the tools' targets, enumerated
    assert task.cause.kind not in system


def test_the_fallback_plays_family_episodes_on_their_seeds() -> None:
    done = run_inference(
        {
            "API_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
            "TASKS": "web_api#seed100001,event_pipeline,data_platform#seedX",
            "SEED": "100002",
        }
    )
    assert done.returncode == 0, done.stderr
    parsed = blocks(done.stdout)
    assert [b["start"]["task"] for b in parsed] == ["web_api#seed100001", "event_pipeline", "data_platform#seedX"]
    assert "TASK#seedN" in done.stderr  # the malformed seed is reported, and SEED used
    for block in parsed:
        assert block["start"]["model"] == "fallback:reference"
        assert block["end"]["success"] == "true", block
        assert all(s["error"] == "null" for s in block["steps"])
