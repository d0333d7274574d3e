"""Generated sets as a user runs them: `sredrill generate` writes a pack, `sredrill run --generate SPEC` runs one
from memory (nothing written), the report and the store record the spec and the generator version, a resumed
or regraded run makes the same scenarios again, and every bad spec is one clear usage error."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sredrill.engine.launch import generated_pack_of
from sredrill.engine.plan import GeneratedSelection
from sredrill.errors import InputError
from sredrill.generate import generator_for
from sredrill.server import ServerThread, create_app
from tests.e2e.conftest import Project
from tests.server.conftest import runs_auth

SPEC = "rds:seed=3:count=4"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def test_generate_writes_a_pack_that_runs_and_the_same_seed_writes_the_same_bytes(project: Project) -> None:
    first = project.run("generate", "--domain", "rds", "--seed", "3", "--count", "4", "--out", "a", db=False)
    assert first.code == 0, first.stderr
    assert "wrote 4 scenario(s) of rds:seed=3:count=4" in first.stdout
    again = project.run("generate", "--seed", "3", "--count", "4", "--out", "b", db=False)
    assert again.code == 0, again.stderr
    assert digest(project.root / "a") == digest(project.root / "b")
    pack_yml = (project.root / "a" / "pack.yml").read_text()
    assert "spec: rds:seed=3:count=4" in pack_yml and generator_for("rds").version in pack_yml

    ran = project.run("run", "--pack", "a", "--agent", "keyword", "--json")
    assert ran.code in (0, 1), ran.stderr
    results = ran.report()["results"]
    assert len(results) == 4 and all(r["id"].startswith("a/") for r in results)
    assert ran.report()["generated"] is None  # a written pack is a pack; its pack.yml says how it was made


def test_generate_refuses_a_folder_that_is_not_empty_unless_forced(project: Project) -> None:
    project.write("out/notes.txt", "mine\n")
    refused = project.run("generate", "--seed", "1", "--count", "1", "--out", "out", db=False)
    assert refused.code == 2
    assert "not empty" in refused.stderr and "--force" in refused.stderr
    forced = project.run("generate", "--seed", "1", "--count", "1", "--out", "out", "--force", db=False)
    assert forced.code == 0, forced.stderr
    assert (project.root / "out" / "notes.txt").read_text() == "mine\n"  # other files stay
    project.write("file", "x\n")
    onto_file = project.run("generate", "--seed", "1", "--count", "1", "--out", "file", db=False)
    assert onto_file.code == 2 and "is a file" in onto_file.stderr


def test_run_generate_plays_the_set_from_memory_and_records_it(project: Project) -> None:
    ran = project.run("run", "--generate", SPEC, "--agent", "keyword", "--json")
    assert ran.code in (0, 1), ran.stderr
    report = ran.report()
    version = generator_for("rds").version
    assert report["generated"] == {"spec": SPEC, "generator": "rds", "version": version, "seed": 3}
    ids = [r["id"] for r in report["results"]]
    assert len(ids) == 4 and all(i.startswith(f"{SPEC}/") for i in ids)
    # Nothing was written but the store: the scenarios and their keys exist only in the run's memory.
    assert sorted(p.name for p in project.root.iterdir()) == ["runs.db"]

    shown = project.run("runs", "show", report["run_id"])
    assert shown.code in (0, 1), shown.stderr
    assert f"generated: {SPEC} (rds {version}, development seed)" in shown.stdout

    regraded = project.run("runs", "regrade", report["run_id"], "--json")
    assert regraded.code in (0, 1), regraded.stderr
    again = json.loads(regraded.stdout)
    assert again["generated"] == report["generated"]
    assert [r["status"] for r in again["results"]] == [r["status"] for r in report["results"]]


def test_run_generate_beside_a_pack_runs_both(project: Project) -> None:
    ran = project.run(
        "run", "--pack", "rds_postgres", "--generate", "rds:seed=5:count=1",
        "--agent", "keyword", "--json",
    )  # fmt: skip
    assert ran.code in (0, 1), ran.stderr
    packs = sorted({r["id"].partition("/")[0] for r in ran.report()["results"]})
    assert packs == ["rds:seed=5:count=1", "rds_postgres"]


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("rds:seed=x:count=2", "seed 'x' is not an integer"),
        ("rds:count=2", "'seed' is missing"),
        ("rds:seed=1:count=0", "count 0"),
        ("rds:seed=1:count=2:difficulty=7", "outside 1-4"),
        ("rds:seed=1:count=2:colour=red", "unknown key 'colour'"),
        ("rdss:seed=1:count=2", "no scenario generator for domain 'rdss'"),
        ("rds:seed=1:count=2:faults=disk_on_fire", "'disk_on_fire' is not a failure mode"),
    ],
)
def test_a_bad_spec_is_a_usage_error_naming_the_fix(project: Project, spec: str, needle: str) -> None:
    ran = project.run("run", "--generate", spec, "--agent", "keyword")
    assert ran.code == 2, ran.stdout + ran.stderr
    assert needle in ran.stderr and "--generate" in ran.stderr
    assert "Traceback" not in ran.stderr
    assert not (project.root / "runs.db").exists() or "rds" not in (project.root / "runs.db").read_bytes().decode(
        errors="replace"
    )


def test_another_generator_version_is_refused_when_the_set_is_made_again() -> None:
    chosen = GeneratedSelection(spec="rds:seed=1:count=1", generator="rds", version="rds-0")
    with pytest.raises(InputError, match="version 'rds-0'") as caught:
        generated_pack_of(chosen)
    assert caught.value.field == "--generate"


def test_generated_pack_of_makes_the_same_scenarios_as_the_plan_recorded() -> None:
    version = generator_for("rds").version
    chosen = GeneratedSelection(spec="rds:seed=9:count=2", generator="rds", version=version)
    one, two = generated_pack_of(chosen), generated_pack_of(chosen)
    assert not one.broken
    assert [s.folder for s in one.scenarios] == [s.folder for s in two.scenarios]
    assert [s.answer for s in one.scenarios] == [s.answer for s in two.scenarios]


@pytest.fixture
def api(tmp_path: Path) -> Iterator[httpx.Client]:
    with (
        ServerThread(create_app(packs=None, db=tmp_path / "runs.db")) as server,
        httpx.Client(base_url=server.url, timeout=120, headers=runs_auth(server)) as http,
    ):
        yield http


def test_the_runs_api_runs_a_generated_set(api: httpx.Client) -> None:
    response = api.post("/api/runs", json={"generate": "rds:seed=4:count=2", "agent": "keyword"})
    assert response.status_code == 201, response.text
    run_id = response.json()["run_id"]
    with api.stream("GET", f"/api/runs/{run_id}/events") as events:
        for _ in events.iter_lines():
            pass
    body = api.get(f"/api/runs/{run_id}").json()
    assert body["status"] == "finished"
    assert body["report"]["generated"]["spec"] == "rds:seed=4:count=2"
    assert [r["id"].partition("/")[0] for r in body["report"]["results"]] == ["rds:seed=4:count=2"] * 2


def test_the_runs_api_refuses_a_bad_spec_with_a_clear_message(api: httpx.Client) -> None:
    response = api.post("/api/runs", json={"generate": "rds:seed=1", "agent": "keyword"})
    assert response.status_code == 400, response.text
    assert "'count' is missing" in response.text
