"""The simulator's rules (DESIGN §6): rewards, the grade, episode end, duplicates, fixes, harms, relapses."""

from __future__ import annotations

import dataclasses

import pytest

from sredrill.errors import StateError
from sredrill.incidents import (
    ALERT_RULES,
    TASKS,
    ClearQueue,
    DeclareHealthy,
    DeclareUnfixable,
    InspectAlert,
    InspectLogs,
    InspectMetrics,
    Metric,
    RestartDatabase,
    RestartService,
    RollbackRelease,
    ScaleWorkers,
    Service,
    Simulator,
    Snapshot,
    Status,
    Wait,
    grade_episode,
    incident_task,
)
from sredrill.incidents.system import BASELINE
from tests.incidents.builders import TEST_TASKS, play_actions

API, QUEUE, DB = Service.API_WORKERS, Service.QUEUE_SERVICE, Service.DATABASE
SEEDS = range(5)
ALL_TASKS = (*TASKS.values(), *TEST_TASKS)


def status(sim: Simulator, service: Service) -> Status:
    return sim.statuses()[list(Service).index(service)]


@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t.task_id)
@pytest.mark.parametrize("seed", SEEDS)
def test_the_optimal_path_earns_the_maximum_and_resolves(task, seed: int) -> None:
    sim, outcomes = play_actions(task, seed, task.optimal)
    assert sum(o.reward for o in outcomes) == pytest.approx(task.max_reward)
    assert outcomes[-1].done and sim.resolved
    score = sim.score()
    assert score.normalized_reward == pytest.approx(1.0)
    assert score.grade == pytest.approx(grade_episode(resolved=True, steps=len(task.optimal), max_steps=task.max_steps))


@pytest.mark.parametrize("seed", SEEDS)
def test_seed_example_easy_in_3_of_5_scores_076(seed: int) -> None:
    task = incident_task("easy_cpu_spike")
    sim, _ = play_actions(task, seed, [InspectLogs(target=API), ScaleWorkers(target=API, value=6), DeclareHealthy()])
    assert (task.max_steps, sim.t, sim.resolved) == (5, 3, True)
    assert sim.score().grade == pytest.approx(0.76)


@pytest.mark.parametrize("seed", SEEDS)
def test_seed_example_hard_in_8_of_8_scores_060(seed: int) -> None:
    actions = [
        InspectAlert(target="alert_pool_exhaustion"),
        InspectLogs(target=DB),
        InspectMetrics(target=Metric.DB_CONNECTIONS),
        InspectLogs(target=API),
        InspectMetrics(target=Metric.CPU),
        RestartDatabase(),
        Wait(),
        DeclareHealthy(),
    ]
    sim, outcomes = play_actions(incident_task("hard_mixed"), seed, actions)
    assert (sim.t, sim.resolved) == (8, True)
    assert sim.score().grade == pytest.approx(0.60)
    assert [o.reward for o in outcomes] == [0.5, 1.0, 1.0, -0.1, -0.1, 5.0, 0.0, 10.0]


@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t.task_id)
def test_giving_up_scores_zero_even_after_fixing(task) -> None:
    sim, outcomes = play_actions(task, 0, [DeclareUnfixable()])
    assert outcomes[0].done and outcomes[0].reward == 0.0 and sim.score().grade == 0.0
    sim, _ = play_actions(task, 0, [*task.optimal[:-1], DeclareUnfixable()])
    assert sim.done and not sim.resolved and sim.score().grade == 0.0


def test_declaring_healthy_while_unresolved_costs_five() -> None:
    sim, outcomes = play_actions(incident_task("easy_cpu_spike"), 0, [DeclareHealthy()])
    assert outcomes[0].reward == -5.0 and outcomes[0].done
    assert sim.score().grade == 0.0 and sim.score().normalized_reward == 0.0


def test_resolution_alone_does_not_end_the_episode_the_step_limit_does() -> None:
    task = incident_task("easy_cpu_spike")
    sim, _ = play_actions(task, 0, [InspectLogs(target=API), ScaleWorkers(target=API, value=6)])
    assert not sim.done and sim.is_resolved()
    _, more = play_actions(
        task, 0, [InspectLogs(target=API), ScaleWorkers(target=API, value=6), Wait(), Wait(), Wait()]
    )
    assert [o.done for o in more] == [False, False, False, False, True]
    assert more[-1].done
    with pytest.raises(StateError, match="reset"):
        sim2, _ = play_actions(task, 0, [Wait()] * 5)
        sim2.step(Wait())


def test_an_undeclared_episode_grades_zero_however_healthy() -> None:
    task = incident_task("easy_cpu_spike")
    sim, _ = play_actions(task, 0, [InspectLogs(target=API), ScaleWorkers(target=API, value=6), Wait(), Wait(), Wait()])
    assert sim.done and sim.declared is None and sim.is_resolved()
    assert sim.score().grade == 0.0


def test_a_repeat_within_the_last_three_actions_costs_half_a_point() -> None:
    task = incident_task("easy_cpu_spike")
    _, outcomes = play_actions(task, 0, [InspectLogs(target=API), InspectLogs(target=API)])
    assert [o.reward for o in outcomes] == [1.0, pytest.approx(-0.6)]  # not new (-0.1) and a repeat (-0.5)
    actions = [
        InspectLogs(target=DB),
        Wait(),
        InspectLogs(target=QUEUE),
        InspectMetrics(target=Metric.CPU),
        InspectLogs(target=DB),
    ]
    _, outcomes = play_actions(task, 0, actions)
    assert outcomes[-1].reward == pytest.approx(-0.1)  # four actions later: not a duplicate any more
    _, outcomes = play_actions(task, 0, [Wait(), InspectLogs(target=DB), Wait()])
    assert outcomes[-1].reward == pytest.approx(-0.6)
    _, outcomes = play_actions(task, 0, [ScaleWorkers(target=API, value=2), ScaleWorkers(target=API, value=3)])
    assert outcomes[-1].reward == pytest.approx(-0.1)  # another value is another action


def test_relevant_inspections_pay_once() -> None:
    task = incident_task("hard_mixed")
    actions = [InspectLogs(target=DB), InspectMetrics(target=Metric.CPU), Wait(), Wait(), InspectLogs(target=DB)]
    _, outcomes = play_actions(task, 0, actions)
    assert outcomes[0].reward == 1.0 and outcomes[-1].reward == pytest.approx(-0.1)


@pytest.mark.parametrize("seed", SEEDS)
def test_hard_needs_a_wait_after_restarting_the_database(seed: int) -> None:
    task = incident_task("hard_mixed")
    sim, outcomes = play_actions(task, seed, [RestartDatabase(), DeclareHealthy()])
    assert outcomes[0].reward == 5.0 and outcomes[1].reward == -5.0 and not sim.resolved
    sim, outcomes = play_actions(task, seed, [RestartDatabase()])
    assert status(sim, DB) is Status.DEGRADED  # settling: connections re-established
    sim.step(Wait())
    assert status(sim, DB) is Status.HEALTHY and status(sim, API) is Status.HEALTHY
    assert sim.step(DeclareHealthy()).reward == 10.0


@pytest.mark.parametrize("seed", SEEDS)
def test_hard_relapses_unless_the_release_is_rolled_back(seed: int) -> None:
    task = incident_task("hard_mixed")
    sim, _ = play_actions(task, seed, [RestartDatabase(), *[Wait()] * 6])
    assert status(sim, DB) is Status.DEGRADED and not sim.is_resolved()
    sim, outcomes = play_actions(task, seed, [RollbackRelease(), RestartDatabase(), *[Wait()] * 5])
    assert outcomes[0].reward == 0.0  # preventive: no reward, no penalty
    assert status(sim, DB) is Status.HEALTHY and sim.is_resolved()


def test_hard_scaling_the_workers_takes_the_database_down() -> None:
    sim, outcomes = play_actions(incident_task("hard_mixed"), 0, [ScaleWorkers(target=API, value=8)])
    assert outcomes[0].reward == -2.0 and status(sim, DB) is Status.DOWN
    sim.step(RestartDatabase())
    sim.step(Wait())
    assert sim.is_resolved()  # the damage goes with the fault


def test_medium_symptoms_evolve_when_nothing_is_done() -> None:
    sim = Simulator(incident_task("medium_cascade"), 0)
    first = sim.snapshot()
    assert all(s.status is Status.HEALTHY for s in first.services)
    assert "alert_queue_backlog" in first.alerts
    depths, seen = [first.services[1].queue_depth], []
    for _ in range(6):
        sim.step(Wait())
        snap = sim.snapshot()
        depths.append(snap.services[1].queue_depth)
        seen.append(tuple(s.status for s in snap.services))
    assert depths == sorted(depths)
    assert (Status.DEGRADED, Status.DEGRADED, Status.HEALTHY) in seen or (
        Status.DEGRADED,
        Status.DOWN,
        Status.HEALTHY,
    ) in seen
    assert seen[-1][1] is Status.DOWN


@pytest.mark.parametrize("seed", SEEDS)
def test_medium_clearing_the_queue_only_buys_time(seed: int) -> None:
    task = incident_task("medium_cascade")
    sim, outcomes = play_actions(task, seed, [ClearQueue()])
    assert outcomes[0].reward == pytest.approx(-0.1)
    assert sim.snapshot().services[1].queue_depth < 100
    for _ in range(2):
        sim.step(Wait())
    assert sim.snapshot().services[1].queue_depth > 500 and not sim.is_resolved()


@pytest.mark.parametrize("seed", SEEDS)
def test_bad_deploy_a_restart_looks_fine_then_relapses_only_rollback_fixes(seed: int) -> None:
    task = incident_task("medium_error_spike")
    sim, outcomes = play_actions(task, seed, [RestartService(target=API)])
    assert outcomes[0].reward == pytest.approx(-0.1) and status(sim, API) is Status.HEALTHY
    sim.step(Wait())
    assert status(sim, API) is Status.DEGRADED
    sim, outcomes = play_actions(task, seed, [ScaleWorkers(target=API, value=8), RollbackRelease(), Wait(), Wait()])
    assert [o.reward for o in outcomes[:2]] == [pytest.approx(-0.1), 5.0]
    assert sim.is_resolved() and status(sim, API) is Status.HEALTHY


@pytest.mark.parametrize("seed", SEEDS)
def test_retry_storm_scaling_makes_it_worse_clearing_fixes(seed: int) -> None:
    task = incident_task("medium_db_saturation")
    sim, outcomes = play_actions(task, seed, [ScaleWorkers(target=QUEUE, value=6)])
    assert outcomes[0].reward == -2.0 and status(sim, DB) is Status.DOWN
    before = sim.snapshot().services[0].error_rate_pct
    sim2 = Simulator(task, seed)
    assert before > sim2.snapshot().services[0].error_rate_pct
    assert sim.step(RestartService(target=QUEUE)).reward == pytest.approx(-0.1)  # a durable queue survives
    assert sim.step(ClearQueue()).reward == 5.0 and sim.is_resolved()


@pytest.mark.parametrize("seed", SEEDS)
def test_false_alarm_any_remediation_hurts(seed: int) -> None:
    task = incident_task("easy_latency_alert")
    sim = Simulator(task, seed)
    first = sim.snapshot()
    assert all(s.status is Status.HEALTHY for s in first.services) and first.alerts == ("alert_latency_high",)
    assert sim.is_resolved()
    for action in (
        RestartService(target=API),
        RestartService(target=QUEUE),
        RestartDatabase(),
        RollbackRelease(),
        ClearQueue(),
    ):
        sim, outcomes = play_actions(task, seed, [action, DeclareHealthy()])
        assert outcomes[0].reward == -2.0
        assert outcomes[1].reward == -5.0, action  # declared during the disruption it caused
    sim, outcomes = play_actions(task, seed, [ScaleWorkers(target=API, value=4), DeclareHealthy()])
    assert [o.reward for o in outcomes] == [pytest.approx(-0.1), 10.0]


def test_a_fault_is_paid_once_even_after_a_relapse() -> None:
    task = incident_task("hard_mixed")
    sim, _ = play_actions(task, 0, [RestartDatabase(), *[Wait()] * 4])
    assert not sim.is_resolved()
    assert sim.step(RestartDatabase()).reward == 0.0


def test_insufficient_scaling_does_not_resolve() -> None:
    task = incident_task("easy_cpu_spike")
    for seed in SEEDS:
        sim = Simulator(task, seed)
        wanted = sim.params["desired_replicas"]
        assert sim.step(ScaleWorkers(target=API, value=wanted - 1)).reward == pytest.approx(-0.1)
        assert not sim.is_resolved()
        assert sim.step(ScaleWorkers(target=API, value=wanted)).reward == 5.0 and sim.is_resolved()


def test_observations_carry_telemetry_alert_names_and_statuses_only() -> None:
    assert [f.name for f in dataclasses.fields(Snapshot)] == ["step", "services", "alerts"]
    snap = Simulator(incident_task("hard_mixed"), 0).snapshot()
    assert all(isinstance(a, str) for a in snap.alerts)
    assert {f.name for f in dataclasses.fields(snap.services[0])} == {
        "service", "status", "cpu_pct", "memory_pct", "error_rate_pct", "latency_ms", "queue_depth"
    }  # fmt: skip


def test_a_quiet_system_never_breaches_an_alert_threshold() -> None:
    # The simulator checks alerts only on slots a fault touched; that is sound only if this holds.
    for rule in ALERT_RULES:
        band = BASELINE.get((rule.service, rule.metric))
        if band is None:
            continue
        floor = {Metric.CPU: 2.0, Metric.MEMORY: 1.0, Metric.LATENCY: 1.0, Metric.QUEUE_DEPTH: 2.0}.get(
            rule.metric, 2.0
        )
        assert band.hi + floor + 0.05 * band.hi < rule.threshold, rule.name


def test_the_simulated_clock_and_noise_depend_on_the_seed() -> None:
    task = incident_task("hard_mixed")
    a, b = Simulator(task, 1), Simulator(task, 2)
    assert a.snapshot() != b.snapshot()
    assert Simulator(task, 1).snapshot() == a.snapshot()
