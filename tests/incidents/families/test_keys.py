"""Keyed episodes: a secret key enters the draw, so the public generator cannot regenerate an evaluated episode."""

from __future__ import annotations

import httpx
import pytest

from sredrill.env import TaskCatalog, make
from sredrill.env.families import TaskFamily
from sredrill.errors import InputError
from sredrill.incidents.families import EVAL_SEEDS, FAMILIES, MIN_KEY_LENGTH, FamilyTask, check_key, family_task
from sredrill.server import ServerThread, create_app

KEY = "a-secret-episode-key-for-these-tests"
SEEDS = EVAL_SEEDS[:200]


def _drawn(task: FamilyTask) -> tuple[object, ...]:
    """The parts of a task the draw decides."""
    return (task.components, task.cause, task.difficulty, task.wiring())


def test_a_key_draws_another_task_for_the_same_seed_and_the_same_key_the_same_one() -> None:
    for family in FAMILIES:
        public = [_drawn(family_task(family, s)) for s in SEEDS]
        keyed = [_drawn(family_task(family, s, key=KEY)) for s in SEEDS]
        other = [_drawn(family_task(family, s, key=KEY + "!")) for s in SEEDS]
        assert sum(p == k for p, k in zip(public, keyed, strict=True)) == 0
        assert sum(k == o for k, o in zip(keyed, other, strict=True)) == 0
        assert keyed == [_drawn(family_task(family, s, key=KEY)) for s in SEEDS]
        # A keyed task is as valid as a public one: the same seed bookkeeping, a real cause.
        assert {family_task(family, s, key=KEY).seed for s in SEEDS} == set(SEEDS)


def test_keyed_tasks_keep_the_familys_mix_of_faults() -> None:
    public = {family_task(f, s).cause.kind for f in FAMILIES for s in SEEDS}
    keyed = {family_task(f, s, key=KEY).cause.kind for f in FAMILIES for s in SEEDS}
    assert keyed == public


@pytest.mark.parametrize("bad", ["", "short", " " * 40, 12345, b"0123456789abcdef0123"])
def test_a_bad_key_is_refused_with_the_fix(bad: object) -> None:
    with pytest.raises(InputError) as info:
        family_task(FAMILIES[0], SEEDS[0], key=bad)  # type: ignore[arg-type]
    assert info.value.field == "episode_key"
    assert f"at least {MIN_KEY_LENGTH} characters" in info.value.message and "secrets.token_hex" in (
        info.value.hint or ""
    )


def test_the_key_is_stripped_and_never_printed() -> None:
    assert check_key(f"  {KEY}\n") == KEY and check_key(None) is None
    family = TaskFamily(FAMILIES[0], key=KEY)
    assert KEY not in repr(family) and family == TaskFamily(FAMILIES[0])
    assert KEY not in repr(family.task(SEEDS[0]))


def test_make_and_the_catalog_play_the_keyed_task() -> None:
    family, seed = FAMILIES[1], SEEDS[7]
    keyed = family_task(family, seed, key=KEY)
    for env in (make(family, seed=seed, episode_key=KEY), TaskCatalog(episode_key=KEY).make(family, seed=seed)):
        first = env.reset()
        assert tuple(first.services) == keyed.components
        assert env.episode_info.description == keyed.description
    assert tuple(make(family, seed=seed).reset().services) == family_task(family, seed).components
    # Classic tasks have no generator: the key changes nothing there.
    assert make("easy_cpu_spike", seed=3, episode_key=KEY).reset() == make("easy_cpu_spike", seed=3).reset()
    with pytest.raises(InputError):
        make(family, episode_key="short")


def test_an_evaluation_server_serves_keyed_episodes_over_http() -> None:
    family, seed = FAMILIES[2], SEEDS[11]
    with ServerThread(create_app(packs=(), episode_key=KEY)) as server, httpx.Client(base_url=server.url) as http:
        reset = http.post("/reset", json={"task_id": family, "seed": seed})
        assert reset.status_code == 200, reset.text
        body = reset.json()
        assert list(body["observation"]["services"]) == list(family_task(family, seed, key=KEY).components)
        assert KEY not in reset.text and KEY not in http.get("/tasks").text
