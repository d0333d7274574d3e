"""`parse_generate_spec` (every malformed form is one InputError naming the problem and the fix), and generated
scenarios read from memory exactly as from a folder (`scenarios.loader.load_pack_files`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sredrill.errors import InputError
from sredrill.generate import GenerateSpec, parse_generate_spec
from sredrill.scenarios import PackConfig, load_pack
from sredrill.scenarios.loader import BUILTIN_PACKS_DIR, load_pack_files

RDS = BUILTIN_PACKS_DIR / "rds_postgres"


def test_a_spec_reads_into_its_one_spelling() -> None:
    spec = parse_generate_spec(" rds:seed=7:count=20:difficulty=3,2,3:faults=storage_full,cpu_saturation ")
    assert spec == GenerateSpec("rds", 7, 20, (2, 3), ("cpu_saturation", "storage_full"))
    assert parse_generate_spec(spec.text()) == spec
    assert parse_generate_spec("rds:count=1:seed=0") == GenerateSpec("rds", 0, 1)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "names no domain"),
        ("rdz:seed=1:count=2", "no scenario generator for domain 'rdz'; did you mean 'rds'?"),
        ("rds:sed=1:count=2", "unknown key 'sed'; did you mean 'seed'?"),
        ("rds:seed=1", "'count' is missing"),
        ("rds:count=1", "'seed' is missing"),
        ("rds:seed=x:count=2", "seed 'x' is not an integer"),
        ("rds:seed=1:count=2.5", "count '2.5' is not an integer"),
        ("rds:seed=-1:count=2", "seed -1 is negative"),
        ("rds:seed=1:count=0", "count 0 is not a number of scenarios"),
        ("rds:seed=1:count=2:difficulty=5", "difficulty 5 is outside 1-4"),
        ("rds:seed=1:count=2:difficulty=two", "difficulty 'two' is not an integer"),
        ("rds:seed=1:count=2:faults=a,,b", "faults has an empty entry"),
        ("rds:seed=1:seed=2:count=2", "'seed' is given twice"),
        ("rds:seed=1:count", "'count' is not KEY=VALUE"),
    ],
)
def test_a_malformed_spec_is_one_input_error_with_the_fix(text: str, problem: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_generate_spec(text)
    assert problem in caught.value.message
    assert caught.value.field == "--generate"
    assert caught.value.hint


def _files(folder: str) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((RDS / folder).iterdir()) if p.is_file()}


def test_scenarios_in_memory_load_as_their_folders_do() -> None:
    # 000-healthy holds the split metrics files: the loaders' glob reads memory too.
    folders = ("000-healthy", "001-replication-lag", "003-storage-full")
    pack = load_pack_files("mem", [(f, _files(f)) for f in folders], config=PackConfig(domain="rds"))
    disk = load_pack(RDS)
    assert not pack.broken and pack.domain == "rds"
    assert [s.folder for s in pack.scenarios] == list(folders)
    for scenario in pack.scenarios:
        on_disk = disk.scenario(scenario.folder)
        assert scenario.answer == on_disk.answer
        assert scenario.metadata == on_disk.metadata
        assert scenario.alert == on_disk.alert
        assert scenario.evidence.keys() == on_disk.evidence.keys()
        assert scenario.files["answer.yml"] == f"mem/{scenario.folder}/answer.yml"
    assert not pack.root.exists()


def test_a_broken_scenario_in_memory_is_broken_alone_with_the_loaders_error() -> None:
    bad = _files("001-replication-lag")
    bad["answer.yml"] = b"root_cause_category: [unclosed\n"
    del bad["alert.json"]
    good = _files("000-healthy")
    pack = load_pack_files(
        "mem", [("001-x", bad), ("000-healthy", good), ("bad name", good)],
        config=PackConfig(domain="rds"),
    )  # fmt: skip
    assert [s.folder for s in pack.scenarios] == ["000-healthy"]
    assert pack.broken["001-x"].path == "mem/001-x/alert.json"
    assert "not a scenario folder name" in pack.broken["bad name"].message
    with pytest.raises(ValueError, match="comes twice"):
        load_pack_files("mem", [("000-healthy", good)] * 2, config=PackConfig(domain="rds"))


def test_a_pack_in_memory_needs_its_domain(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="needs its domain"):
        load_pack_files("mem", [], config=PackConfig())


def test_pack_yml_records_how_a_generated_pack_was_made(tmp_path: Path) -> None:
    (tmp_path / "000-healthy").mkdir()
    for name, data in _files("000-healthy").items():
        (tmp_path / "000-healthy" / name).write_bytes(data)
    (tmp_path / "pack.yml").write_text(
        "domain: rds\ngenerated: {generator: rds, version: '1', spec: 'rds:seed=1:count=1'}\n"
    )
    assert not load_pack(tmp_path).broken
    (tmp_path / "pack.yml").write_text("domain: rds\ngenerated: {generator: rds, version: '1', sepc: x}\n")
    with pytest.raises(InputError, match="unknown key 'sepc'"):
        load_pack(tmp_path)
