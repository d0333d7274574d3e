"""Scenario folders of more than three digits (a generated set of 10,000): they load, in the order of their numbers."""

from __future__ import annotations

from pathlib import Path

from sredrill.scenarios import load_pack
from sredrill.scenarios.loader import folder_order
from tests.support.scenario_builder import scenario_yml, write_scenario


def test_four_digit_folders_load_after_three_digit_ones(tmp_path: Path) -> None:
    root = tmp_path / "big"
    root.mkdir()
    for name in ("1000-gen", "999-gen", "001-gen", "10000-gen"):
        write_scenario(root, name, {"scenario.yml": scenario_yml(name)})
    pack = load_pack(root)
    assert dict(pack.broken) == {}
    assert [s.folder for s in pack.scenarios] == ["001-gen", "999-gen", "1000-gen", "10000-gen"]


def test_two_digits_are_still_not_a_scenario_folder(tmp_path: Path) -> None:
    root = tmp_path / "small"
    root.mkdir()
    write_scenario(root, "001-gen", {"scenario.yml": scenario_yml("001-gen")})
    (root / "01-notes").mkdir()
    assert [s.folder for s in load_pack(root).scenarios] == ["001-gen"]
    assert sorted(["1000-a", "999-b", "0999-a"], key=folder_order) == ["0999-a", "999-b", "1000-a"]
