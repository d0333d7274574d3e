"""The built-in `rds_generated` pack (the public split, made in memory from its `pack.yml`), a pack folder whose
`pack.yml` names a generated set, and the environment's catalog of a generated set."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from sredrill.env import TaskCatalog
from sredrill.errors import InputError, PackError
from sredrill.generate import generator_for
from sredrill.scenarios import builtin_pack_names, load_pack

PUBLIC = "rds:seed=100000:count=40"


def test_the_public_split_is_a_built_in_pack_made_from_its_pack_yml() -> None:
    assert "rds_generated" in builtin_pack_names()
    pack = load_pack("rds_generated")
    assert pack.builtin and pack.domain == "rds" and not pack.broken
    assert len(pack.scenarios) == 40
    assert pack.root.name == "rds_generated" and [p.name for p in pack.root.iterdir()] == ["pack.yml"]
    # The fixed evaluation mix: uniform over difficulties 1-4, exactly, per block of four.
    assert Counter(s.metadata.scenario_difficulty for s in pack.scenarios) == {1: 10, 2: 10, 3: 10, 4: 10}
    assert PUBLIC in (pack.root / "pack.yml").read_text()


def write_pack_yml(folder: Path, *, spec: str, version: str) -> Path:
    folder.mkdir()
    (folder / "pack.yml").write_text(
        f"domain: rds\ngenerated:\n  generator: rds\n  version: {version}\n  spec: '{spec}'\n", encoding="utf-8"
    )
    return folder


def test_a_folder_whose_pack_yml_names_a_set_loads_that_set(tmp_path: Path) -> None:
    version = generator_for("rds").version
    pack = load_pack(write_pack_yml(tmp_path / "mine", spec="rds:seed=12:count=2", version=version))
    assert pack.name == "mine" and len(pack.scenarios) == 2 and not pack.broken


def test_another_generator_version_is_refused_naming_the_field(tmp_path: Path) -> None:
    folder = write_pack_yml(tmp_path / "old", spec="rds:seed=12:count=2", version="rds-0")
    with pytest.raises(PackError, match="version 'rds-0'") as caught:
        load_pack(folder)
    assert caught.value.field == "generated.version" and "old/pack.yml" in str(caught.value.path)


def test_a_bad_spec_in_pack_yml_is_a_pack_error(tmp_path: Path) -> None:
    folder = write_pack_yml(tmp_path / "bad", spec="rds:seed=12", version=generator_for("rds").version)
    with pytest.raises(PackError, match="'count' is missing") as caught:
        load_pack(folder)
    assert caught.value.field == "generated.spec"


def test_the_environment_catalog_of_a_generated_set_makes_rca_tasks() -> None:
    catalog = TaskCatalog.generated("rds:seed=1000003:count=2")
    rca = [t for t in catalog.tasks() if t.task_id.startswith("rca-")]
    assert len(rca) == 2
    env = catalog.make(rca[0].task_id)
    observation = env.reset()
    assert observation is not None
    with pytest.raises(InputError, match="'count' is missing"):
        TaskCatalog.generated("rds:seed=1")
