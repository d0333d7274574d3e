"""Family rewards (dense mode) and grade v2: inspection pays for abnormal targets, +5 only for the root-cause
fix, symptom fixes earn 0 and relapse, harm −2 and costs the episode, a clean resolution beats trial and error."""

from __future__ import annotations

import pytest

from sredrill.incidents.families import FAMILIES, TRAIN_SEEDS, FamilySimulator, FamilyTask, family_task
from sredrill.incidents.families.simulate import MAX_HARMS
from sredrill.incidents.scoring import grade_episode
from tests.incidents.families.helpers import act, oracle_path, play

SEEDS = TRAIN_SEEDS[:150]


def tasks(kind: str | None = None) -> list[FamilyTask]:
    out = [family_task(f, s) for f in FAMILIES for s in SEEDS]
    return [t for t in out if kind is None or t.cause.kind == kind]


def test_inspections_pay_once_for_abnormal_targets_and_cost_elsewhere() -> None:
    checked = 0
    for task in tasks()[:200]:
        if task.cause.fix is None:
            continue
        sim = FamilySimulator(task)
        for name in task.components:
            c = task.components.index(name)
            abnormal = sim.abnormal(c, sim.t)
            _, steps = play(task, [act("inspect_logs", name), act("inspect_logs", name)])
            first, second = steps[0].reward, steps[1].reward
            assert first == (1.0 if abnormal else -0.1), (task.task_id, name)
            if abnormal:  # paid once per target and kind; the repeat also costs the duplicate's −0.5
                assert second == pytest.approx(-0.1 - 0.5)
            checked += abnormal
        # The fault's own components are abnormal: a fault's location or its symptom's center pays.
        assert any(FamilySimulator(task).abnormal(c, 0) for c in task.plan.affected)
    assert checked > 200


def test_a_firing_alert_pays_half_and_a_quiet_one_costs() -> None:
    task = family_task("web_api", 17)
    sim = FamilySimulator(task)
    firing = sim.firing()
    quiet = [a for a in task.targets("inspect_alert") if a not in firing]
    _, steps = play(task, [act("inspect_alert", firing[0]), act("inspect_alert", quiet[0])])
    assert [s.reward for s in steps] == [0.5, -0.1]


def test_the_root_cause_fix_pays_five_and_only_once() -> None:
    for task in tasks()[:100]:
        if task.cause.fix is None:
            continue
        kind, target, value = task.cause.fix
        _, steps = play(
            task, [act(kind, target, value), act("inspect_logs", task.components[0]), act(kind, target, value)]
        )
        assert steps[0].reward == 5.0
        assert steps[2].reward < 0  # the fault is fixed: doing it again fixes nothing (and is a repeat)


@pytest.mark.parametrize("kind", ["memory_leak", "poisoned_message", "overload"])
def test_a_symptom_fix_earns_nothing_and_the_symptoms_return(kind: str) -> None:
    found = 0
    for task in tasks(kind):
        mitigations = [r for r in task.plan.responses if r[2] == "mitigate"]
        if not mitigations:
            continue
        action, target, _, relief, below = mitigations[0]
        value = (below - 1 if below else 2) if action == "scale_workers" else None
        if action == "scale_workers" and value is not None and value < 1:
            continue
        waits = [act("wait")] * (relief + 1)
        ep, steps = play(task, [act(action, target, value), *waits, act("declare_healthy")])
        assert steps[0].reward == 0.0
        assert ep.sim.state_at(1) == "quiet"  # the symptoms went away…
        assert ep.sim.state_at(ep.sim.t) in ("active", "worse")  # …and came back
        assert not ep.end().resolved and ep.end().grade == 0.0
        found += 1
    assert found >= 5


def test_harm_costs_two_and_the_second_costs_the_episode() -> None:
    lost = 0
    for task in tasks()[:150]:
        queues = task.targets("clear_queue")
        if not queues or task.cause.fix is None:
            continue
        # Purging a queue loses data: irreversible, the fix no longer resolves the episode.
        ep, steps = play(task, [act("clear_queue", queues[0]), *oracle_path(task)])
        assert steps[0].reward == -2.0
        assert ep.sim.lost and not ep.end().resolved
        lost += 1
    assert lost >= 20
    disrupting = 0
    for task in tasks()[:150]:
        caches, dbs = task.targets("flush_cache"), task.targets("restart_database")
        if task.cause.kind != "false_alarm" or not caches or not dbs:
            continue
        # Two disruptions on a healthy system: the first is survivable, the second is one too many.
        ep, steps = play(task, [act("flush_cache", caches[0]), act("wait"), act("wait"), act("declare_healthy")])
        assert steps[0].reward == -2.0 and ep.end().resolved and ep.end().grade == pytest.approx(0.45)
        ep, steps = play(task, [act("flush_cache", caches[0]), act("restart_database", dbs[0]), *[act("wait")] * 3])
        assert [s.reward for s in steps[:2]] == [-2.0, -2.0] and ep.sim.harmful == MAX_HARMS and ep.sim.lost
        disrupting += 1
    assert disrupting >= 1


def test_declaring_while_settling_is_not_resolved() -> None:
    for task in tasks()[:100]:
        if task.cause.fix is None or task.plan.settle == 0:
            continue
        kind, target, value = task.cause.fix
        ep, steps = play(task, [act(kind, target, value), act("declare_healthy")])
        assert steps[-1].reward == -5.0 and not ep.end().resolved


def test_grade_v2_keeps_the_seed_examples_and_ranks_clean_above_trial_and_error() -> None:
    assert grade_episode(resolved=True, steps=3, max_steps=5) == pytest.approx(0.76)
    assert grade_episode(resolved=True, steps=8, max_steps=8) == pytest.approx(0.60)
    assert grade_episode(resolved=True, steps=2, max_steps=8, irrelevant=1) == pytest.approx(0.55)
    assert grade_episode(resolved=True, steps=2, max_steps=8, harmful=1, irrelevant=1) == pytest.approx(0.40)
    assert grade_episode(resolved=True, steps=2, max_steps=8, harmful=9) == pytest.approx(0.1)
    assert grade_episode(resolved=False, steps=2, max_steps=8) == 0.0
    compared = 0
    for task in tasks():
        if task.cause.fix is None:
            continue
        # Clean: inspect every component (as many steps as the budget allows), then the fix.
        fix_path = oracle_path(task)
        room = task.max_steps - len(fix_path)
        inspections = [act("inspect_logs", c) for c in task.components][:room]
        clean, _ = play(task, [*inspections, *fix_path])
        # Trial and error: one useless remediation on a healthy component first, then the fix at once.
        healthy = [c for c in task.targets("revert_config") or () if task.components.index(c) not in task.plan.affected]
        if not healthy:
            continue
        tried, _ = play(task, [act("revert_config", healthy[0]), *fix_path])
        assert clean.end().resolved and tried.end().resolved
        assert clean.end().grade > tried.end().grade, task.task_id
        compared += 1
    assert compared >= 100
