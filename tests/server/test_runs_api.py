"""The runs API on a real loopback server: start, follow (SSE), read, compare, cancel; bad input; security."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from sredrill.engine import run as engine_run
from sredrill.server import ServerThread, create_app
from sredrill.server.runs_api import MAX_RUN_BODY_BYTES
from sredrill.store import Store
from tests.server.conftest import runs_auth
from tests.server.launch import launched

SLOW_EVALS = """
import asyncio

from sredrill import expect, test

for i in range(3):
    @test(f"quick {i}")
    async def _(agent):
        expect(1).to_be(1)


@test("slow")
async def _(agent):
    await asyncio.sleep(120)
"""


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


@pytest.fixture
def evals_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "evals"
    folder.mkdir()
    (folder / "slow_eval.py").write_text(textwrap.dedent(SLOW_EVALS))
    (tmp_path / "secret_eval.py").write_text("raise SystemExit('must not be read')\n")
    return folder


@pytest.fixture
def server(db: Path, evals_dir: Path) -> Iterator[ServerThread]:
    with ServerThread(create_app(packs=None, db=db, evals=str(evals_dir))) as running:
        yield running


@pytest.fixture
def client(server: ServerThread) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60, headers=runs_auth(server)) as http:
        yield http


def events_of(client: httpx.Client, run_id: str) -> list[tuple[str, dict]]:
    """Every Server-Sent Event of a run, until the stream ends (after `run_finished`)."""
    out = []
    with client.stream("GET", f"/api/runs/{run_id}/events") as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        kind = None
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: "):
                out.append((kind, json.loads(line.removeprefix("data: "))))
    return out


def start(client: httpx.Client, **body: object) -> str:
    response = client.post("/api/runs", json=body)
    assert response.status_code == 201, response.text
    return response.json()["run_id"]


def test_a_pack_run_streams_its_progress_and_is_stored(client: httpx.Client) -> None:
    run_id = start(client, packs=["rds_postgres"], agent="keyword", axis2=True, scenarios=["001-replication-lag"])
    events = events_of(client, run_id)
    kinds = [k for k, _ in events]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert events[0][1]["total"] == 2
    assert kinds.count("test_started") == kinds.count("test_finished") == 2
    finished = [e for k, e in events if k == "test_finished"]
    assert {f["status"] for f in finished} == {"failed"}
    assert any(s["role"] == "gate" and s["passed"] is False for s in finished[0]["signals"])
    assert [f["done"]["total"] for f in finished] == [1, 2]  # the counts so far, with every result
    assert events[-1][1]["status"] == "finished"
    summary = events[-1][1]["summary"]
    assert summary["total"] == 2 and summary["rca"]["axis2"]["total"] == 1
    assert summary["rca"]["gap"]["overall"] is not None

    body = client.get(f"/api/runs/{run_id}").json()
    assert body["status"] == "finished"
    assert [r["id"] for r in body["report"]["results"]] == [
        "rds_postgres/001-replication-lag#1",
        "rds_postgres/001-replication-lag#2",
    ]
    listed = client.get("/api/runs").json()["runs"]
    assert listed[0]["run_id"] == run_id and listed[0]["counts"]["failed"] == 2
    # The list's counts are the summary's top level: every result once (both axes), with what they count.
    assert listed[0]["counts"]["total"] == body["report"]["summary"]["total"] == 2
    assert listed[0]["counts"]["counts"] == body["report"]["summary"]["counts"]
    assert listed[0]["pass_rate"] == listed[0]["counts"]["pass_rate"] == body["report"]["summary"]["pass_rate"]

    one = client.get(f"/api/runs/{run_id}/results/rds_postgres/001-replication-lag%231").json()
    assert one["result"]["status"] == "failed"
    assert one["trajectory"][0]["kind"] == "user"

    # A stream opened late replays every event, then ends.
    assert [k for k, _ in events_of(client, run_id)] == kinds


def test_a_run_made_outside_the_server_is_listed_and_compared(client: httpx.Client, db: Path) -> None:
    engine_run(["rds_postgres"], agent="reference", db=str(db))  # what `sredrill run --db` calls
    first = client.get("/api/runs").json()["runs"][0]
    assert first["agent"] == "reference" and first["status"] == "finished"
    assert [k for k, _ in events_of(client, first["run_id"])] == ["run_finished"]
    second = start(client, packs=["rds_postgres"], agent="keyword")
    events_of(client, second)
    cmp = client.get("/api/compare", params={"a": first["run_id"], "b": second}).json()
    assert cmp["regressed"] and not cmp["fixed"]
    assert cmp["pass_rate_a"] > cmp["pass_rate_b"]
    lo, hi = cmp["pass_rate_ci_b"]
    assert lo <= cmp["pass_rate_b"] <= hi
    rates = {r["key"]: r for r in cmp["rates"]}
    assert rates["all"]["pass_rate_a"] == cmp["pass_rate_a"] and "each counted once" in cmp["counts"]
    assert rates["all"]["pass_rate_ci_a"] == cmp["pass_rate_ci_a"]
    assert rates["rca.axis1"]["counts"] == "RCA scenarios on Axis 1 (full evidence)"
    assert cmp["paired"]["c"] == len(cmp["regressed"]) and cmp["paired"]["shared"] == len(cmp["tests"])
    # The API's body is the CLI's `runs compare --json`: one model.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SREDRILL_")}
    cli = subprocess.run([sys.executable, "-m", "sredrill", "runs", "compare", first["run_id"], second, "--json",
                          "--db", str(db)], env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout) == cmp
    # Each test's page in both runs is a link that the UI serves.
    regressed = next(t for t in cmp["tests"] if t["direction"] == "regressed")
    for url in (regressed["url_a"], regressed["url_b"]):
        shown = client.get(url)
        assert shown.status_code == 200 and regressed["test_id"] in shown.text
    page = client.get("/ui/compare", params={"a": first["run_id"], "b": second})
    assert page.status_code == 200 and f'href="{regressed["url_b"]}"' in page.text
    assert f"{len(cmp['regressed'])} regressed" in page.text and 'id="paired"' in page.text
    listed = client.get("/api/runs").json()["runs"]
    assert listed[0]["pass_rate_ci"] == cmp["pass_rate_ci_b"] == listed[0]["counts"]["pass_rate_ci"]


def test_a_cancelled_run_keeps_every_finished_result(client: httpx.Client, db: Path) -> None:
    run_id = start(client, evals=["slow_eval.py"])
    seen: list[str] = []
    with client.stream("GET", f"/api/runs/{run_id}/events") as response:
        for line in response.iter_lines():
            if not line.startswith("data: "):
                continue
            event = json.loads(line.removeprefix("data: "))
            seen.append(event["kind"])
            if event["kind"] == "test_started" and event["name"] == "slow":
                assert client.post(f"/api/runs/{run_id}/cancel").status_code == 202
            if event["kind"] == "run_finished":
                assert event["status"] == "cancelled"
    assert seen.count("test_finished") == 3
    stored = Store(db).results(run_id)
    assert sorted(r.name for r in stored) == ["quick 0", "quick 1", "quick 2"]
    assert {r.status.value for r in stored} == {"passed"}
    assert client.get(f"/api/runs/{run_id}").json()["status"] == "cancelled"
    again = client.post(f"/api/runs/{run_id}/cancel")
    assert again.status_code == 409 and "already ended" in again.text


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        (b"{not json", 422, "json_invalid"),
        (b'{"agent": 3}', 422, "Input should be a valid string"),
        (b'{"pakcs": ["rds_postgres"]}', 422, "Extra inputs are not permitted"),
        (b'{"jobs": 0}', 422, "greater than or equal to 1"),
        (b'{"difficulty": [9]}', 422, "less than or equal to 4"),
        (b'{"mode": "fast"}', 422, "'full', 'selective' or 'temporal'"),
        (b'{"packs": ["nope"]}', 400, "is not served here"),
        (b'{"packs": ["rds_postgres"], "scenarios": ["zzz"]}', 400, "'zzz': no scenario"),
        (b'{"agent": "nosuch:thing"}', 400, "nosuch"),
        (b'{"evals": ["../secret_eval.py"]}', 403, "outside the eval folder"),
        (b'{"evals": ["/etc/passwd"]}', 403, "outside the eval folder"),
    ],
)
def test_bad_bodies_get_a_clear_message(client: httpx.Client, body: bytes, status: int, needle: str) -> None:
    response = client.post("/api/runs", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == status, response.text
    assert needle in response.text


def test_a_body_too_large_is_refused(client: httpx.Client) -> None:
    big = json.dumps({"packs": ["x" * MAX_RUN_BODY_BYTES]})
    response = client.post("/api/runs", content=big, headers={"Content-Type": "application/json"})
    assert response.status_code == 413 and "limited to" in response.text


def test_eval_runs_need_an_evals_folder(db: Path) -> None:
    with ServerThread(create_app(packs=(), db=db)) as server:
        response = httpx.post(f"{server.url}/api/runs", json={"evals": ["x_eval.py"]}, headers=runs_auth(server))
    assert response.status_code == 400 and "--evals" in response.text


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/runs/nope"),
        ("GET", "/api/runs/nope/events"),
        ("GET", "/api/runs/nope/results/x"),
        ("POST", "/api/runs/nope/cancel"),
        ("GET", "/api/compare?a=nope&b=nope"),
        ("GET", "/ui/runs/nope"),
        ("GET", "/ui/runs/nope/tests/x"),
    ],
)
def test_unknown_ids_are_404(client: httpx.Client, method: str, path: str) -> None:
    response = client.request(method, path)
    assert response.status_code == 404
    assert "nope" in response.text


def test_an_unknown_test_of_a_known_run_is_404(client: httpx.Client) -> None:
    run_id = start(client, packs=["rds_postgres"], agent="keyword", scenarios=["000-healthy"])
    events_of(client, run_id)
    response = client.get(f"/api/runs/{run_id}/results/no-such-test")
    assert response.status_code == 404 and "no-such-test" in response.text


def test_a_foreign_origin_or_host_cannot_write(client: httpx.Client) -> None:
    response = client.post("/api/runs", json={}, headers={"Origin": "http://evil.example"})
    assert response.status_code == 403 and "evil.example" in response.text
    response = client.post("/api/runs/x/cancel", headers={"Origin": "null"})
    assert response.status_code == 403
    response = client.get("/api/runs", headers={"Host": "evil.example"})
    assert response.status_code == 403 and "loopback" in response.text


def test_beyond_loopback_every_route_but_health_needs_the_token(db: Path) -> None:
    app = create_app(packs=(), db=db, token="s3cret", loopback_only=False)
    with ServerThread(app) as server, httpx.Client(base_url=server.url) as http:
        assert http.get("/health").status_code == 200
        paths = ("/api/runs", "/ui", "/ui/env", "/api/runs/x", "/metadata", "/schema", "/tasks", "/docs", "/")
        for path in paths:
            missing = http.get(path)
            assert missing.status_code == 401, path
            assert "token" in missing.text
            assert http.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 403
        assert http.get("/api/runs", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert http.get("/tasks", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert http.post("/reset", json={}).status_code == 401  # the session routes' own check
        assert http.post("/api/runs", json={"packs": ["nope"]}).status_code == 401
        # The UI takes the token once from a link and keeps it in a cookie.
        first = http.get("/ui?token=s3cret", follow_redirects=False)
        assert first.status_code == 303
        assert http.get("/ui").status_code == 200


def test_beyond_loopback_without_a_token_the_runs_api_is_closed(db: Path) -> None:
    with ServerThread(create_app(packs=(), db=db, loopback_only=False)) as server:
        response = httpx.get(f"{server.url}/api/runs")
    assert response.status_code == 403 and "--token" in response.text


def test_ui_pages_render(client: httpx.Client) -> None:
    run_id = start(client, packs=["rds_postgres"], agent="keyword", scenarios=["001-replication-lag"])
    events_of(client, run_id)
    page = client.get(f"/ui/runs/{run_id}").text
    assert "RCA scenarios · pass rate by difficulty" in page and "decisive_evidence" in page
    # The runs list and the run page show one pass rate, over the same results, with the same words.
    rate = re.search(r'id="pass-rate">([^<]*)<', page)
    row = re.search(rf'data-run-id="{run_id}">.*?class="num pass-rate">([^<]*)<', client.get("/ui").text)
    assert rate is not None and row is not None and rate.group(1) == row.group(1) == "0.0%"
    assert "every result of the run, each counted once" in page
    test = client.get(f"/ui/runs/{run_id}/tests/rds_postgres%2F001-replication-lag%231").text
    assert 'id="signals"' in test and 'id="trajectory"' in test and 'class="alert"' in test
    assert "http://" not in test.replace(client.base_url.host, "")  # no network asset
    assert "Start episode" in client.get("/ui/env").text
    assert run_id in client.get("/ui").text


def test_a_run_status_has_one_name_on_every_surface(client: httpx.Client, db: Path) -> None:
    engine_run(["rds_postgres"], agent="reference", db=str(db))
    with Store(db) as store:  # what a CLI run still going on (or killed) leaves in the store
        store.begin_run("20250101-000000-abcdef", kind="run", agent="x", mode=None, started_at=datetime.now(UTC),
                        config={})  # fmt: skip
        finished = next(r.run_id for r in store.list_runs() if r.finished)
    expected = {"20250101-000000-abcdef": "interrupted", finished: "finished"}

    cli = [sys.executable, "-m", "sredrill", "runs", "list", "--db", str(db)]
    listed = subprocess.run([*cli, "--json"], capture_output=True, text=True, check=True)
    assert {r["run_id"]: r["status"] for r in json.loads(listed.stdout)} == expected
    table = subprocess.run(cli, capture_output=True, text=True, check=True, env={**os.environ, "COLUMNS": "250"})
    cells = [[c.strip() for c in line.strip("│").split("│")] for line in table.stdout.splitlines() if "│" in line]
    assert {row[0]: row[-1] for row in cells if row[0]} == expected
    assert {r["run_id"]: r["status"] for r in client.get("/api/runs").json()["runs"]} == expected
    for run_id, status in expected.items():
        assert client.get(f"/api/runs/{run_id}").json()["status"] == status
        assert events_of(client, run_id)[-1][1]["status"] == status
        assert f"id='run-status'>{status}</b>" in client.get(f"/ui/runs/{run_id}").text
    assert "unfinished" not in client.get("/ui").text + client.get("/api/runs").text


def test_stopping_the_server_cancels_its_runs_and_keeps_their_results(db: Path, evals_dir: Path) -> None:
    server = ServerThread(create_app(packs=(), db=db, evals=str(evals_dir))).start()
    try:
        with httpx.Client(base_url=server.url, timeout=60, headers=runs_auth(server)) as http:
            run_id = start(http, evals=["slow_eval.py"])
            with http.stream("GET", f"/api/runs/{run_id}/events") as response:
                for line in response.iter_lines():
                    if line.startswith("data: ") and '"name":"slow"' in line:
                        break
    finally:
        server.stop()
    with Store(db) as store:
        assert sorted(r.name for r in store.results(run_id)) == ["quick 0", "quick 1", "quick 2"]
        record = store.get_run(run_id)
        assert record is not None and not record.finished  # `sredrill test --resume RUN` continues it


def test_a_cli_run_shows_up_in_sredrill_serve(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SREDRILL_")}
    db = str(tmp_path / "cli.db")
    cli = [sys.executable, "-m", "sredrill"]
    ran = subprocess.run([*cli, "run", "--pack", "rds_postgres", "--agent", "keyword", "--db", db, "--json"],
                         env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    run_id = json.loads(ran.stdout)["run_id"]
    with launched([*cli, "serve", "--port", "0", "--pack", "rds_postgres", "--db", db], env=env) as server:
        assert "/ui" in "".join(server.stderr)
        with httpx.Client(base_url=server.url, timeout=60, headers=server.auth()) as http:
            runs = http.get("/api/runs").json()["runs"]
            assert [(r["run_id"], r["status"], r["agent"]) for r in runs] == [(run_id, "finished", "keyword")]
            assert run_id in http.get("/ui").text
            assert http.get(f"/ui/runs/{run_id}").status_code == 200


def test_a_run_of_the_incidents_pack_takes_seeds(client: httpx.Client) -> None:
    run_id = start(client, packs=["incidents"], scenarios=["web_api"], seeds="100030-100031")
    events = events_of(client, run_id)
    assert events[-1][1]["status"] == "finished"
    ids = [r["id"] for r in client.get(f"/api/runs/{run_id}").json()["report"]["results"]]
    assert sorted(ids) == ["incidents/web_api#seed100030", "incidents/web_api#seed100031"]
    bad = client.post("/api/runs", json={"packs": ["incidents"], "seeds": "9-3"})
    assert bad.status_code == 400 and "ends before it starts" in bad.json()["detail"][0]["msg"]
    assert client.post("/api/runs", json={"packs": ["incidents"], "seeds": 5}).status_code == 422
