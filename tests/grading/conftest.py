"""Fixtures of the grading tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.grading.builders import PackWriter, pack_writer


@pytest.fixture
def write_pack(tmp_path: Path) -> PackWriter:
    """Write and load a one-scenario pack (see `builders.pack_writer`)."""
    return pack_writer(tmp_path)
