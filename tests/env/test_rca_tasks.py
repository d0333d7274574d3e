"""RCA scenarios as environment tasks: opaque ids, the action mapping, blind observations, the gate-fraction reward.

The correct diagnosis is built from each scenario's answer key (never in library code) and the item ids the
inspections returned (`tests/support/grounded.py`): a claim citing a decisive item per failure mode with a fact
that holds, the required sources, each expected rule-out citing what refutes it, and the fault's location.
"""

from __future__ import annotations

import json

import pytest

from sredrill.diagnosis import Diagnosis
from sredrill.env import RCA_ACTIONS, Env, RcaTask, TaskCatalog, TaskKind, list_tasks, make
from sredrill.errors import ActionError
from sredrill.scenarios import Pack, Scenario, load_pack
from tests.support.grounded import grounded_diagnosis, served_in

PACK = load_pack("rds_postgres")
CATALOG = TaskCatalog([PACK])
INSPECTIONS = [
    {"action_type": "inspect_alert"},
    {"action_type": "inspect_metrics"},
    {"action_type": "inspect_logs", "target": "events"},
    {"action_type": "inspect_logs", "target": "performance_insights"},
]


def investigate(env: Env, scenario: Scenario) -> list[object]:
    """Every inspection, then each metric the key requires queried or names as decisive or refuting (the oracle
    knows what matters); returns what each served (the metric listing names series but serves no point)."""
    env.reset()
    served = []
    listed: list[str] = []
    for action in INSPECTIONS:
        step = env.step(action)
        assert step.reward == 0.0
        evidence = step.observation.model_dump(mode="json")["inspection"]["evidence"]
        if action.get("target") or action["action_type"] != "inspect_metrics":
            served.append(evidence)
        else:
            listed = [m["metric_name"] for m in evidence["metrics"]]
    key = scenario.answer
    selectors = [s for selectors in (*key.decisive.values(), *key.refuting.values()) for s in selectors]
    named = [s.fields["metric"] for s in selectors if "metric" in s.fields]
    if not named and listed:
        named = listed[:1]  # a key naming no metric (decisive PI records): one series, so metrics are cited too
    for metric in dict.fromkeys([*(key.required_queries or ()), *named]):
        step = env.step({"action_type": "inspect_metrics", "target": metric})
        served.append(step.observation.model_dump(mode="json")["inspection"]["evidence"])
    return served


@pytest.mark.parametrize("scenario", PACK.scenarios, ids=lambda s: s.folder)
def test_submitting_the_correct_diagnosis_earns_one(scenario: Scenario) -> None:
    env = make(RcaTask.of(PACK, scenario).task_id)
    correct = grounded_diagnosis(scenario, served_in(scenario, investigate(env, scenario)))
    result = env.step({"action_type": "submit_diagnosis", "args": correct.model_dump(mode="json")})
    assert result.done
    assert result.reward == 1.0, result.info.message
    assert result.info.grade == 1.0 and result.info.resolved is True and result.info.normalized_reward == 1.0


def test_the_correct_labels_without_citations_do_not_resolve_the_task() -> None:
    scenario = PACK.scenarios[1]
    env = CATALOG.make(RcaTask.of(PACK, scenario).task_id)
    correct = grounded_diagnosis(scenario, served_in(scenario, investigate(env, scenario)))
    words = correct.model_copy(update={"claims": [c.model_copy(update={"evidence": []}) for c in correct.claims]})
    result = env.step({"action_type": "submit_diagnosis", "args": words.model_dump(mode="json")})
    assert result.done and result.reward < 1.0 and result.info.resolved is False


def test_a_wrong_diagnosis_earns_the_fraction_of_gates_it_passes() -> None:
    scenario = PACK.scenarios[1]
    env = CATALOG.make(RcaTask.of(PACK, scenario).task_id)
    investigate(env, scenario)
    wrong = Diagnosis(root_cause="the network", failure_modes=["healthy"], category="healthy")
    result = env.step({"action_type": "submit_diagnosis", "args": wrong.model_dump(mode="json")})
    assert result.done and 0.0 <= result.reward < 1.0 and result.info.resolved is False


def test_rca_tasks_are_listed_under_opaque_ids_through_make() -> None:
    # Every built-in pack's scenarios are tasks (the k8s pack's too: tests/env/test_k8s_tasks.py); here RDS's.
    ids = {RcaTask.of(PACK, s).task_id for s in PACK.scenarios}
    rca = [t for t in list_tasks() if t.kind is TaskKind.RCA and t.task_id in ids]
    assert len(rca) == len(PACK.scenarios)
    for info in rca:
        assert info.task_id.startswith("rca-") and len(info.task_id) == 16
        assert info.actions == list(RCA_ACTIONS) and info.max_reward == 1.0
    secrets = {s.folder for s in PACK.scenarios} | {s.slug for s in PACK.scenarios}
    secrets |= {m for s in PACK.scenarios for m in s.failure_modes}
    # The description ends with the pack's published vocabulary, the same for every task: set apart, the rest
    # names no scenario and no mode.
    catalogue = PACK.vocabulary.catalogue()
    for info in rca:
        assert info.description.endswith("\n\n" + catalogue)
        listing = info.model_dump(mode="json", exclude={"action_schema"})
        listing["description"] = info.description.removesuffix(catalogue)
        text = json.dumps(listing)
        assert not [secret for secret in secrets if secret in text]
    # The schema lists every category a Diagnosis may name, identically for every scenario of a domain.
    assert len({json.dumps(info.action_schema, sort_keys=True) for info in rca}) == 1
    env = make(rca[0].task_id, seed=0)
    assert env.reset().services == {}


def test_rca_observations_are_blind() -> None:
    # Through every inspection, nothing the agent gets names the scenario or its failure modes.
    for scenario in PACK.scenarios:
        env = CATALOG.make(RcaTask.of(PACK, scenario).task_id)
        texts = [env.reset_result().model_dump_json()]
        texts += [env.step(a).model_dump_json() for a in INSPECTIONS]
        needles = {scenario.folder, *(m for m in scenario.failure_modes if "_" in m)}
        for text in texts:
            assert not [n for n in needles if n in text], scenario.folder


def test_metric_inspection_filters_by_name_and_lists_without_target() -> None:
    scenario = PACK.scenarios[1]
    env = CATALOG.make(RcaTask.of(PACK, scenario).task_id)
    env.reset()
    listed = env.step({"action_type": "inspect_metrics"}).observation.inspection
    assert listed is not None and listed.evidence is not None and "metrics" in listed.evidence
    name = listed.evidence["metrics"][0]["metric_name"]
    series = env.step({"action_type": "inspect_metrics", "target": name}).observation.inspection
    assert series is not None and series.evidence is not None
    assert {s["metric_name"] for s in series.evidence["series"]} == {name}


@pytest.mark.parametrize(
    ("action", "field"),
    [
        ({"action_type": "restart_database"}, "action_type"),
        ({"action_type": "inspect_logs", "target": "event"}, "target"),
        ({"action_type": "inspect_alert", "target": "x"}, "target"),
        ({"action_type": "inspect_metrics", "value": 3}, "value"),
        ({"action_type": "submit_diagnosis"}, "args"),
        ({"action_type": "submit_diagnosis", "args": {"root_cause": "x", "category": "nope"}}, "args.category"),
        ({"action_type": "inspect_metrics", "target": "CPUUtilization", "args": {"stat": "Mean"}}, "args"),
        ({"action_type": "inspect_metrics", "target": " "}, "target"),
    ],
)
def test_invalid_rca_actions_raise_action_errors(action: dict, field: str) -> None:
    env = CATALOG.make(RcaTask.of(PACK, PACK.scenarios[0]).task_id)
    env.reset()
    with pytest.raises(ActionError) as caught:
        env.step(action)
    assert caught.value.field == field
    assert env.state.step_count == 0


def test_an_rca_episode_without_a_submission_ends_at_the_step_limit_with_nothing() -> None:
    env = CATALOG.make(RcaTask.of(PACK, PACK.scenarios[0]).task_id)
    env.reset()
    results = [env.step({"action_type": "inspect_alert"}) for _ in range(env.max_steps)]
    assert results[-1].done and results[-1].info.truncated is True and results[-1].info.grade == 0.0


def test_a_catalog_over_a_custom_pack(tmp_path) -> None:
    # Two catalogs over the same pack agree on ids; loading a pack twice into one catalog is refused.
    again: Pack = load_pack("rds_postgres")
    assert TaskCatalog([again]).ids() == CATALOG.ids()
    with pytest.raises(Exception, match="share the id"):
        TaskCatalog([PACK, again])
