"""The naive baselines: what they answer, what they cite, where majority's prior comes from, and that the
benchmark does not let them pass (DESIGN §4, §9; issue 16 item 5)."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml

from sredrill.agents import Agent, AgentReply, Task, resolve_agent
from sredrill.agents.baselines import KeywordAgent, MajorityAgent, RandomAgent
from sredrill.errors import AgentError, AgentSpecError
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.grading import Grade, grade_diagnosis
from sredrill.scenarios import Pack, load_pack
from sredrill.trajectory import Recorder, ResponseStep, ToolCallStep, Trajectory

PROMPT = "Investigate this alert and find the root cause."


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack("rds_postgres")


def _task(alert: dict[str, object], tools: RcaToolset | None = None) -> tuple[Task, Recorder]:
    recorder = Recorder()
    task = Task(run_id="r", prompt=PROMPT, alert=alert, tools=tools.specs() if tools else [])
    return task.bind(tools, recorder), recorder


def grade_pack(agent: Agent, pack: Pack) -> list[tuple[int, Grade, AgentReply, Recorder]]:
    """Every scenario on Axis 1 (`full`), graded as the RCA suite grades it: (difficulty, grade, reply, steps)."""

    async def go() -> list[tuple[int, Grade, AgentReply, Recorder]]:
        out = []
        for scenario in pack.scenarios:
            toolset = RcaToolset(scenario, BackendMode.FULL, vocabulary=pack.vocabulary)
            task, recorder = _task(toolset.alert, toolset)
            reply = await agent.run(task, recorder)
            grade = grade_diagnosis(
                scenario,
                reply.diagnosis or toolset.submitted,
                Trajectory(recorder.steps),
                axis=1,
                returned_metrics=toolset.returned_metrics(),
                vocabulary=pack.vocabulary,
                loops=reply.loops,
                served=toolset.served_items(),
            )
            out.append((scenario.difficulty, grade, reply, recorder))
        return out

    return asyncio.run(go())


def _pass_rate(results: list[tuple[int, Grade, AgentReply, Recorder]]) -> float:
    return sum(g.passed for _, g, _, _ in results) / len(results)


def test_majority_passes_at_most_a_fifth_of_the_pack(pack: Pack) -> None:
    results = grade_pack(resolve_agent("majority", packs=[pack]), pack)
    assert _pass_rate(results) <= 0.20


def test_random_passes_at_most_a_tenth_of_the_pack(pack: Pack) -> None:
    for seed in (0, 1, 2):
        results = grade_pack(resolve_agent("random", packs=[pack], seed=seed), pack)
        assert _pass_rate(results) <= 0.10, seed


def test_keyword_passes_no_scenario_of_difficulty_2_or_more(pack: Pack) -> None:
    results = grade_pack(resolve_agent("keyword", packs=[pack]), pack)
    passed = [g.failure_reason for d, g, _, _ in results if d >= 2 and g.passed]
    assert not passed


@pytest.mark.parametrize("spec", ["majority", "keyword", "random"])
def test_baselines_call_each_tool_once_and_cite_what_they_saw(pack: Pack, spec: str) -> None:
    # A cheap agent's investigation: the alert, then one call per evidence tool; its citations hold, so what
    # fails it is its answer.
    for _, grade, reply, recorder in grade_pack(resolve_agent(spec, packs=[pack]), pack):
        called = Counter(s.name for s in recorder.steps if isinstance(s, ToolCallStep))
        assert called["get_alert"] == 1 and max(called.values()) == 1, called
        assert {"list_metrics", "query_metrics", "get_events"} <= set(called)
        assert isinstance(recorder.steps[-1], ResponseStep)
        assert reply.diagnosis is not None and reply.diagnosis.failure_modes
        assert reply.diagnosis.claims and all(c.citations for c in reply.diagnosis.claims)
        assert grade.checks["evidence_queried"].passed
        assert grade.checks["citations"].passed, grade.checks["citations"]


def test_majority_answers_the_most_common_failure_modes_and_category(pack: Pack) -> None:
    modes = Counter(tuple(sorted(s.failure_modes)) for s in pack.scenarios)
    categories = Counter(s.category for s in pack.scenarios)
    answer = MajorityAgent(pack).answer
    assert answer is not None
    assert modes[tuple(answer.failure_modes)] == max(modes.values())
    assert categories[answer.category] == max(categories.values())
    assert "_" not in answer.root_cause


async def test_majority_without_a_pack_has_no_rca_answer_and_says_so() -> None:
    # Resolving without packs is allowed (incident-only runs); an RCA task then errors clearly.
    agent = resolve_agent("majority")
    with pytest.raises(AgentError, match="without a training split"):
        await agent.run(Task(run_id="r", prompt="p"), Recorder())


def test_majority_with_a_training_pack_that_loads_nothing_is_a_spec_error(pack: Pack) -> None:
    empty = dataclasses.replace(pack, scenarios=())
    with pytest.raises(AgentSpecError, match="at least one loaded scenario"):
        MajorityAgent([empty])


# -- majority's prior: a declared training split, never the graded pack ----------------------------------------


def _small_pack(root: Path, folders: dict[str, str], *, training: str | None = None) -> Path:
    """A pack of built-in RDS scenarios (folder -> the failure mode its answer key is rewritten to)."""
    builtin = load_pack("rds_postgres").root
    root.mkdir(parents=True)
    config = (builtin / "pack.yml").read_text()
    (root / "pack.yml").write_text(config + (f"training_split: {training}\n" if training else ""))
    for folder, mode in folders.items():
        shutil.copytree(builtin / folder, root / folder)
        key = yaml.safe_load((root / folder / "answer.yml").read_text())
        key["failure_modes"] = [mode]
        for field in ("forbidden_categories", "decisive", "refuting", "ruled_out"):  # about the old mode
            key.pop(field, None)
        (root / folder / "answer.yml").write_text(yaml.safe_dump(key))
    return root


FOLDERS = ("001-replication-lag", "002-connection-exhaustion", "003-storage-full")


def test_majority_takes_its_prior_from_the_declared_training_split(tmp_path: Path) -> None:
    _small_pack(tmp_path / "train", dict.fromkeys(FOLDERS[:2], "cpu_saturation") | {FOLDERS[2]: "storage_full"})
    graded = load_pack(_small_pack(tmp_path / "graded", dict.fromkeys(FOLDERS, "failover"), training="../train"))
    agent = resolve_agent("majority", packs=[graded])
    assert isinstance(agent, MajorityAgent)
    assert agent.answers["rds"].failure_modes == ["cpu_saturation"]
    assert agent.prior["rds"] == "training split train"
    # majority:PATH names the split on the command line, whatever pack.yml says.
    other = resolve_agent(f"majority:{tmp_path / 'train'}", packs=[graded])
    assert other.answer is not None and other.answer.failure_modes == ["cpu_saturation"]  # type: ignore[attr-defined]


def test_the_majority_answer_does_not_change_when_the_graded_packs_labels_do(tmp_path: Path) -> None:
    _small_pack(tmp_path / "train", dict.fromkeys(FOLDERS, "connection_exhaustion"))
    answers = []
    for i, mode in enumerate(("failover", "storage_full", "replication_lag")):
        graded = load_pack(_small_pack(tmp_path / f"graded{i}", dict.fromkeys(FOLDERS, mode), training="../train"))
        results = grade_pack(resolve_agent("majority", packs=[graded]), graded)
        answers.append({tuple(reply.diagnosis.failure_modes) for _, _, reply, _ in results if reply.diagnosis})
    assert answers == [{("connection_exhaustion",)}] * 3


def test_majority_refuses_a_pack_that_declares_no_training_split_and_says_how(tmp_path: Path) -> None:
    graded = load_pack(_small_pack(tmp_path / "graded", dict.fromkeys(FOLDERS, "failover")))
    with pytest.raises(AgentSpecError) as info:
        resolve_agent("majority", packs=[graded])
    text = info.value.render()
    assert "declares none" in text and "training_split:" in text and "majority:" in text


def test_majority_refuses_the_graded_pack_as_its_own_training_split(tmp_path: Path) -> None:
    graded = load_pack(_small_pack(tmp_path / "graded", dict.fromkeys(FOLDERS, "failover"), training="."))
    with pytest.raises(AgentSpecError, match="is a pack this run grades"):
        resolve_agent("majority", packs=[graded])
    with pytest.raises(AgentSpecError, match="is a pack this run grades"):
        resolve_agent(f"majority:{graded.root}", packs=[graded])


def test_a_training_split_that_does_not_load_is_named(tmp_path: Path) -> None:
    graded = load_pack(_small_pack(tmp_path / "graded", dict.fromkeys(FOLDERS, "failover"), training="../nowhere"))
    with pytest.raises(AgentSpecError, match=r"training_split '\.\./nowhere' does not load"):
        resolve_agent("majority", packs=[graded])


def test_a_builtin_pack_without_a_training_split_gets_a_uniform_prior(pack: Pack) -> None:
    agent = resolve_agent("majority", packs=[pack])
    assert isinstance(agent, MajorityAgent)
    assert "uniform prior" in agent.prior["rds"]
    first = next(m for m in pack.vocabulary.names if m != "unknown")
    assert agent.answers["rds"].failure_modes == [first]  # the tie of a uniform prior, broken by name


@pytest.mark.parametrize(
    ("title", "mode"),
    [
        ("FreeStorageSpace below 5% on db-1", "storage_full"),
        ("ReplicaLag above 600 seconds on db-1-ro", "replication_lag"),
        ("DatabaseConnections above 1600 on db-1", "connection_exhaustion"),
        ("CPUUtilization above 90% on db-1", "cpu_saturation"),
        ("Multi-AZ failover on db-1", "failover"),
        ("Checkpoints every 30 s on db-1", "checkpoint_io_storm"),
        ("WriteLatency above 100 ms on db-1", "unknown"),
        # A synonym is a mode's name too (the words an engineer writes); `db` names no mode.
        ("Standby promotion on db-1", "failover"),
        ("Disk full on db-1", "storage_full"),
    ],
)
def test_keyword_maps_title_words_to_the_vocabulary(title: str, mode: str) -> None:
    async def go() -> AgentReply:
        task, recorder = _task({"title": title})
        return await KeywordAgent().run(task, recorder)

    reply = asyncio.run(go())
    assert reply.diagnosis is not None
    assert reply.diagnosis.failure_modes == [mode]


def test_random_is_reproducible_per_seed_and_alert() -> None:
    task, _ = _task({"title": "CPUUtilization above 90% on db-1"})
    other, _ = _task({"title": "ReplicaLag above 600 s on db-1-ro"})
    assert RandomAgent(7).draw(task) == RandomAgent(7).draw(task)
    draws = {RandomAgent(seed).draw(t) for seed in range(20) for t in (task, other)}
    assert len(draws) > 3, "different seeds and alerts give different draws"


def test_random_takes_its_seed_from_the_run() -> None:
    agent = resolve_agent("random", seed=42)
    assert isinstance(agent, RandomAgent)
    assert agent.seed == 42
    assert resolve_agent("random").seed == 0  # type: ignore[attr-defined]


def _play_family(agent: Agent, family: str, seed: int) -> tuple[object, Recorder]:
    from sredrill.env import make
    from sredrill.env.toolset import EnvToolset

    async def go() -> tuple[object, Recorder]:
        env = make(family, seed=seed)
        env.reset()
        toolset = EnvToolset(env)
        recorder = Recorder()
        task = Task(run_id="r", prompt=PROMPT, alert=None, tools=toolset.specs()).bind(toolset, recorder)
        await agent.run(task, recorder)
        return env.score(), recorder

    return asyncio.run(go())


@pytest.mark.parametrize("family", ["web_api", "event_pipeline", "data_platform"])
def test_the_incident_baselines_play_family_episodes_and_do_not_resolve_them(family: str) -> None:
    for agent in (MajorityAgent([load_pack("rds_postgres")]), KeywordAgent(), RandomAgent(3)):
        resolved = 0
        for seed in range(100_000, 100_006):
            score, recorder = _play_family(agent, family, seed)
            resolved += score.resolved  # type: ignore[attr-defined]
            assert Trajectory(recorder.steps).tool_calls()  # they act through the episode's tools
        assert resolved <= 3, (agent, family, resolved)  # false alarms resolve by declaring healthy
    # The random baseline draws its targets from the episode's own tools, so its actions are accepted.
    _, recorder = _play_family(RandomAgent(3), family, 100_001)
    assert any(c.error is None for c in Trajectory(recorder.steps).tool_calls()[1:])


# -- Kubernetes ----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def k8s() -> Pack:
    return load_pack("k8s")


@pytest.mark.parametrize("spec", ["majority", "keyword", "random"])
def test_baselines_run_on_the_k8s_pack_answer_its_modes_and_pass_nothing(k8s: Pack, spec: str) -> None:
    results = grade_pack(resolve_agent(spec, packs=[k8s], seed=1), k8s)
    assert len(results) == len(k8s.scenarios)
    for _, grade, reply, recorder in results:
        called = Counter(s.name for s in recorder.steps if isinstance(s, ToolCallStep))
        assert called["get_pod_logs"] <= 1 and max(called.values()) == 1, called
        assert grade.checks["citations"].passed, grade.checks["citations"]
        assert reply.diagnosis is not None
        assert all(k8s.vocabulary.is_failure_mode(m) for m in reply.diagnosis.failure_modes), reply.diagnosis
    assert _pass_rate(results) <= 0.10, spec


@pytest.mark.parametrize("spec", ["majority", "keyword", "random"])
def test_with_packs_of_two_domains_each_task_gets_an_answer_of_its_own_domain(pack: Pack, k8s: Pack, spec: str) -> None:
    agent = resolve_agent(spec, packs=[pack, k8s], seed=2)
    for p in (pack, k8s):
        for _, _, reply, _ in grade_pack(agent, dataclasses.replace(p, scenarios=p.scenarios[:8])):
            assert reply.diagnosis is not None
            modes = [m for m in reply.diagnosis.failure_modes if m not in ("healthy", "unknown")]
            assert all(p.vocabulary.is_failure_mode(m) for m in modes), (p.name, modes)


def test_majority_on_one_domain_answers_as_before(pack: Pack) -> None:
    alone = MajorityAgent(pack)
    assert alone.answers == {"rds": alone.answer}
