"""TRACE v2: generated incident task families (issue 21).

A family is a kind of system (`web_api`, `event_pipeline`, `data_platform`); a seed draws one topology of it
(sizes, names, wiring) and one fault of the library at a random compatible location. The fault's symptoms
spread along the wiring, so the first observation rarely says what or where the fault is: the logs and
metrics of the right components do.

Examples:
    >>> from sredrill.incidents.families import FAMILIES, family_task
    >>> task = family_task("web_api", seed=17)
    >>> task.family, task.seed
    ('web_api', 17)
"""

from __future__ import annotations

from sredrill.incidents.families.actions import ACTION_TYPES, TARGET_KINDS, parse_family_action
from sredrill.incidents.families.generate import (
    FAMILIES,
    HISTORY_STEPS,
    MIN_KEY_LENGTH,
    FamilyCause,
    FamilyTask,
    FaultPlan,
    check_key,
    episode_key,
    family_task,
    max_components,
    read_key_file,
)
from sredrill.incidents.families.library import FAULTS, FaultKind
from sredrill.incidents.families.simulate import REWARD_MODES, FamilySimulator
from sredrill.incidents.families.splits import EVAL_SEEDS, SEED_LIMIT, TRAIN_SEEDS, split_of
from sredrill.incidents.families.topology import FAMILY_TEMPLATES, Component, Kind, Topology

__all__ = [
    "ACTION_TYPES",
    "EVAL_SEEDS",
    "FAMILIES",
    "FAMILY_TEMPLATES",
    "FAULTS",
    "HISTORY_STEPS",
    "MIN_KEY_LENGTH",
    "REWARD_MODES",
    "SEED_LIMIT",
    "TARGET_KINDS",
    "TRAIN_SEEDS",
    "Component",
    "FamilyCause",
    "FamilySimulator",
    "FamilyTask",
    "FaultKind",
    "FaultPlan",
    "Kind",
    "Topology",
    "check_key",
    "episode_key",
    "family_task",
    "max_components",
    "parse_family_action",
    "read_key_file",
    "split_of",
]
