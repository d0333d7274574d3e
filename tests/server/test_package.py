"""envs/trace_env, the deployable OpenEnv package: its files checked statically, its server run outside Docker.

`openenv validate` itself, openenv-core's clients and the package's own `server` script run in the package's
environment, from `envs/trace_env/tests/conformance.py` (`.ci/run` calls it after `make test`).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import httpx
import pytest
import yaml

from tests.server.launch import launched

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "envs" / "trace_env"


def dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) pairs, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (PACKAGE / "Dockerfile").read_text())
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            instruction, _, rest = line.partition(" ")
            found.append((instruction.upper(), rest.strip()))
    return found


def pyproject() -> dict:
    return tomllib.loads((PACKAGE / "pyproject.toml").read_text())


def test_the_layout_mirrors_echo_env() -> None:
    names = ["openenv.yaml", "pyproject.toml", "uv.lock", "README.md", "__init__.py", "client.py", "models.py"]
    names += ["server/__init__.py", "server/app.py", "Dockerfile", "inference.py", "tests/conformance.py"]
    for name in names:
        assert (PACKAGE / name).is_file(), name


def test_manifest() -> None:
    manifest = yaml.safe_load((PACKAGE / "openenv.yaml").read_text())
    assert manifest["spec_version"] == 1 and manifest["name"] == "trace"
    assert manifest["type"] == "space" and manifest["runtime"] == "fastapi"
    assert manifest["app"] == "server.app:app" and manifest["port"] == 7860


def test_pyproject_depends_on_openenv_core_and_this_sredrill() -> None:
    project = pyproject()
    deps = project["project"]["dependencies"]
    assert "openenv-core==0.3.0" in deps
    assert any(d.startswith("sredrill") for d in deps)
    assert project["project"]["scripts"]["server"] == "trace_env.server.app:main"
    source = project["tool"]["uv"]["sources"]["sredrill"]
    assert (PACKAGE / source["path"]).resolve() == ROOT
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"] == "sredrill"


def test_the_lock_pins_openenv_core_and_sredrill_from_the_repository() -> None:
    lock = tomllib.loads((PACKAGE / "uv.lock").read_text())
    packages = {p["name"]: p for p in lock["package"]}
    assert packages["openenv-core"]["version"] == "0.3.0"
    assert packages["sredrill"]["source"] == {"editable": "../../"}
    assert "openai" in packages and "fastapi" in packages


def test_server_app_is_a_thin_shell_with_main_and_a_guard() -> None:
    source = (PACKAGE / "server" / "app.py").read_text()
    tree = ast.parse(source)
    assert "def main(" in source
    guard = [n for n in tree.body if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test)]
    assert guard and "main(" in ast.unparse(guard[0].body[0])
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imported == {"sredrill.server"}
    assert len(source.splitlines()) < 50


def test_dockerfile_statically() -> None:
    steps = dockerfile()
    assert steps[0] == ("FROM", "python:3.11-slim")  # an official image, a pinned minor version
    uv = re.search(r"uv==([\d.]+)", " ".join(a for i, a in steps if i == "RUN"))
    makefile = (ROOT / "Makefile").read_text()
    assert uv and f"UV_VERSION := {uv.group(1)}" in makefile  # the same uv as the Makefile's
    for instruction, args in steps:
        if instruction == "COPY":
            *sources, _ = shlex.split(args)
            for source in sources:
                assert (ROOT / source).exists(), f"COPY {source}: not in the build context (the repository root)"
    workdirs = [a for i, a in steps if i == "WORKDIR"]
    assert workdirs[-1] == "/app/envs/trace_env"
    assert any(i == "RUN" and "uv sync --frozen" in a for i, a in steps)
    env = " ".join(a for i, a in steps if i == "ENV")
    assert "HOST=0.0.0.0" in env and "PORT=7860" in env and "/app/envs/trace_env/.venv/bin" in env
    assert ("EXPOSE", "7860") in steps
    cmd = [a for i, a in steps if i == "CMD"]
    assert len(cmd) == 1 and json.loads(cmd[0]) == ["server"]  # the package's console script
    assert "server" in pyproject()["project"]["scripts"]
    ignore = (PACKAGE / "Dockerfile.dockerignore").read_text()
    assert "**/.venv" in ignore


def test_readme_has_space_front_matter_and_says_the_build_is_unverified() -> None:
    text = (PACKAGE / "README.md").read_text()
    _, front, body = text.split("---\n", 2)
    meta = yaml.safe_load(front)
    assert meta["sdk"] == "docker" and meta["app_port"] == 7860 and "openenv" in meta["tags"]
    assert "image build is not verified here" in body


@pytest.mark.parametrize("how", ["args", "environment"])
def test_server_app_main_serves_outside_docker(how: str) -> None:
    env = {**os.environ, "HOST": "127.0.0.1", "PORT": "0" if how == "environment" else "7"}
    cmd = [sys.executable, str(PACKAGE / "server" / "app.py")]
    if how == "args":
        cmd += ["--port", "0"]
    with launched(cmd, env=env) as server:
        assert server.url.startswith("http://127.0.0.1:")
        assert "TRACE: serving on" in "".join(server.stderr)
        assert httpx.post(f"{server.url}/reset", json={}).status_code == 200
        tasks = httpx.get(f"{server.url}/tasks").json()["tasks"]
        assert any(t["kind"] == "rca" for t in tasks)  # every built-in pack
    # uvicorn shuts down gracefully on SIGTERM, then re-raises it: the exit status says "terminated".
    assert server.proc.returncode in (0, -signal.SIGTERM)


def test_server_app_main_with_a_token() -> None:
    env = {**os.environ, "HOST": "127.0.0.1", "PORT": "0", "TRACE_TOKEN": "tok"}
    with launched([sys.executable, str(PACKAGE / "server" / "app.py")], env=env) as server:
        assert httpx.post(f"{server.url}/reset", json={}).status_code == 401
        assert httpx.post(f"{server.url}/reset", json={}, headers={"Authorization": "Bearer tok"}).status_code == 200


def test_server_app_main_serves_keyed_episodes_from_a_key_file(tmp_path: Path) -> None:
    from sredrill.incidents.families import family_task

    key = tmp_path / "episode.key"
    key.write_text("an-evaluation-servers-secret-key\n")
    env = {**os.environ, "HOST": "127.0.0.1", "PORT": "0"}
    cmd = [sys.executable, str(PACKAGE / "server" / "app.py"), "--episode-key-file", str(key)]
    with launched(cmd, env=env) as server:
        reset = httpx.post(f"{server.url}/reset", json={"task_id": "web_api", "seed": 100001})
        served = list(reset.json()["observation"]["services"])
        assert served == list(family_task("web_api", 100001, key="an-evaluation-servers-secret-key").components)
        assert served != list(family_task("web_api", 100001).components)


@pytest.mark.parametrize(("content", "message"), [(None, "cannot read the episode key"), ("short", "at least 16")])
def test_server_app_main_refuses_a_bad_key_file(tmp_path: Path, content: str | None, message: str) -> None:
    key = tmp_path / "episode.key"
    if content is not None:
        key.write_text(content)
    cmd = [sys.executable, str(PACKAGE / "server" / "app.py"), "--episode-key-file", str(key)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and str(key) in proc.stderr and "Traceback" not in proc.stderr
