"""The shortcut probes (`sredrill.agents.incident_probes`): what they score, on every path they run on.

On the classic tasks the probes show why families exist: a first-observation lookup fitted on training seeds
resolves (nearly) every episode without one inspection. On the generated families every probe must stay at
or below its goal (issue 21): these are real measurements over a sample of evaluation seeds, and they fail
when the generator regresses or a probe breaks.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from sredrill.agents.incident_probes import (
    PROBES,
    ActionSpace,
    AlwaysHealthy,
    Played,
    RewardProbe,
    TryEverything,
    first_bin,
    play_env,
    play_episode,
    play_http,
    trained_lookup,
)
from sredrill.env import make
from sredrill.env.family_episode import FamilyEpisode
from sredrill.env.toolset import EnvToolset
from sredrill.incidents import TASKS
from sredrill.incidents.families import EVAL_SEEDS, FAMILIES, FamilyTask, family_task
from sredrill.server import ServerThread, create_app

CLASSIC_EVAL_SEEDS = range(100, 110)
"""Classic seeds the lookup was not fitted on (it fits seeds 0-19)."""


def test_the_action_space_reads_the_same_from_the_schema_and_from_the_tools() -> None:
    for task_id in TASKS:
        env = make(task_id, seed=0)
        env.reset()
        from_schema = ActionSpace.from_schema(env.info.action_schema)
        from_tools = ActionSpace.from_tools(EnvToolset(env).specs())
        assert dict(from_schema.kinds) == dict(from_tools.kinds)
        assert from_schema.kinds["scale_workers"].value_range == (1, 64)
        assert from_schema.kinds["restart_service"].targets == ("api_workers", "queue_service")
        assert [a.action_type for a in from_schema.remediations()][:1] == ["restart_service"]


def test_a_lookup_of_the_first_observation_resolves_the_classic_tasks() -> None:
    # Why families exist (issue 21): six bins, six fixes, no inspection, every classic task resolved.
    table = trained_lookup()
    bins = set()
    for task_id in TASKS:
        env = make(task_id)
        space = ActionSpace.from_schema(env.info.action_schema)
        bins |= {first_bin(env.reset(seed=s), space) for s in CLASSIC_EVAL_SEEDS}
    assert bins <= set(table.rows)
    played = [play_env(PROBES["lookup"], make(t), seed=s) for t in TASKS for s in CLASSIC_EVAL_SEEDS]
    assert sum(p.resolved for p in played) >= 0.95 * len(played)
    assert all(not a.action_type.startswith("inspect_") for p in played for a in p.actions)


@pytest.mark.parametrize("seed", CLASSIC_EVAL_SEEDS[:3])
def test_the_reward_probe_reads_no_observation_and_stops_at_the_first_fix(seed: int) -> None:
    played = play_env(RewardProbe, make("hard_mixed"), seed=seed)
    kinds = [a.action_type for a in played.actions]
    assert played.resolved
    assert kinds[-3:] == ["restart_database", "wait", "declare_healthy"]
    assert not any(k.startswith("inspect_") for k in kinds)


def test_the_probes_declare_healthy_within_the_budget() -> None:
    for task_id in TASKS:
        for factory in PROBES.values():
            played = play_env(factory, make(task_id), seed=101)
            assert played.actions[-1].action_type == "declare_healthy"
            assert played.steps <= TASKS[task_id].max_steps


def test_always_healthy_passes_only_the_false_alarm() -> None:
    resolved = {t for t in TASKS if play_env(AlwaysHealthy, make(t), seed=100).resolved}
    assert resolved == {"easy_latency_alert"}


def test_try_everything_passes_after_harm() -> None:
    played = play_env(TryEverything, make("easy_cpu_spike"), seed=100)
    assert played.resolved
    assert played.episode_reward < 16 - 2  # a harmful remediation's −2 is in there


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    with ServerThread(create_app(packs=())) as running:
        yield running


@pytest.mark.parametrize("name", list(PROBES))
def test_a_probe_plays_the_same_over_http_as_in_process(server: ServerThread, name: str) -> None:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        for task_id in ("hard_mixed", "medium_db_saturation"):
            over_http = play_http(PROBES[name], client, {"task_id": task_id, "seed": 104})
            assert over_http == play_env(PROBES[name], make(task_id), seed=104)


# -- the generated families: every probe at or below its goal (issue 21) ------------------------------------

FAMILY_SAMPLE = range(EVAL_SEEDS.start, EVAL_SEEDS.start + 50)
"""50 evaluation seeds per family (the benchmark measures 1,000 episodes; at 20 per family one lucky bin moves a
probe's rate by several points)."""
PROBE_GOAL = 0.20
EPISODE_KEY = "a-test-episode-key-the-probes-never-see"
"""Evaluated episodes are keyed (`sredrill run` makes a key per run): the probes are measured on keyed ones."""


def _family_played(name: str, key: str | None = EPISODE_KEY) -> list[tuple[FamilyTask, Played]]:
    out = []
    for family in FAMILIES:
        for seed in FAMILY_SAMPLE:
            task = family_task(family, seed=seed, key=key)
            space = ActionSpace.from_schema(task.action_schema())
            out.append((task, play_episode(PROBES[name], FamilyEpisode(task), space)))
    return out


@pytest.mark.parametrize("name", [p for p in PROBES if p != "always_healthy"])
def test_no_probe_resolves_more_than_a_fifth_of_the_family_episodes(name: str) -> None:
    played = _family_played(name)
    resolved = sum(p.resolved for _, p in played)
    assert resolved <= PROBE_GOAL * len(played), f"{name}: {resolved}/{len(played)}"


def test_the_regenerating_oracle_solves_public_episodes_and_only_false_alarms_of_keyed_ones() -> None:
    # The oracle is real: on the public (unkeyed) tasks it resolves every episode without one inspection.
    public = _family_played("regenerate", key=None)
    assert all(p.resolved for _, p in public)
    assert not any(a.action_type.startswith("inspect") for _, p in public for a in p.actions)
    keyed = _family_played("regenerate")
    assert {(t.family, t.seed) for t, p in keyed if p.resolved} <= {
        (t.family, t.seed) for t, _ in keyed if t.cause.fix is None
    }


def test_always_healthy_resolves_only_the_false_alarms() -> None:
    played = _family_played("always_healthy")
    false_alarms = {(t.family, t.seed) for t, _ in played if t.cause.fix is None}
    assert {(t.family, t.seed) for t, p in played if p.resolved} <= false_alarms
    assert len(false_alarms) < len(played)


def test_the_lookup_is_fitted_on_training_seeds_only() -> None:
    table = trained_lookup()
    assert table.episodes == len(TASKS) * 20 + len(FAMILIES) * 200
    # Its bins hold kinds, never a component's name.
    task = family_task(FAMILIES[0], seed=FAMILY_SAMPLE[0])
    names = set(task.components)
    assert not any(n in text for b in table.rows for part in b for text in map(str, part) for n in names)


@pytest.mark.parametrize("name", list(PROBES))
def test_a_probe_plays_a_family_episode_the_same_over_http(server: ServerThread, name: str) -> None:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        family, seed = FAMILIES[2], FAMILY_SAMPLE[3]
        over_http = play_http(PROBES[name], client, {"task_id": family, "seed": seed})
        task = family_task(family, seed=seed)
        in_process = play_episode(PROBES[name], FamilyEpisode(task), ActionSpace.from_schema(task.action_schema()))
        assert over_http == in_process


@pytest.mark.parametrize("name", ["reward_probe", "inspection_probe"])
def test_through_sredrill_run_a_probe_sees_no_reward(name: str) -> None:
    # The incidents pack hides step rewards: a probe there plays exactly as in process with rewards hidden.
    from sredrill import run
    from sredrill.env.families import DEFAULT_FAMILY_SEEDS

    family = FAMILIES[0]
    report = run(
        ["incidents"], agent=f"py:sredrill.agents.incident_probes:{name}", scenarios=[family], episode_key=EPISODE_KEY
    )
    outcomes = {r.id: (r.status == "passed", r.score) for r in report.results}
    expected = {}
    for seed in DEFAULT_FAMILY_SEEDS:
        task = family_task(family, seed=seed, key=EPISODE_KEY)
        space = ActionSpace.from_schema(task.action_schema())
        played = play_episode(PROBES[name], FamilyEpisode(task), space, show_rewards=False)
        expected[f"incidents/{family}#seed{seed}"] = (played.resolved, round(played.grade, 4))
    assert outcomes == expected


def test_a_probe_on_an_rca_scenario_fails_without_erroring() -> None:
    # So the probes can run beside the baselines on every pack.
    from sredrill import run

    report = run(["rds_postgres"], agent="py:sredrill.agents.incident_probes:try_everything", scenarios=["000-healthy"])
    assert [r.status for r in report.results] == ["failed"]
