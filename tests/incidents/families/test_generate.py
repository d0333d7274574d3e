"""The generator: same family and seed → the same task; bad input → a clear error; names never name faults."""

from __future__ import annotations

import pytest

from sredrill.errors import InputError
from sredrill.incidents.families import (
    ACTION_TYPES,
    EVAL_SEEDS,
    FAMILIES,
    FAULTS,
    TRAIN_SEEDS,
    FamilyTask,
    family_task,
    max_components,
    split_of,
)


def test_families_name_systems_and_the_splits_are_disjoint() -> None:
    assert len(FAMILIES) >= 3
    fault_ids = {f.id for f in FAULTS}
    assert not any(part in fault_ids for family in FAMILIES for part in family.split("_"))
    assert set(TRAIN_SEEDS).isdisjoint(EVAL_SEEDS)
    assert split_of(5) == "train" and split_of(150_000) == "eval" and split_of(10**9) == "unsplit"


@pytest.mark.parametrize("family", FAMILIES)
def test_same_seed_same_task(family: str) -> None:
    for seed in (0, 17, 123_456):
        a, b = family_task(family, seed), family_task(family, seed)
        assert a == b
        assert isinstance(a, FamilyTask) and 1 <= a.difficulty <= 3
        assert len(a.components) <= max_components(family)
    assert len({family_task(family, s).components for s in range(30)}) > 20  # names and sizes vary per seed


def test_unknown_family_and_bad_seeds_are_input_errors() -> None:
    with pytest.raises(InputError, match="did you mean 'web_api'") as err:
        family_task("web_apj", 0)
    assert err.value.field == "family" and err.value.allowed == sorted(FAMILIES)
    for bad in (-1, 2**31, 1.5, "3", True, None):
        with pytest.raises(InputError) as err:
            family_task("web_api", bad)  # type: ignore[arg-type]
        assert err.value.field == "seed"
    with pytest.raises(InputError, match="unknown family"):
        max_components("nope")


def test_every_fault_kind_and_location_kind_is_drawn() -> None:
    kinds, locations = set(), set()
    for family in FAMILIES:
        for seed in range(300):
            task = family_task(family, seed)
            kinds.add(task.cause.kind)
            locations.add(task.kinds[task.cause.location])
    assert kinds == {f.id for f in FAULTS}
    assert locations == {"api", "worker", "queue", "cache", "database", "external"}


def test_the_action_schema_enumerates_this_episodes_targets() -> None:
    task = family_task("event_pipeline", 3)
    schema = task.action_schema()
    by_type = {v["properties"]["action_type"]["const"]: v for v in schema["oneOf"]}
    assert set(by_type) <= set(ACTION_TYPES) and task.action_types == ACTION_TYPES
    assert by_type["inspect_logs"]["properties"]["target"]["enum"] == list(task.components)
    queues = [n for n, k in task.kinds.items() if k == "queue"]
    assert by_type["drop_message"]["properties"]["target"]["enum"] == queues
    assert by_type["wait"]["properties"]["target"] == {"type": "null"}
    for action_type, variant in by_type.items():
        targets = task.targets(action_type)
        assert targets is None or variant["properties"]["target"]["enum"] == list(targets)
