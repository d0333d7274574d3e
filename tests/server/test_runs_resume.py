"""`POST /api/runs/{run_id}/resume` on a real loopback server: a cancelled run continues from its stored plan over
HTTP (finished results kept, only the rest runs); unknown, finished and running runs; the checks a new run's body
gets (agent policy, served packs, the eval folder) applied to the stored plan; the episode key never served."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from sredrill.engine.plan import EvalSelection, PackSelection, RunPlan
from sredrill.server import ServerThread, create_app
from sredrill.store import Store
from tests.server.conftest import runs_auth

# The gated test waits for a file the test creates: the first run is cancelled while it waits, the resumed run
# finds the file and passes. The wait has a deadline so a broken test cannot hang the suite.
GATED_EVALS = """
import asyncio
import time
from pathlib import Path

from sredrill import expect, test

GATE = Path({gate!r})

for i in range(3):
    @test(f"quick {{i}}")
    async def _(agent):
        expect(1).to_be(1)


@test("gated")
async def _(agent):
    deadline = time.monotonic() + 120
    while not GATE.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    expect(GATE.exists()).to_be(True)
"""


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"


@pytest.fixture
def gate(tmp_path: Path) -> Path:
    return tmp_path / "gate-open"


@pytest.fixture
def evals_dir(tmp_path: Path, gate: Path) -> Path:
    folder = tmp_path / "evals"
    folder.mkdir()
    (folder / "gated_eval.py").write_text(textwrap.dedent(GATED_EVALS.format(gate=str(gate))))
    return folder


@pytest.fixture
def server(db: Path, evals_dir: Path) -> Iterator[ServerThread]:
    with ServerThread(create_app(packs=None, db=db, evals=str(evals_dir))) as running:
        yield running


@pytest.fixture
def client(server: ServerThread) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60, headers=runs_auth(server)) as http:
        yield http


def events_of(client: httpx.Client, run_id: str, *, on_started: str | None = None) -> list[dict]:
    """The run's Server-Sent Events until `run_finished`; cancels the run when test `on_started` starts."""
    out = []
    with client.stream("GET", f"/api/runs/{run_id}/events") as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data: "):
                event = json.loads(line.removeprefix("data: "))
                out.append(event)
                if on_started is not None and event["kind"] == "test_started" and event["name"] == on_started:
                    assert client.post(f"/api/runs/{run_id}/cancel").status_code == 202
    return out


def stored_rows(db: Path, run_id: str) -> dict[str, str]:
    with sqlite3.connect(db) as con:
        return dict(con.execute("SELECT test_id, result FROM results WHERE run_id = ?", (run_id,)).fetchall())


def begin(db: Path, run_id: str, config: dict, *, kind: str = "run", agent: str | None = "keyword") -> None:
    with Store(db) as store:
        store.begin_run(run_id, kind=kind, agent=agent, mode=None, started_at=datetime.now(UTC), config=config)


def test_a_cancelled_run_resumes_over_http_with_nothing_lost(client: httpx.Client, db: Path, gate: Path) -> None:
    started = client.post("/api/runs", json={"evals": ["gated_eval.py"], "agent": "reference"})
    assert started.status_code == 201, started.text
    run_id = started.json()["run_id"]
    first = events_of(client, run_id, on_started="gated")
    assert first[-1]["kind"] == "run_finished" and first[-1]["status"] == "cancelled"
    before = stored_rows(db, run_id)
    assert len(before) == 3  # the quick ones; the gated one was cancelled, so it is not stored

    gate.touch()
    resumed = client.post(f"/api/runs/{run_id[:12]}/resume")  # a unique prefix, as every route takes
    assert resumed.status_code == 201, resumed.text
    assert resumed.json()["run_id"] == run_id and resumed.json()["status"] in ("running", "finished")
    events = events_of(client, run_id)
    assert events[0]["kind"] == "run_started" and events[0]["total"] == 4
    assert [e["name"] for e in events if e["kind"] == "test_started"] == ["gated"]  # only the rest runs
    assert events[-1]["status"] == "finished" and events[-1]["summary"]["passed"] == 4

    after = stored_rows(db, run_id)
    assert {k: after[k] for k in before} == before  # finished results were kept, not rerun
    report = client.get(f"/api/runs/{run_id}").json()
    assert report["status"] == "finished" and report["report"]["summary"]["total"] == 4
    again = client.post(f"/api/runs/{run_id}/resume")
    assert again.status_code == 409 and again.json()["detail"][0]["type"] == "run_finished"


def test_a_run_going_on_cannot_be_resumed(client: httpx.Client, gate: Path) -> None:
    run_id = client.post("/api/runs", json={"evals": ["gated_eval.py"]}).json()["run_id"]
    try:
        busy = client.post(f"/api/runs/{run_id}/resume")
        assert busy.status_code == 409, busy.text
        assert busy.json()["detail"][0]["type"] == "run_going_on" and "cancel" in busy.text
    finally:
        gate.touch()
        events_of(client, run_id)


def test_a_partly_stored_pack_run_resumes_from_its_plan(client: httpx.Client, db: Path) -> None:
    plan = RunPlan(
        agent="keyword",
        selection=PackSelection(packs=("rds_postgres",), scenarios=("000-healthy", "001-replication-lag")),
    )
    begin(db, "20250101-000000-aaaaaa", plan.stored())
    response = client.post("/api/runs/20250101-000000-aaaaaa/resume", json={"jobs": 2})
    assert response.status_code == 201, response.text
    events = events_of(client, "20250101-000000-aaaaaa")
    assert events[-1]["status"] == "finished"
    ids = sorted(r["id"] for r in client.get("/api/runs/20250101-000000-aaaaaa").json()["report"]["results"])
    assert ids == ["rds_postgres/000-healthy#1", "rds_postgres/001-replication-lag#1"]


def test_a_run_stored_before_plans_resumes_over_http(client: httpx.Client, db: Path) -> None:
    # The config dict `run_packs` stored before plans were typed (plan version 0).
    legacy = {"packs": ["rds_postgres"], "mode": None, "axis2": False, "scenarios": ["000-healthy"],
              "difficulty": [], "blind": True, "seed": None, "seeds": None, "jobs": 1, "repeat": 1, "retries": 0,
              "timeout": None, "maxfail": None, "last_failed": None}  # fmt: skip
    begin(db, "20240101-000000-bbbbbb", legacy)
    assert client.post("/api/runs/20240101-000000-bbbbbb/resume").status_code == 201
    events = events_of(client, "20240101-000000-bbbbbb")
    assert events[-1]["status"] == "finished" and events[-1]["summary"]["total"] == 1


@pytest.mark.parametrize(
    ("plan", "kind", "status", "needle"),
    [
        (RunPlan(agent="py:os:system", selection=PackSelection(packs=("rds_postgres",))), "run", 403, "--allow-agent"),
        (RunPlan(agent="keyword", selection=PackSelection(packs=("/tmp/my-pack",))), "run", 403, "does not serve"),
        (RunPlan(agent=None, selection=EvalSelection(paths=("/etc",))), "test", 403, "outside the eval folder"),
    ],
)
def test_a_stored_plan_gets_the_checks_of_a_new_run(
    client: httpx.Client, db: Path, plan: RunPlan, kind: str, status: int, needle: str
) -> None:
    begin(db, "20250101-000000-cccccc", plan.stored(), kind=kind, agent=plan.agent)
    response = client.post("/api/runs/20250101-000000-cccccc/resume")
    assert response.status_code == status, response.text
    assert needle in response.text
    assert Store(db).results("20250101-000000-cccccc") == []  # nothing ran


def test_resume_errors_are_clear(client: httpx.Client, server: ServerThread, db: Path) -> None:
    missing = client.post("/api/runs/nope/resume")
    assert missing.status_code == 404 and "nope" in missing.text
    begin(db, "20250101-000000-dddddd", {"version": 99, "selection": {}})
    newer = client.post("/api/runs/20250101-000000-dddddd/resume")
    assert newer.status_code == 409 and "plan version 99" in newer.text
    bad = client.post("/api/runs/20250101-000000-dddddd/resume", json={"jbos": 2})
    assert bad.status_code == 422 and "Extra inputs" in bad.text
    # Same token and origin checks as the other write routes.
    anonymous = httpx.post(f"{server.url}/api/runs/20250101-000000-dddddd/resume")
    assert anonymous.status_code == 401
    foreign = client.post("/api/runs/20250101-000000-dddddd/resume", headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403


def test_the_episode_key_of_a_run_is_never_served(client: httpx.Client, db: Path) -> None:
    run_id = client.post("/api/runs", json={"packs": ["incidents"], "scenarios": ["web_api"], "seeds": "100030"})
    run_id = run_id.json()["run_id"]
    served = json.dumps(events_of(client, run_id))
    record = Store(db).get_run(run_id)
    assert record is not None
    key = record.config["episode_key"]
    assert isinstance(key, str) and len(key) >= 16  # kept in the store, for a resume
    served += client.get("/api/runs").text + client.get(f"/api/runs/{run_id}").text
    served += client.get(f"/api/runs/{run_id}/results/incidents/web_api%23seed100030").text
    served += client.get(f"/ui/runs/{run_id}").text
    assert key not in served
