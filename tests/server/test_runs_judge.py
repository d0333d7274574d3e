"""The judge of eval runs started through the runs API: named in `POST /api/runs`, or the server's defaults
(`sredrill serve --judge-*`), each reaching a real local OpenAI-compatible judge; its API key comes only from the
server's environment, goes only to the server's judge, and is never answered or stored."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sredrill.harness.context import JudgeConfig
from sredrill.server import ServerThread, create_app
from tests.server.conftest import runs_auth
from tests.server.launch import launched
from tests.support.openai_server import OpenAIStub, chat_completion

JUDGED_EVAL = """
from sredrill import judge, test


@test("judged", prompt="why is the database slow?")
async def _(agent):
    result = await agent.run()
    await judge(result, "names the database as the cause")
"""
KEY = "sk-judge-secret-4242"


def verdict(body: dict) -> tuple[int, dict, dict]:
    reply = {"passed": True, "score": 0.9, "reasoning": f"judged by {body['model']}"}
    return 200, chat_completion(json.dumps(reply)).body, {}


@pytest.fixture
def evals(tmp_path: Path) -> Path:
    folder = tmp_path / "evals"
    folder.mkdir()
    (folder / "judged_eval.py").write_text(textwrap.dedent(JUDGED_EVAL))
    return folder


@pytest.fixture
def judge() -> Iterator[OpenAIStub]:
    with OpenAIStub(responder=verdict) as stub:
        yield stub


def finished(http: httpx.Client, body: dict) -> dict:
    """Start a run with `body`, follow it to its end, and return its one result."""
    started = http.post("/api/runs", json={"evals": ["judged_eval.py"], "agent": "keyword", **body})
    assert started.status_code == 201, started.text
    run_id = started.json()["run_id"]
    with http.stream("GET", f"/api/runs/{run_id}/events") as response:
        assert [line for line in response.iter_lines() if line.startswith("event: ")][-1] == "event: run_finished"
    (result,) = http.get(f"/api/runs/{run_id}").json()["report"]["results"]
    return result


def judged(result: dict) -> dict:
    return next(s for s in result["signals"] if s["kind"] == "judge")


def test_the_body_names_the_judge_and_overrides_the_servers(tmp_path: Path, evals: Path, judge: OpenAIStub) -> None:
    defaults = JudgeConfig(base_url=judge.base_url, model="server-model", api_key=KEY)
    app = create_app(packs=(), db=tmp_path / "runs.db", evals=str(evals), judge=defaults)
    with (
        ServerThread(app) as server,
        OpenAIStub(responder=verdict) as other,
        httpx.Client(base_url=server.url, timeout=120, headers=runs_auth(server)) as http,
    ):
        assert KEY not in repr(app.state.options)
        # No judge in the body: the server's model, endpoint and key.
        result = finished(http, {})
        assert result["status"] == "passed" and judged(result)["reasoning"] == "judged by server-model"
        assert [(r.body["model"], r.headers.get("Authorization")) for r in judge.requests] == [
            ("server-model", f"Bearer {KEY}")
        ]
        # The body's model, at the server's endpoint (with its key).
        result = finished(http, {"judge_model": "body-model"})
        assert judged(result)["reasoning"] == "judged by body-model"
        assert judge.requests[-1].headers.get("Authorization") == f"Bearer {KEY}"
        # Another endpoint: the body's model there, and the server's key is not sent to it.
        result = finished(http, {"judge_model": "elsewhere", "judge_base_url": other.base_url})
        assert judged(result)["reasoning"] == "judged by elsewhere"
        assert [(r.body["model"], r.headers.get("Authorization")) for r in other.requests] == [("elsewhere", None)]
        assert len(judge.requests) == 2
        # skip_judge: a neutral verdict, no call.
        result = finished(http, {"skip_judge": True, "judge_model": "unused"})
        assert judged(result)["skipped"] is True and len(judge.requests) + len(other.requests) == 3


def test_the_servers_skip_judge_is_a_default_the_body_overrides(tmp_path: Path, evals: Path, judge: OpenAIStub) -> None:
    defaults = JudgeConfig(base_url=judge.base_url, model="m", skip=True)
    app = create_app(packs=(), db=tmp_path / "runs.db", evals=str(evals), judge=defaults)
    with ServerThread(app) as server, httpx.Client(base_url=server.url, timeout=120, headers=runs_auth(server)) as http:
        assert judged(finished(http, {}))["skipped"] is True and not judge.requests
        assert judged(finished(http, {"skip_judge": False}))["skipped"] is False
        assert [r.body["model"] for r in judge.requests] == ["m"]


@pytest.mark.parametrize(
    ("body", "status", "loc", "needle"),
    [
        ({"judge_base_url": "ftp://judge.example/v1"}, 422, "judge_base_url", "must be an http(s) URL"),
        ({"judge_base_url": "judge.example"}, 422, "judge_base_url", "must be an http(s) URL"),
        ({"judge_base_url": 5}, 422, "judge_base_url", "valid string"),
        ({"judge_model": ""}, 422, "judge_model", "at least 1 character"),
        ({"judge_model": ["m"]}, 422, "judge_model", "valid string"),
        ({"skip_judge": "yes"}, 422, "skip_judge", "valid boolean"),
        ({"judge_api_key": "sk-x"}, 422, "judge_api_key", "never sent in a request"),
        ({"judge_model": "m", "evals": []}, 400, "judge_model", "eval-file runs (`evals`) only"),
        (
            {"skip_judge": True, "packs": ["rds_postgres"], "evals": []},
            400,
            "skip_judge",
            "eval-file runs (`evals`) only",
        ),
    ],
)
def test_bad_judge_settings_name_the_field(
    tmp_path: Path, evals: Path, body: dict, status: int, loc: str, needle: str
) -> None:
    with ServerThread(create_app(packs=(), db=tmp_path / "runs.db", evals=str(evals))) as server:
        response = httpx.post(f"{server.url}/api/runs", json={"evals": ["judged_eval.py"], **body},
                              headers=runs_auth(server))  # fmt: skip
    assert response.status_code == status, response.text
    detail = response.json()["detail"][0]
    assert detail["loc"] == ["body", loc] and needle in detail["msg"]
    assert "sk-x" not in response.text


def test_sredrill_serve_judge_flags_reach_the_judge_and_the_key_is_never_answered_or_stored(
    tmp_path: Path, evals: Path, judge: OpenAIStub
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SREDRILL_", "OPENAI_"))}
    env["MY_JUDGE_KEY"] = KEY
    db = tmp_path / "served.db"
    cli = [sys.executable, "-m", "sredrill", "serve", "--port", "0", "--pack", "rds_postgres", "--db", str(db)]
    flags = ["--evals", str(evals), "--judge-model", "served-model", "--judge-base-url", judge.base_url,
             "--judge-api-key-env", "MY_JUDGE_KEY"]  # fmt: skip
    with launched([*cli, *flags], env=env) as server, httpx.Client(base_url=server.url, timeout=120,
                                                                   headers=server.auth()) as http:  # fmt: skip
        result = finished(http, {})
        answers = [http.get(path).text for path in ("/api/runs", "/api/runs/latest", "/api/runs/latest/events")]
        answers += [http.get("/ui").text, http.get("/ui/runs/latest").text, "".join(server.stderr)]
    assert judged(result)["reasoning"] == "judged by served-model"
    assert [(r.body["model"], r.headers.get("Authorization")) for r in judge.requests] == [
        ("served-model", f"Bearer {KEY}")
    ]
    assert not any(KEY in text for text in answers)
    dump = "\n".join(sqlite3.connect(db).iterdump())
    assert "served-model" in dump and KEY not in dump  # the run is stored, the key is not


@pytest.mark.parametrize(
    ("flags", "env", "needle"),
    [
        (["--judge-api-key-env", "NO_SUCH_VAR_4242"], {}, "$NO_SUCH_VAR_4242 is not set"),
        (["--judge-base-url", "localhost:9"], {}, "--judge-base-url must be an http(s) URL"),
        ([], {"SREDRILL_JUDGE_BASE_URL": "nope"}, "$SREDRILL_JUDGE_BASE_URL must be an http(s) URL"),
    ],
)
def test_sredrill_serve_refuses_a_bad_judge_setting(
    tmp_path: Path, flags: list[str], env: dict[str, str], needle: str
) -> None:
    import subprocess

    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SREDRILL_", "OPENAI_"))}
    ran = subprocess.run([sys.executable, "-m", "sredrill", "serve", "--port", "0", *flags],
                         env={**clean, **env}, cwd=tmp_path, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert ran.returncode == 2, ran.stderr
    assert needle in ran.stderr and ran.stderr.startswith("error: ")
