"""Kubernetes scenarios as environment tasks (issue 15, item 7): opaque ids, the domain's own targets, a whole
episode through every inspection to a graded submission, and nothing emitted that names the answer.

The pack is a test fixture in the upstream EKS layout (`tests/fixtures/k8s_env`, our own data). The correct
diagnosis is built from each answer key and the ids the inspections returned (`tests/support/grounded.py`),
never in library code.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sredrill.diagnosis import Diagnosis
from sredrill.env import RCA_ACTIONS, Env, RcaTask, TaskCatalog, TaskKind, list_tasks, make, rca_task_id
from sredrill.env.toolset import EnvToolset, action_tools
from sredrill.errors import ActionError
from sredrill.scenarios import Scenario, get_domain, leak_needles, load_pack
from tests.support.grounded import grounded_diagnosis, served_in

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "k8s_env"
PACK = load_pack(FIXTURE)
CATALOG = TaskCatalog([PACK, load_pack("rds_postgres")])
K8S = get_domain("k8s")
LOG_TARGETS = ("pods", "events", "pod_logs", "deployments", "nodes", "logs")


def task_of(scenario: Scenario) -> str:
    return RcaTask.of(PACK, scenario).task_id


def correct_diagnosis(scenario: Scenario, results: dict[str, dict]) -> Diagnosis:
    """The key's diagnosis citing items the inspections returned (their ids, facts that hold)."""
    return grounded_diagnosis(scenario, served_in(scenario, [evidence(r) for r in results.values()]))


def inspections(env: Env) -> dict[str, dict]:
    """Every inspection a K8s task offers, after a reset: the alert, each log target (the pod logs of the first
    pod listed), the monitors without and with a target. Returns each step's result as JSON, by what it read."""
    env.reset()
    results = {"alert": env.step({"action_type": "inspect_alert"}).model_dump(mode="json")}
    for target in LOG_TARGETS:
        args = None
        if target == "pod_logs":
            args = {"pod": evidence(results["pods"])["pods"][0]["name"]}
        step = env.step({"action_type": "inspect_logs", "target": target, "args": args})
        results[target] = step.model_dump(mode="json")
    results["monitors"] = env.step({"action_type": "inspect_metrics"}).model_dump(mode="json")
    restarts = env.step({"action_type": "inspect_metrics", "target": "restarts"})
    results["restart monitors"] = restarts.model_dump(mode="json")
    return results


def evidence(result: dict) -> dict:
    return result["observation"]["inspection"]["evidence"]


def test_k8s_scenarios_are_listed_under_opaque_ids_with_their_domain_s_targets() -> None:
    infos = {t.task_id: t for t in CATALOG.tasks() if t.kind is TaskKind.RCA}
    mine = [infos[task_of(s)] for s in PACK.scenarios]
    assert len(mine) == 4
    for info in mine:
        assert re.fullmatch(r"rca-[0-9a-f]{12}", info.task_id)
        assert info.actions == list(RCA_ACTIONS) and info.max_reward == 1.0
        logs = info.action_schema["$defs"]["RcaInspectLogs"]["properties"]["target"]
        assert logs["enum"] == list(LOG_TARGETS)
        # The description says what each inspection reads here: the monitors, the pods, ...
        assert "inspect_logs target pod_logs" in info.description and "Kubernetes" in info.description
    # Every K8s task shows the same schema and description (they name the domain, never the scenario) ...
    assert len({json.dumps(i.action_schema, sort_keys=True) for i in mine}) == 1
    assert len({i.description for i in mine}) == 1
    # ... and an RDS task its own targets.
    rds = next(i for i in infos.values() if i not in mine)
    rds_targets = rds.action_schema["$defs"]["RcaInspectLogs"]["properties"]["target"]["enum"]
    assert "pods" not in rds_targets and rds_targets == list(get_domain("rds").action_targets("inspect_logs"))
    assert "Kubernetes" not in rds.description


def test_a_task_s_action_schema_and_tools_are_its_domain_s() -> None:
    env = CATALOG.make(task_of(PACK.scenarios[1]))
    assert env.action_schema == env.info.action_schema
    env.reset()
    tools = {t.name: t.input_schema for t in EnvToolset(env).specs()}
    logs = tools["inspect_logs"]
    assert logs["properties"]["target"]["enum"] == list(LOG_TARGETS)
    args = logs["properties"]["args"]["anyOf"][0]["properties"]
    assert {"pod", "container", "limit", "involved_object", "query"} <= set(args)
    # The static tools (no task yet) cover every registered domain's targets.
    static = {t.name: t.input_schema for t in action_tools(TaskKind.RCA)}
    assert set(LOG_TARGETS) <= set(static["inspect_logs"]["properties"]["target"]["enum"])
    assert "events" in static["inspect_logs"]["properties"]["target"]["enum"]


def test_a_bad_target_names_the_task_s_targets() -> None:
    env = CATALOG.make(task_of(PACK.scenarios[1]))
    env.reset()
    with pytest.raises(ActionError) as caught:
        env.step({"action_type": "inspect_logs", "target": "performance_insights"})
    assert caught.value.field == "target"
    assert sorted(caught.value.allowed or ()) == sorted(LOG_TARGETS)
    assert " or ".join(LOG_TARGETS) in str(caught.value)
    with pytest.raises(ActionError, match="did you mean 'pods'"):
        env.step({"action_type": "inspect_logs", "target": "pod"})
    assert env.state.step_count == 0


@pytest.mark.parametrize("scenario", PACK.scenarios, ids=lambda s: s.folder)
def test_an_episode_inspects_everything_and_the_correct_diagnosis_earns_one(scenario: Scenario) -> None:
    env = CATALOG.make(task_of(scenario), seed=0)
    results = inspections(env)
    assert all(r["reward"] == 0.0 and not r["done"] for r in results.values())
    seen = {name: evidence(r) for name, r in results.items()}
    assert seen["alert"]["title"] == scenario.alert.title
    assert [p["name"] for p in seen["pods"]["pods"]] == [p.name for p in scenario.pods]
    assert len(seen["events"]["events"]) == len(scenario.k8s_events)
    assert seen["pod_logs"]["pod"] == scenario.pods[0].name
    assert bool(seen["pod_logs"]["lines"]) == (scenario.pod_logs is not None)
    assert seen["deployments"]["total"] == len(scenario.deployments) and seen["nodes"]["total"] == len(scenario.nodes)
    assert seen["logs"]["matched"] == len(scenario.datadog_logs)
    # inspect_metrics: the monitors; a target filters them (selective evidence).
    assert len(seen["monitors"]["monitors"]) == len(scenario.monitors)
    restart = seen["restart monitors"]["monitors"]
    assert restart and len(restart) < len(scenario.monitors)
    assert all("restart" in json.dumps(m).lower() for m in restart)
    done = env.step(
        {"action_type": "submit_diagnosis", "args": correct_diagnosis(scenario, results).model_dump(mode="json")}
    )
    assert done.done and done.reward == 1.0, done.info.message
    assert done.info.resolved is True and done.info.grade == 1.0


def test_a_wrong_diagnosis_earns_less_than_one() -> None:
    scenario = PACK.scenario("001-cart-memory-limit")
    env = CATALOG.make(task_of(scenario))
    inspections(env)
    wrong = Diagnosis(root_cause="the node ran out of disk", category="infrastructure", failure_modes=["healthy"])
    done = env.step({"action_type": "submit_diagnosis", "args": wrong.model_dump(mode="json")})
    assert done.done and 0.0 <= done.reward < 1.0 and done.info.resolved is False


def _forms(mode: str) -> set[str]:
    """A failure mode in the word forms an alert could restate it in: snake, spaced, Title, camel and Pascal."""
    words = mode.split("_")
    return {
        mode,
        " ".join(words),
        " ".join(w.title() for w in words),
        words[0] + "".join(w.title() for w in words[1:]),
        "".join(w.title() for w in words),
    }


def _alert_forms(scenario: Scenario, reset: str, alert: dict) -> list[str]:
    """The word forms of the scenario's true modes that the reset or the alert inspection spells."""
    text = reset + json.dumps(evidence(alert))
    return [f for mode in scenario.failure_modes if mode != "healthy" for f in _forms(mode) if f in text]


@pytest.mark.parametrize("scenario", PACK.scenarios, ids=lambda s: s.folder)
def test_nothing_an_episode_emits_names_the_scenario_or_its_answer(scenario: Scenario) -> None:
    # Every byte of the task listing (but the shared schema and the pack's published vocabulary, the same text for
    # every scenario of the pack), the reset and every inspection is captured.
    env = CATALOG.make(task_of(scenario))
    catalogue = PACK.vocabulary.catalogue()
    assert env.info.description.endswith("\n\n" + catalogue)
    listing = env.info.model_dump(mode="json", exclude={"action_schema"})
    listing["description"] = env.info.description.removesuffix(catalogue)
    emitted = [json.dumps(listing), env.reset_result().model_dump_json()]
    results = inspections(env)
    emitted += [json.dumps(r) for r in results.values()]
    text = "\n".join(emitted)
    needles = set(leak_needles(scenario, PACK.vocabulary))
    lowered = text.lower()
    assert not [n for n in needles if n in lowered], scenario.folder
    # The alert (and the observation's alert titles) never restates a true mode in any word form; evidence keeps
    # Kubernetes' own reasons (OOMKilled, NodeNotReady), so the forms are looked for in the alert only.
    assert not _alert_forms(scenario, emitted[1], results["alert"]), scenario.folder
    # The annotations that carry the answer are gone, keys and values.
    annotations = scenario.alert.common_annotations
    assert "k8s_failure_mode" not in text
    error = annotations.get("error", "")
    assert not error or error not in text


def test_make_plays_a_scenario_of_the_builtin_k8s_pack() -> None:
    # `sredrill.env.make` knows every built-in pack's scenarios: the k8s pack's are tasks like RDS's.
    builtin = load_pack("k8s")
    listed = {t.task_id for t in list_tasks()}
    assert builtin.scenarios and all(rca_task_id("k8s", s.folder) in listed for s in builtin.scenarios)
    scenario = builtin.scenarios[-1]
    env = make(rca_task_id("k8s", scenario.folder), seed=0)
    first = env.reset()
    assert first.services == {} and first.alerts and first.inspection is None
    pods = env.step({"action_type": "inspect_logs", "target": "pods"}).observation.inspection
    assert pods is not None and pods.evidence is not None
    assert [p["name"] for p in pods.evidence["pods"]] == [p.name for p in scenario.pods]
    assert env.info.action_schema["$defs"]["RcaInspectLogs"]["properties"]["target"]["enum"] == list(LOG_TARGETS)


def test_no_episode_of_the_builtin_k8s_pack_names_its_scenario_or_answer() -> None:
    builtin = load_pack("k8s")
    catalog = TaskCatalog([builtin])
    leaks = {}
    for scenario in builtin.scenarios:
        env = catalog.make(rca_task_id("k8s", scenario.folder))
        reset = env.reset_result().model_dump_json()
        results = inspections(env)
        text = "\n".join([reset, *map(json.dumps, results.values())])
        found = [n for n in leak_needles(scenario, builtin.vocabulary) if n in text.lower()]
        found += _alert_forms(scenario, reset, results["alert"])
        if found:
            leaks[scenario.folder] = found
    assert builtin.scenarios and leaks == {}
