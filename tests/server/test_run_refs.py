"""Run references in the runs API: a full id, a unique prefix or `latest`, for a run still going on as for a
stored one, read as `Store.resolve_run` and the CLI read them; several matches answer 409, none 404."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from sredrill.server import ServerThread, create_app
from sredrill.store import Store
from tests.server.conftest import runs_auth

SLOW_EVALS = """
from sredrill import expect, test
import asyncio


@test("quick")
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
def client(db: Path, tmp_path: Path) -> Iterator[httpx.Client]:
    evals = tmp_path / "evals"
    evals.mkdir()
    (evals / "slow_eval.py").write_text(textwrap.dedent(SLOW_EVALS))
    with (
        ServerThread(create_app(packs=(), db=db, evals=str(evals))) as server,
        httpx.Client(base_url=server.url, timeout=60, headers=runs_auth(server)) as http,
    ):
        yield http


def events_until(client: httpx.Client, ref: str, stop: str) -> list[dict]:
    """The run's events read from `/api/runs/{ref}/events` up to the first whose name or kind is `stop`."""
    seen: list[dict] = []
    with client.stream("GET", f"/api/runs/{ref}/events") as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line.startswith("data: "):
                seen.append(json.loads(line.removeprefix("data: ")))
                if stop in (seen[-1]["kind"], seen[-1].get("name")):
                    break
    return seen


def test_a_run_going_on_is_found_by_prefix_and_latest_on_every_route(client: httpx.Client) -> None:
    started = client.post("/api/runs", json={"evals": ["slow_eval.py"]})
    assert started.status_code == 201, started.text
    run_id = started.json()["run_id"]
    prefix = run_id[:-3]
    # Followed by its prefix, the run streams live: the replay of its start, then its tests as they come.
    live = events_until(client, prefix, "slow")
    assert live[0] == {"kind": "run_started", "run_id": run_id, "total": 2, "title": live[0]["title"]}
    quick = next(e for e in live if e["kind"] == "test_finished")
    for ref in (prefix, "latest", run_id):
        body = client.get(f"/api/runs/{ref}").json()
        assert body["status"] == "running" and body["report"]["run_id"] == run_id, ref
        one = client.get(f"/api/runs/{ref}/results/{quick['test_id']}")
        assert one.status_code == 200 and one.json()["run_id"] == run_id, ref
        assert events_until(client, ref, "run_started")[0]["run_id"] == run_id
    assert client.get("/api/compare", params={"a": "latest", "b": prefix}).json()["run_a"] == run_id
    cancelled = client.post("/api/runs/latest/cancel")
    assert cancelled.status_code == 202 and cancelled.json() == {"run_id": run_id, "status": "cancelling"}
    assert events_until(client, prefix, "run_finished")[-1]["status"] == "cancelled"
    again = client.post(f"/api/runs/{prefix}/cancel")
    assert again.status_code == 409 and f"run {run_id!r} already ended" in again.json()["detail"][0]["msg"]


AMBIGUOUS = ("20250101-000000-aaaa11", "20250101-000000-aaaa22")


@pytest.mark.parametrize(
    ("method", "path", "loc"),
    [
        ("GET", "/api/runs/{ref}", ["path", "run_id"]),
        ("GET", "/api/runs/{ref}/events", ["path", "run_id"]),
        ("GET", "/api/runs/{ref}/results/x", ["path", "run_id"]),
        ("POST", "/api/runs/{ref}/cancel", ["path", "run_id"]),
        ("POST", "/api/runs/{ref}/resume", ["path", "run_id"]),
        ("GET", "/api/compare?a={ref}&b=latest", ["query", "a"]),
        ("GET", "/api/compare?a=latest&b={ref}", ["query", "b"]),
    ],
)
def test_a_prefix_of_several_runs_is_409_naming_them_and_an_unknown_one_404(
    client: httpx.Client, db: Path, method: str, path: str, loc: list[str]
) -> None:
    with Store(db) as store:
        for run_id in AMBIGUOUS:
            store.begin_run(run_id, kind="run", agent="x", mode=None, started_at=datetime.now(UTC), config={})
    ambiguous = client.request(method, path.format(ref="20250101-000000-aaaa"))
    assert ambiguous.status_code == 409, ambiguous.text
    body = ambiguous.json()
    assert body["detail"][0]["type"] == "ambiguous_run" and body["detail"][0]["loc"] == loc
    assert "'20250101-000000-aaaa' is ambiguous: 2 runs start with it" in body["detail"][0]["msg"]
    assert body["allowed"] == list(AMBIGUOUS) and body["hint"] == "type more characters of the run id"

    unknown = client.request(method, path.format(ref="20250101-000000-aaab"))
    assert unknown.status_code == 404, unknown.text
    body = unknown.json()
    assert body["detail"][0]["type"] == "not_found" and body["detail"][0]["loc"] == loc
    assert "unknown run '20250101-000000-aaab'" in body["detail"][0]["msg"]
    assert body["allowed"] == sorted(["latest", *AMBIGUOUS]) and body["hint"] == "list runs at GET /api/runs"
    assert str(db) not in unknown.text  # the server's files are not named to a client


def test_latest_with_no_run_stored_is_404_saying_so(client: httpx.Client) -> None:
    response = client.get("/api/runs/latest")
    assert response.status_code == 404
    assert response.json()["detail"][0]["msg"] == "no run is stored yet, so there is no 'latest' run"


@pytest.mark.parametrize(
    ("path", "choice"),
    [
        ("/ui/runs/{ref}", "/ui/runs/{run_id}"),
        ("/ui/runs/{ref}/tests/pack/x%23axis1", "/ui/runs/{run_id}/tests/pack/x%23axis1"),
        ("/ui/compare?a={ref}&b=latest", "/ui/compare?a={run_id}&amp;b=latest"),
        ("/ui/compare?a=latest&b={ref}", "/ui/compare?a=latest&amp;b={run_id}"),
    ],
)
def test_the_ui_reads_a_run_prefix_as_the_api_does(client: httpx.Client, db: Path, path: str, choice: str) -> None:
    """A prefix of several runs is a 409 page linking each (the same address with the full id), as the API's 409;
    an unknown one a 404 page with the store's words, as the API's 404; not one "not found" for both."""
    with Store(db) as store:
        for run_id in AMBIGUOUS:
            store.begin_run(run_id, kind="run", agent="x", mode=None, started_at=datetime.now(UTC), config={})
    ambiguous = client.get(path.format(ref="20250101-000000-aaaa"))
    assert ambiguous.status_code == 409, ambiguous.text
    assert "run &#x27;20250101-000000-aaaa&#x27; is ambiguous: 2 runs start with it" in ambiguous.text
    for run_id in AMBIGUOUS:
        assert f'href="{choice.format(run_id=run_id)}"' in ambiguous.text
    unknown = client.get(path.format(ref="20250101-000000-aaab"))
    assert unknown.status_code == 404
    assert "unknown run &#x27;20250101-000000-aaab&#x27;" in unknown.text
