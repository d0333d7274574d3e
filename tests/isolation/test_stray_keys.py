"""Answer keys the run does not know of: a scenario folder (an `answer.yml` inside) copied under the agent's code
directory is masked whole, like the run's own packs; the rest of the code dir stays readable."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sredrill.isolation import Sandbox, resolve_isolation
from tests.isolation import require_sandbox

LOOK = """\
import json, pathlib
root = pathlib.Path(".").resolve()
seen = {}
for name in ["notes.txt", "backup/pack/001-disk/answer.yml", "backup/pack/001-disk/alert.json",
             "backup/pack/pack.yml", "venv/keys/001-x/answer.yml"]:
    path = CODE / name
    seen[name] = path.read_text() if path.is_file() else None
print(json.dumps(seen))
"""


@pytest.fixture
def code(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    scenario = root / "backup" / "pack" / "001-disk"
    scenario.mkdir(parents=True)
    (scenario / "answer.yml").write_text("category: resource_exhaustion\nfailure_modes: [storage_full]\n")
    (scenario / "alert.json").write_text('{"title": "disk"}\n')
    (root / "backup" / "pack" / "pack.yml").write_text("name: pack\n")
    (root / "notes.txt").write_text("readable\n")
    # A virtual environment is not walked (it is big, and holds installed code, not a pack copy).
    venv = root / "venv"
    (venv / "keys" / "001-x").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "keys" / "001-x" / "answer.yml").write_text("category: x\n")
    return root


def test_a_scenario_folder_copied_under_the_code_dir_is_masked(code: Path, tmp_path: Path) -> None:
    require_sandbox()
    work = tmp_path / "work"
    work.mkdir()
    policy = resolve_isolation("sandbox", launch_dir=code)
    script = f"CODE = __import__('pathlib').Path({str(code)!r})\n" + LOOK
    argv = Sandbox(policy).command([sys.executable, "-c", script], workdir=work)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["notes.txt"] == "readable\n"
    assert seen["backup/pack/001-disk/answer.yml"] is None
    assert seen["backup/pack/001-disk/alert.json"] is None  # the whole scenario folder: an empty tmpfs
    assert seen["backup/pack/pack.yml"] == "name: pack\n"
    assert seen["venv/keys/001-x/answer.yml"] == "category: x\n"  # the documented bound of the walk


def test_the_walk_finds_scenario_folders_but_not_the_code_dir_itself_or_masked_trees(code: Path) -> None:
    from sredrill.isolation.sandbox import _answer_folders

    (code / "answer.yml").write_text("category: x\n")  # the code dir itself is never masked (the agent runs there)
    masked = code / "masked"
    (masked / "001-y").mkdir(parents=True)
    (masked / "001-y" / "answer.yml").write_text("category: y\n")
    policy = resolve_isolation("process", launch_dir=code, masked=[masked])
    assert _answer_folders(policy) == ((code / "backup" / "pack" / "001-disk").resolve(),)
