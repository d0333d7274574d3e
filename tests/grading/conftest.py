"""Fixtures of the grading tests: one-scenario packs from the shared scenario builder."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from sredrill.scenarios import Pack
from tests.support.scenario_builder import PackWriter, build_pack, scenario_yml

FOLDER = "001-case"


@pytest.fixture
def write_pack(tmp_path: Path) -> PackWriter:
    """Write and load a pack of one scenario (`001-case`) per call; `pack_yml` adds a `pack.yml`.

    The answer key is exactly the keys given (at least `root_cause_category` and `required_keywords`) and a
    reference answer, so a key left out is absent, not defaulted; the evidence is the builder's default.
    """
    made = itertools.count(1)

    def write(*, failure_mode: str, pack_yml: Mapping[str, Any] | None = None, **answer: Any) -> Pack:
        files = {
            "scenario.yml": scenario_yml(FOLDER, failure_mode=failure_mode, severity="critical", scenario_difficulty=2),
            "answer.yml": {"model_response": "ROOT_CAUSE: reference", **answer},
        }
        return build_pack(tmp_path / f"pack{next(made)}", {FOLDER: files}, pack_yml=pack_yml)

    return write
