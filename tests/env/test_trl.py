"""`sredrill.env.trl`: what TRL reads (a no-argument constructor, `reset(**row) -> str`, a tool schema per public
method), whole episodes played through the tools only, the reward after a right and a wrong ending, bad input
answered in text, and nothing shown to the model that names the task or its answer.

The right endings come from the answers the tests know (a classic task's optimal path, a family task's fix, a
scenario's key through `tests/support/grounded.py`), never from the adapter.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import types
import typing
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from sredrill.diagnosis import Category, Citation, Diagnosis
from sredrill.env import RCA_ACTIONS, RcaTask, TaskCatalog
from sredrill.env.trl import CategoryName, IncidentToolEnv, RcaToolEnv
from sredrill.errors import InputError
from sredrill.incidents import ActionType
from sredrill.incidents.families import ACTION_TYPES, TRAIN_SEEDS, FamilyTask, family_task
from sredrill.scenarios import Scenario, leak_needles, load_pack
from tests.support.grounded import grounded_diagnosis, served_in

RDS = load_pack("rds_postgres")
K8S = load_pack("k8s")
HARD_OPTIMAL: list[tuple[str, dict[str, Any]]] = [
    ("inspect_alert", {"target": "alert_pool_exhaustion"}),
    ("inspect_logs", {"target": "database"}),
    ("inspect_metrics", {"target": "db_connections"}),
    ("restart_database", {}),
    ("wait", {}),
    ("declare_healthy", {}),
]
K8S_LOG_TARGETS = ("pods", "events", "pod_logs", "deployments", "nodes", "logs")


class PackedRca(RcaToolEnv):
    """The two built-in RCA packs without the generated one: what the short tests play."""

    packs = ("rds_postgres", "k8s")


def tools_of(env: object) -> dict[str, Callable[..., Any]]:
    """The tools TRL finds: every public bound method but `reset` (its own filter: `inspect.ismethod`)."""
    return {
        name: member
        for name, member in inspect.getmembers(env, predicate=inspect.ismethod)
        if not name.startswith("_") and name != "reset"
    }


def reply(text: str) -> dict[str, Any]:
    """A tool's answer: the JSON agent view, which never carries a reward or a grade."""
    assert not text.startswith("error:"), text
    view = json.loads(text)
    assert set(view) == {"observation", "done", "step", "message"}
    return view


def evidence_of(text: str) -> Any:
    return reply(text)["observation"]["inspection"]["evidence"]


def rca_id(pack_name: str, scenario: Scenario) -> str:
    pack = RDS if pack_name == "rds_postgres" else K8S
    return RcaTask.of(pack, scenario).task_id


# -- what TRL reads ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "row", "vocabulary"),
    [
        (IncidentToolEnv, {"task_id": "easy_cpu_spike", "seed": 3}, {*map(str, ActionType), *ACTION_TYPES}),
        (IncidentToolEnv, {"task_id": "web_api", "seed": 17}, {*map(str, ActionType), *ACTION_TYPES}),
        (PackedRca, {"task_id": rca_id("rds_postgres", RDS.scenarios[0])}, set(RCA_ACTIONS)),
    ],
    ids=["incident", "family", "rca"],
)
def test_trl_builds_it_resets_it_with_a_row_and_turns_every_public_method_into_a_tool(
    cls: type, row: dict[str, Any], vocabulary: set[str]
) -> None:
    from transformers.utils import get_json_schema  # TRL's own converter (no torch needed)

    assert not inspect.signature(cls).parameters  # TRL calls `environment_factory()`
    env = cls()
    # TRL passes every column of the row, `prompt` included.
    first = env.reset(**row, prompt=[{"role": "user", "content": "You are on call."}], difficulty=2)
    assert isinstance(first, str) and "What you see now (JSON):" in first
    tools = tools_of(env)
    assert set(tools) == vocabulary | {"observe"}  # one tool per action type of the task kinds, and observe
    for name, method in tools.items():
        schema = get_json_schema(method)["function"]
        assert schema["name"] == name and schema["description"]
        parameters = schema["parameters"]["properties"]
        assert list(parameters) == list(inspect.signature(method).parameters)
        for parameter, spec in parameters.items():
            assert spec.get("description"), f"{name}({parameter}) has no description"
    # The state a reward function reads is properties, never tools.
    for state in ("reward", "normalized_reward", "done", "steps", "grade", "outcome"):
        assert isinstance(inspect.getattr_static(cls, state), property), state


_SCALARS = (str, int, float, bool, type(None))


def allowed_type(hint: Any) -> bool:
    """str, int, float, bool, None, Literal of those, list[str], a dict of str to those, and unions of them."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint in _SCALARS:
        return True
    if origin is typing.Literal:
        return all(isinstance(a, _SCALARS) for a in args)
    if origin in (typing.Union, types.UnionType):
        return all(allowed_type(a) for a in args)
    if origin is list:
        return args in ((str,),)
    if origin is dict:
        return args[0] is str and allowed_type(args[1])
    return False


@pytest.mark.parametrize("cls", [IncidentToolEnv, RcaToolEnv])
def test_every_tool_is_typed_and_documents_each_argument(cls: type) -> None:
    for name, method in tools_of(cls()).items():
        hints = typing.get_type_hints(method)
        assert hints.pop("return") is str, f"{name} returns text"
        signature = inspect.signature(method)
        assert set(hints) == set(signature.parameters), f"{name}: every parameter has a type"
        for parameter, hint in hints.items():
            assert allowed_type(hint), f"{name}({parameter}: {hint}) is not a type a tool schema can state"
        doc = inspect.getdoc(method) or ""
        summary, _, rest = doc.partition("\n")
        assert summary.strip() and "Returns:" in rest, f"{name}: a one-line description, then Args and Returns"
        if signature.parameters:
            args = rest.split("Args:", 1)[1].split("Returns:", 1)[0]
            for parameter in signature.parameters:
                assert f"\n    {parameter}: " in f"\n{args}", f"{name}: Args does not describe {parameter}"


def test_the_category_argument_lists_the_diagnosis_categories() -> None:
    assert list(typing.get_args(CategoryName)) == [c.value for c in Category]


def test_the_module_imports_neither_trl_nor_torch() -> None:
    code = (
        "import sys, sredrill.env.trl\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'trl', 'torch', 'transformers', 'datasets'})\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- whole episodes through the tools ------------------------------------------------------------------------


def play(env: IncidentToolEnv, path: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [reply(getattr(env, name)(**kwargs)) for name, kwargs in path]


def test_a_classic_task_played_through_its_tools_rewards_the_fix_over_a_wrong_declaration() -> None:
    right = IncidentToolEnv()
    first = right.reset(task_id="hard_mixed", seed=0, prompt="p")
    views = play(right, HARD_OPTIMAL)
    assert [v["done"] for v in views] == [False] * 5 + [True] and views[-1]["message"] == "the episode is over"
    assert views[1]["observation"]["inspection"]["logs"]  # the inspection arrives in its step's reply
    assert right.done and right.steps == 6
    assert right.reward == right.grade == pytest.approx(0.70)
    assert right.outcome is not None and right.outcome.resolved and right.normalized_reward == pytest.approx(1.0)

    wrong = IncidentToolEnv()
    wrong.reset(task_id="hard_mixed", seed=0)
    play(wrong, [("declare_healthy", {})])
    assert wrong.done and wrong.reward == wrong.grade == 0.0 < right.reward
    # A classic task's id names its fault: nothing the model reads carries it.
    text = first + "".join(json.dumps(v) for v in views)
    assert "hard_mixed" not in text and '"reward"' not in text and '"grade"' not in text


def family_seed(family: str) -> tuple[int, FamilyTask]:
    """The first development seed whose task has a fix (not a false alarm, not a scaling) that fits its budget."""
    for seed in TRAIN_SEEDS:
        task = family_task(family, seed)
        fix = task.cause.fix
        if fix is not None and fix[0] != "scale_workers" and task.plan.settle + 3 <= task.max_steps:
            return seed, task
    raise AssertionError(f"no development seed of {family} has a fix that fits")  # pragma: no cover


def test_a_family_episode_played_through_its_tools_rewards_the_fix_over_a_wrong_declaration() -> None:
    seed, task = family_seed("web_api")
    assert task.cause.fix is not None
    action, target, _ = task.cause.fix
    right = IncidentToolEnv()
    first = right.reset(task_id="web_api", seed=seed)
    path = [(action, {"target": target}), *[("wait", {})] * (task.plan.settle + 1), ("declare_healthy", {})]
    views = play(right, path)
    assert views[-1]["done"] and right.done
    assert right.outcome is not None and right.outcome.resolved and right.reward == right.grade > 0.5

    wrong = IncidentToolEnv()
    wrong.reset(task_id="web_api", seed=seed)
    play(wrong, [("declare_healthy", {})])
    assert wrong.reward == 0.0 < right.reward
    # The first message lists this episode's components, never its cause.
    assert all(component in first for component in task.components)
    text = (first + "".join(json.dumps(v) for v in views)).lower()
    assert task.cause.kind not in text and task.cause.summary.lower() not in text


def test_a_family_s_seed_draws_its_episode_and_the_same_seed_replays_it() -> None:
    def episode(seed: int) -> list[str]:
        env = IncidentToolEnv()
        first = env.reset(task_id="web_api", seed=seed)
        component = family_task("web_api", seed).components[0]
        return [first, env.inspect_logs(target=component), env.wait()]

    assert episode(17) == episode(17)
    assert episode(17)[0] != episode(18)[0]
    # One instance, reset again: a new episode (TRL reuses its environments across rollouts).
    env = IncidentToolEnv()
    env.reset(task_id="web_api", seed=17)
    env.declare_unfixable()
    assert env.done
    env.reset(task_id="web_api", seed=18)
    assert not env.done and env.steps == 0 and env.grade is None


def rds_served(env: RcaToolEnv, scenario: Scenario) -> list[Any]:
    """Every RDS inspection, then each metric the key requires or names (the oracle knows what matters), through
    the tools; returns what each served, as tests/env/test_rca_tasks.py's `investigate` does."""
    served = [evidence_of(env.inspect_alert())]
    listed = [m["metric_name"] for m in evidence_of(env.inspect_metrics())["metrics"]]
    served += [evidence_of(env.inspect_logs(target=t)) for t in ("events", "performance_insights")]
    key = scenario.answer
    selectors = [s for group in (*key.decisive.values(), *key.refuting.values()) for s in group]
    named = [s.fields["metric"] for s in selectors if "metric" in s.fields] or listed[:1]
    for metric in dict.fromkeys([*(key.required_queries or ()), *named]):
        served.append(evidence_of(env.inspect_metrics(target=metric)))
    return served


def k8s_served(env: RcaToolEnv) -> list[Any]:
    """Every Kubernetes inspection through the tools (the pod logs of the first pod listed), as
    tests/env/test_k8s_tasks.py's `inspections` does; returns what each served."""
    served = [evidence_of(env.inspect_alert())]
    for target in K8S_LOG_TARGETS:
        args = {"pod": served[1]["pods"][0]["name"]} if target == "pod_logs" else None
        served.append(evidence_of(env.inspect_logs(target=target, args=args)))
    served += [evidence_of(env.inspect_metrics()), evidence_of(env.inspect_metrics(target="restarts"))]
    return served


def submission(diagnosis: Diagnosis) -> dict[str, Any]:
    """A Diagnosis as submit_diagnosis's arguments: claims and ruled-out entries in the text format's tags."""

    def tagged(text: str, evidence: list[Citation | str]) -> str:
        cited = [e.describe() if isinstance(e, Citation) else e for e in evidence]
        return f"{text} [evidence: {'; '.join(cited)}]" if cited else text

    return {
        "root_cause": diagnosis.root_cause,
        "failure_modes": list(diagnosis.failure_modes),
        "claims": [tagged(c.text, c.evidence) for c in diagnosis.claims],
        "category": diagnosis.category.value if diagnosis.category is not None else None,
        "causal_chain": list(diagnosis.causal_chain),
        "ruled_out": [tagged(f"{r.hypothesis}: {r.reason}", r.evidence) for r in diagnosis.ruled_out],
        "location": list(diagnosis.location),
    }


@pytest.mark.parametrize(
    ("pack_name", "scenario"),
    [("rds_postgres", RDS.scenarios[1]), ("k8s", K8S.scenarios[0])],
    ids=["rds", "k8s"],
)
def test_an_rca_episode_of_each_domain_rewards_the_right_diagnosis_over_a_wrong_one(
    pack_name: str, scenario: Scenario
) -> None:
    pack = RDS if pack_name == "rds_postgres" else K8S
    task_id = rca_id(pack_name, scenario)
    right = RcaToolEnv()  # the default catalog: every built-in pack
    first = right.reset(task_id=task_id, seed=5, prompt="p")
    served = rds_served(right, scenario) if pack_name == "rds_postgres" else k8s_served(right)
    correct = grounded_diagnosis(scenario, served_in(scenario, served))
    last = reply(right.submit_diagnosis(**submission(correct)))
    assert last["done"] and right.done
    assert right.reward == right.grade == 1.0
    assert right.outcome is not None and right.outcome.resolved

    wrong = RcaToolEnv()
    wrong.reset(task_id=task_id)
    reply(wrong.inspect_alert())
    reply(wrong.submit_diagnosis(root_cause="the network", failure_modes=["unknown"], claims=[], category="unknown"))
    assert wrong.done and wrong.grade is not None and 0.0 <= wrong.reward < right.reward
    # Nothing the model read names the scenario or its answer (the shared vocabulary listing set apart).
    description = first.split("\n\nEach tool call is one step", 1)[0]
    text = (first.removeprefix(description) + json.dumps(served) + json.dumps(last)).lower()
    assert not [n for n in leak_needles(scenario, pack.vocabulary) if n in text]
    assert task_id not in text


def test_an_rca_class_over_a_generated_development_set_plays_its_tasks() -> None:
    spec = "rds:seed=3:count=2"

    class Generated(RcaToolEnv):
        generate = spec

    ids = [t.task_id for t in TaskCatalog.generated(spec).tasks() if t.kind == "rca"]
    assert len(ids) == 2
    env = Generated()
    for task_id in ids:
        assert "inspect_logs(target, args=None)" in env.reset(task_id=task_id)
        reply(env.inspect_alert())
    with pytest.raises(InputError, match="unknown RCA task"):
        Generated().reset(task_id=rca_id("rds_postgres", RDS.scenarios[0]))


def test_an_rca_class_may_name_its_packs_as_a_list_or_a_single_name() -> None:
    class Listed(RcaToolEnv):
        packs = ["rds_postgres"]  # type: ignore[assignment]  # noqa: RUF012 (a list on purpose)

    class Named(RcaToolEnv):
        packs = "rds_postgres"  # type: ignore[assignment]

    task_id = rca_id("rds_postgres", RDS.scenarios[0])
    assert Listed().reset(task_id=task_id) == Named().reset(task_id=task_id)


# -- bad input -----------------------------------------------------------------------------------------------


def test_reset_refuses_an_unknown_task_naming_the_fix() -> None:
    with pytest.raises(InputError, match="did you mean 'web_api'") as unknown:
        IncidentToolEnv().reset(task_id="web-api", seed=0)
    assert unknown.value.field == "task_id" and "easy_cpu_spike" in (unknown.value.allowed or [])
    with pytest.raises(InputError, match="RcaToolEnv"):
        IncidentToolEnv().reset(task_id=rca_id("rds_postgres", RDS.scenarios[0]), seed=0)
    with pytest.raises(InputError, match="IncidentToolEnv"):
        PackedRca().reset(task_id="web_api")
    with pytest.raises(InputError, match="unknown RCA task") as rca:
        PackedRca().reset(task_id="rca-000000000000")
    assert "tasks()" in (rca.value.hint or "")
    with pytest.raises(InputError, match="no task_id column") as missing:
        IncidentToolEnv().reset(prompt="p", seed=0, task="web_api")
    assert "prompt, seed, task" in missing.value.message

    class Both(RcaToolEnv):
        packs = ("rds_postgres",)
        generate = "rds:seed=3:count=2"

    with pytest.raises(InputError, match="not both"):
        Both().reset(task_id="rca-000000000000")


@pytest.mark.parametrize("seed", [None, -1, "7", 1.5, True])
def test_reset_refuses_a_bad_seed(seed: object) -> None:
    with pytest.raises(InputError) as caught:
        IncidentToolEnv().reset(task_id="web_api", seed=seed)  # type: ignore[arg-type]
    assert caught.value.field == "seed" and "seed" in caught.value.render()


def test_a_seed_may_be_any_integer_a_dataset_gives_within_the_family_s_range() -> None:
    env = IncidentToolEnv()
    env.reset(task_id="web_api", seed=np.int64(17))  # type: ignore[arg-type]
    assert reply(env.wait())["step"] == 1
    with pytest.raises(InputError, match="2147483647") as too_big:
        IncidentToolEnv().reset(task_id="web_api", seed=2**31)
    assert too_big.value.field == "seed"


@pytest.mark.parametrize("cls", [IncidentToolEnv, RcaToolEnv])
def test_a_tool_called_before_reset_answers_that_no_episode_started(cls: type) -> None:
    env = cls()
    assert (env.reward, env.normalized_reward, env.done, env.steps, env.grade, env.outcome) == (
        0.0,
        0.0,
        False,
        0,
        None,
        None,
    )
    for name, method in tools_of(env).items():
        required = [p for p in inspect.signature(method).parameters.values() if p.default is inspect.Parameter.empty]
        answer = method(**{p.name: ["x"] if p.name in ("failure_modes", "claims") else "x" for p in required})
        assert answer.startswith("error: no_episode:") and "reset" in answer, name


def test_a_bad_target_or_value_is_answered_with_the_allowed_ones_and_changes_nothing() -> None:
    env = IncidentToolEnv()
    env.reset(task_id="hard_mixed", seed=0)
    answer = env.inspect_logs(target="databse")
    assert answer.startswith("error: bad_arguments:") and "did you mean 'database'" in answer
    assert "allowed: api_workers, database, queue_service" in answer and "call inspect_logs again" in answer
    answer = env.scale_workers(target="api_workers", value=100)
    assert answer.startswith("error: bad_arguments:") and "from 1 to 64" in answer
    assert env.restart_database(target="database").startswith("error: bad_arguments:")  # a classic one has none
    assert env.steps == 0 and not env.done


def test_an_action_the_episode_lacks_is_answered_with_the_ones_it_has() -> None:
    classic = IncidentToolEnv()
    classic.reset(task_id="easy_cpu_spike", seed=0)
    answer = classic.revert_config(target="api_workers")
    assert answer.startswith("error: not_available:") and "task families have it" in answer
    assert "declare_healthy" in answer and classic.steps == 0
    seed = next(s for s in TRAIN_SEEDS if not family_task("web_api", s).targets("failover"))
    family = IncidentToolEnv()
    first = family.reset(task_id="web_api", seed=seed)
    assert "Not in this episode" in first and "failover" in first.split("Not in this episode", 1)[1]
    answer = family.failover(target="payments")
    assert answer.startswith("error: not_available:") and "no component of kind external" in answer
    assert family.steps == 0


def test_a_call_after_the_episode_ended_says_it_is_over() -> None:
    env = IncidentToolEnv()
    env.reset(task_id="hard_mixed", seed=0)
    reply(env.declare_unfixable())
    answer = env.wait()
    assert answer.startswith("error: episode_over:") and "stop calling tools" in answer
    assert env.steps == 1 and env.done and env.grade == 0.0
    assert reply_observation(env.observe())["step"] == 1  # observing takes no step and still answers


def reply_observation(text: str) -> dict[str, Any]:
    observation = json.loads(text)
    assert set(observation) >= {"step", "max_steps", "services", "alerts", "inspection"}
    return observation


def test_a_malformed_diagnosis_is_answered_and_nothing_is_submitted() -> None:
    env = PackedRca()
    env.reset(task_id=rca_id("rds_postgres", RDS.scenarios[1]))
    answer = env.submit_diagnosis(root_cause="x", failure_modes=["unknown"], claims=[], category="nope")  # type: ignore[arg-type]
    assert answer.startswith("error: bad_arguments:") and "allowed: code_defect" in answer
    cited = "disk fills [evidence: metric-0123456789 above]"
    answer = env.submit_diagnosis(root_cause="x", failure_modes=["storage_full"], claims=[cited])
    assert "'above' needs a value" in answer and "nothing was submitted" in answer
    answer = env.submit_diagnosis(root_cause="x", failure_modes="storage_full", claims=[])  # type: ignore[arg-type]
    assert "failure_modes is a list of strings" in answer
    answer = env.inspect_logs(target="pods")
    assert answer.startswith("error: bad_arguments:") and "events or performance_insights or postgresql_log" in answer
    assert env.steps == 0 and not env.done
