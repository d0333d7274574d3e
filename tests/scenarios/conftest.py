"""Fixtures of the scenario tests; the file builders live in `tests/support/scenario_builder.py`."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def pack_dir(tmp_path: Path) -> Path:
    """An empty pack folder named `drillpack`."""
    root = tmp_path / "drillpack"
    root.mkdir()
    return root
