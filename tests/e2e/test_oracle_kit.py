"""The oracles' own robustness: they search a machine's disk, where other tests leave malformed answer keys and
stores; an oracle that crashed on one would report an errored run instead of what it found."""

from __future__ import annotations

import importlib
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.oracle_support import ORACLES


@pytest.fixture
def kit() -> Iterator[Any]:
    sys.path.insert(0, str(ORACLES))
    try:
        yield importlib.import_module("oracle_kit")
    finally:
        sys.path.remove(str(ORACLES))


@pytest.mark.parametrize(
    "text", ["failure_modes: 5\nroot_cause_category: 3\nmodel_response: 7\n", "failure_modes: [\n", "- a\n- b\n"]
)
def test_a_malformed_answer_key_on_disk_is_read_or_skipped_never_a_crash(kit: Any, tmp_path: Path, text: str) -> None:
    path = tmp_path / "001-x" / "answer.yml"
    path.parent.mkdir()
    path.write_text(text)
    got = kit.read_answer_file(path)
    assert got is None or isinstance(got[0], str)


def test_a_store_whose_expected_modes_are_not_a_list_is_still_read(kit: Any, tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE results (seq INTEGER, test_id TEXT, result TEXT)")
        conn.execute("INSERT INTO results VALUES (1, 't', ?)", ('{"expected": {"failure_modes": 5}}',))
    findings = kit.Findings("fs")
    assert kit.store_material(db, findings, "store")
    assert "['5']" in findings.found["store"][0]


def test_a_deeply_nested_alert_next_to_an_answer_key_is_skipped(kit: Any, tmp_path: Path) -> None:
    folder = tmp_path / "001-deep"
    folder.mkdir()
    (folder / "alert.json").write_text("[" * 100_000 + "]" * 100_000)  # a robustness test's fixture
    assert kit._title_of(folder) is None
