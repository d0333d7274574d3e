"""A folder linked at the top of the launch directory (`examples -> ../shared/examples`) is bound at its real
path inside the sandbox: what imports outside imports inside, and answer keys under the link are still masked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sredrill.isolation import Sandbox, resolve_isolation
from tests.isolation import require_sandbox

LOOK = """\
import json, sys
sys.path.insert(0, str(CODE))
import shared_lib.helper as helper
seen = {"helper": helper.VALUE}
for name in ["shared_lib/helper.py", "keys/001-disk/answer.yml", "keys/001-disk/alert.json"]:
    path = CODE / name
    seen[name] = path.read_text() if path.is_file() else None
print(json.dumps(seen))
"""


@pytest.fixture
def code(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    (outside / "shared_lib").mkdir(parents=True)
    (outside / "shared_lib" / "__init__.py").write_text("")
    (outside / "shared_lib" / "helper.py").write_text("VALUE = 'imported through the link'\n")
    scenario = outside / "pack" / "001-disk"
    scenario.mkdir(parents=True)
    (scenario / "answer.yml").write_text("category: resource_exhaustion\n")
    (scenario / "alert.json").write_text('{"title": "disk"}\n')
    root = tmp_path / "project"
    root.mkdir()
    (root / "shared_lib").symlink_to(outside / "shared_lib")
    (root / "keys").symlink_to(outside / "pack")
    (root / "up").symlink_to(tmp_path)  # a link to a folder above the launch dir binds nothing
    return root


def test_a_linked_folder_imports_inside_and_its_answer_keys_stay_masked(code: Path, tmp_path: Path) -> None:
    require_sandbox()
    work = tmp_path / "work"
    work.mkdir()
    policy = resolve_isolation("sandbox", launch_dir=code)
    script = f"CODE = __import__('pathlib').Path({str(code)!r})\n" + LOOK
    argv = Sandbox(policy).command([sys.executable, "-c", script], workdir=work)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["helper"] == "imported through the link"
    assert seen["shared_lib/helper.py"] == "VALUE = 'imported through the link'\n"
    assert seen["keys/001-disk/answer.yml"] is None
    assert seen["keys/001-disk/alert.json"] is None


def test_only_links_to_folders_outside_the_launch_dir_and_not_above_it_are_bound(code: Path, tmp_path: Path) -> None:
    from sredrill.isolation.sandbox import _linked_trees

    (code / "inside").mkdir()
    (code / "again").symlink_to(code / "inside")  # already bound with the launch dir
    (code / "file_link").symlink_to(tmp_path / "outside" / "shared_lib" / "helper.py")
    (code / "dangling").symlink_to(tmp_path / "nowhere")
    policy = resolve_isolation("process", launch_dir=code)
    outside = (tmp_path / "outside").resolve()
    assert set(_linked_trees(policy)) == {outside / "shared_lib", outside / "pack"}
