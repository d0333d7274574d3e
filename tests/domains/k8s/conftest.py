"""The Kubernetes domain's test pack (`tests/fixtures/k8s_small`, our own data in the upstream layout), loaded by
the real loader, and `edited_pack` to write a copy of it with some files changed (for lint's failing cases)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sredrill.evidence import BackendMode, RcaToolset
from sredrill.scenarios import Pack, Scenario, load_pack

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "k8s_small"
OOM = "001-ledger-memory"
"""The OOM scenario: startsAt 14:05, a pod log, an event and a Datadog record dated after it."""
IMAGE = "002-bad-image-tag"
NODE = "003-node-lost"
OLD = "004-old-restarts"
FAILING_POD = "ledger-api-5b7f9d8c66-2xk9p"
SIBLING = "ledger-api-5b7f9d8c66-q7wzm"

Edit = Callable[[Any], Any]
"""Takes a file's parsed JSON (or text for other files), returns the new content (or mutates it and returns None)."""


@pytest.fixture(scope="session")
def pack() -> Pack:
    loaded = load_pack(FIXTURE)
    assert not loaded.errors, loaded.errors
    return loaded


def edited_pack(tmp_path: Path, edits: dict[str, Edit]) -> Pack:
    """A copy of the test pack with `folder/file` edited, loaded."""
    root = tmp_path / "k8s_small"
    shutil.copytree(FIXTURE, root)
    for rel, edit in edits.items():
        path = root / rel
        if path.suffix == ".json":
            data = json.loads(path.read_text())
            new = edit(data)
            path.write_text(json.dumps(data if new is None else new))
        else:
            path.write_text(edit(path.read_text()))
    return load_pack(root)


async def call(scenario: Scenario, tool: str, mode: str = "selective", **args: Any) -> dict[str, Any]:
    """One call on a fresh toolset."""
    result = await RcaToolset(scenario, BackendMode(mode)).call(tool, args)
    assert isinstance(result, dict)
    return result
