"""One generated scenario by its index: `Generator.scenario_at` makes byte for byte what `generate` yields at that
position, `difficulty_at` knows its difficulty without making it, and `generated_pack(spec, indices=...)` loads
only those (a run of `--generate` makes each scenario when its test starts)."""

from __future__ import annotations

import pytest
import yaml

from sredrill.generate import generate, generated_pack, generator_for, parse_generate_spec

SPECS = ["rds:seed=5:count=6", "rds:seed=2:count=4:difficulty=2,4:faults=cpu_saturation,storage_full"]


@pytest.mark.parametrize("text", SPECS)
def test_scenario_at_is_the_scenario_generate_yields_there(text: str) -> None:
    spec = parse_generate_spec(text)
    generator = generator_for(spec.domain)
    for index, made in enumerate(generate(spec)):
        alone = generator.scenario_at(spec, index)
        assert (alone.folder, dict(alone.files)) == (made.folder, dict(made.files))
        metadata = yaml.safe_load(made.files["scenario.yml"])
        assert generator.difficulty_at(spec, index) == metadata["scenario_difficulty"]


def test_an_index_outside_the_spec_is_refused() -> None:
    spec = parse_generate_spec("rds:seed=5:count=2")
    for index in (-1, 2):
        with pytest.raises(IndexError, match="scenarios 0 to 1"):
            generator_for("rds").scenario_at(spec, index)


def test_generated_pack_loads_only_the_indices_asked_for() -> None:
    spec = parse_generate_spec("rds:seed=5:count=6")
    whole = generated_pack(spec)
    some = generated_pack(spec, indices=[4, 1])
    assert [s.folder for s in some.scenarios] == [whole.scenarios[1].folder, whole.scenarios[4].folder]
    assert [s.answer for s in some.scenarios] == [whole.scenarios[1].answer, whole.scenarios[4].answer]
    empty = generated_pack(spec, indices=())
    assert (empty.name, empty.domain, empty.scenarios, dict(empty.broken)) == (spec.text(), "rds", (), {})
    assert empty.vocabulary.names == whole.vocabulary.names
