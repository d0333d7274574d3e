"""FamilyEpisode: the contract H2 and H3 build on (observations, actions, rewards per mode, the end)."""

from __future__ import annotations

import pytest

from sredrill.env.episode import Transition
from sredrill.env.family_episode import FamilyEpisode
from sredrill.env.models import Observation
from sredrill.errors import ActionError, StateError
from sredrill.incidents.families import FAMILIES, family_task
from tests.incidents.families.helpers import act, oracle_path, play


@pytest.mark.parametrize("family", FAMILIES)
def test_the_ground_truth_fix_resolves_every_episode_cleanly(family: str) -> None:
    for seed in range(60):
        task = family_task(family, seed)
        ep, steps = play(task, oracle_path(task))
        end = ep.end()
        assert steps[-1].done and end.resolved and not end.truncated, (seed, task.cause)
        assert end.grade == pytest.approx(0.6 + 0.4 * (1 - ep.steps / task.max_steps))


def test_an_observation_keys_services_by_component_and_hides_the_cause() -> None:
    task = family_task("web_api", 17)
    ep = FamilyEpisode(task)
    obs = ep.observation()
    assert isinstance(obs, Observation) and list(obs.services) == list(task.components)
    assert obs.step == 0 and obs.inspection is None and obs.max_steps == task.max_steps
    tr = ep.step(act("inspect_logs", task.components[0]))
    assert isinstance(tr, Transition) and tr.observation.step == 1
    logs = tr.observation.inspection.evidence["logs"]
    assert logs and {"step", "component", "level", "event", "value", "peer", "message"} == set(logs[0])
    tr = ep.step(act("inspect_metrics", task.components[0]))
    assert {s["metric"] for s in tr.observation.inspection.evidence["series"]} >= {"cpu", "latency"}
    alert = task.targets("inspect_alert")[0]
    tr = ep.step(act("inspect_alert", alert))
    assert tr.observation.inspection.evidence["alert"]["name"] == alert


def test_invalid_actions_raise_action_errors_naming_the_field() -> None:
    task = family_task("web_api", 17)
    ep = FamilyEpisode(task)
    with pytest.raises(ActionError, match="did you mean 'inspect_logs'") as err:
        ep.step(act("inspect_log", task.components[0]))
    assert err.value.field == "action_type"
    with pytest.raises(ActionError) as err:
        ep.step(act("inspect_logs", task.components[0] + "x"))
    assert err.value.field == "target" and err.value.allowed == sorted(task.components)
    pool = task.targets("scale_workers")[0]
    for bad in (None, 0, 65, 2.5):
        with pytest.raises(ActionError) as err:
            ep.step(act("scale_workers", pool, bad))
        assert err.value.field == "value"
    with pytest.raises(ActionError) as err:
        ep.step(act("wait", task.components[0]))
    assert err.value.field == "target"
    with pytest.raises(ActionError):
        ep.step({"action_type": "wait", "colour": 1})
    assert ep.steps == 0  # nothing was applied


def test_sparse_mode_pays_only_the_grade_on_the_last_step() -> None:
    for seed in range(20):
        task = family_task("event_pipeline", seed)
        inspect = act("inspect_logs", task.components[0])
        ep, steps = play(task, [inspect, *oracle_path(task)], reward_mode="sparse")
        assert [s.reward for s in steps[:-1]] == [0.0] * (len(steps) - 1)
        assert steps[-1].reward == pytest.approx(ep.end().grade) and ep.end().resolved
        assert ep.episode_reward == pytest.approx(ep.end().grade)


def test_dense_mode_pays_the_fix_and_the_declaration() -> None:
    for seed in range(20):
        task = family_task("data_platform", seed)
        _, steps = play(task, oracle_path(task))
        rewards = [s.reward for s in steps]
        assert rewards[-1] == 10.0
        if task.cause.fix is not None:
            assert rewards[0] == 5.0 and rewards[1:-1] == [0.0] * task.plan.settle


def test_the_episode_ends_at_max_steps_and_refuses_more() -> None:
    task = family_task("web_api", 4)
    ep, steps = play(task, [act("wait")] * task.max_steps)
    assert steps[-1].done and ep.end().truncated and not ep.end().resolved and ep.end().grade == 0.0
    with pytest.raises(StateError):
        ep.step(act("wait"))
