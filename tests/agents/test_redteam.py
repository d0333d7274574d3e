"""The red-team agents: real agents behind `redteam:` specs, run through the real engine on small packs.

What fails them must be the grading's judgement, so every citation they make holds on the points served; they
read only tool results (the stuffer's modes come from its spec, the only oracle).
"""

from __future__ import annotations

import asyncio
import shutil
from collections import Counter
from pathlib import Path

import pytest

import sredrill
from sredrill.agents import Agent, Task, resolve_agent
from sredrill.agents.redteam import GuesserAgent, StufferAgent, ZScoreAgent, investigate
from sredrill.agents.redteam.oracle import RULE_OUTS_PER_MODE
from sredrill.agents.redteam.words import vocabulary_words
from sredrill.diagnosis import MAX_CITATIONS_PER_CLAIM, MAX_CITED_ITEMS, Diagnosis, FactKind
from sredrill.errors import AgentSpecError
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.evidence.items import ServedItem
from sredrill.grading.facts import check_fact
from sredrill.grading.grounding import SUSTAINED
from sredrill.results import TestStatus
from sredrill.scenarios import Pack, load_pack
from sredrill.trajectory import Recorder, ToolCallStep

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
K8S_SMALL = FIXTURES / "k8s_small"
RDS_FOLDERS = ("001-replication-lag", "003-storage-full", "014-checkpoint-storm-cpu-saturation")
AGENTS = ["redteam:alert-only", "redteam:zscore", "redteam:constant=healthy", "redteam:guesser", "redteam:enumerator"]


@pytest.fixture(scope="module")
def rds_small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three scenarios of the built-in RDS pack (sredrill-format keys), as a pack folder of their own."""
    root = tmp_path_factory.mktemp("packs") / "rds_small"
    builtin = load_pack("rds_postgres").root
    root.mkdir()
    shutil.copy(builtin / "pack.yml", root / "pack.yml")
    for folder in RDS_FOLDERS:
        shutil.copytree(builtin / folder, root / folder)
    return root


def _run(
    agent: Agent, pack: Pack, folder: str, mode: BackendMode = BackendMode.FULL
) -> tuple[Diagnosis, RcaToolset, Recorder]:
    """One scenario, as the RCA suite serves it: the agent's diagnosis, the toolset (what it served), the steps."""
    scenario = pack.scenario(folder)
    toolset = RcaToolset(scenario, mode, vocabulary=pack.vocabulary)
    recorder = Recorder()
    task = Task(run_id="r", prompt="p", alert=toolset.alert, tools=toolset.specs()).bind(toolset, recorder)
    reply = asyncio.run(agent.run(task, recorder))
    assert reply.diagnosis is not None
    return reply.diagnosis, toolset, recorder


def _citations_hold(diagnosis: Diagnosis, toolset: RcaToolset) -> None:
    served = toolset.served_items()
    cited = [c for claim in diagnosis.claims for c in claim.citations]
    cited += [c for r in diagnosis.ruled_out for c in r.citations]
    assert cited, "a red-team agent cites what it saw"
    for citation in cited:
        assert citation.item in served, citation
        assert check_fact(citation, served[citation.item]) is None, citation
    for claim in diagnosis.claims:
        assert len(claim.citations) <= MAX_CITATIONS_PER_CLAIM
    assert len({c.item for claim in diagnosis.claims for c in claim.citations}) <= MAX_CITED_ITEMS


@pytest.mark.parametrize("spec", [*AGENTS, "redteam:stuffer=healthy"])
def test_each_red_team_agent_runs_through_the_engine_and_its_citations_hold(rds_small: Path, spec: str) -> None:
    for pack in (rds_small, K8S_SMALL):
        report = sredrill.run([str(pack)], agent=spec)
        assert report.results, pack
        assert not [r.id for r in report.results if r.status == TestStatus.ERRORED], report.results
        for result in report.results:
            assert result.checks is not None
            citations = result.checks.get("citations")
            assert citations is not None and citations.passed, (spec, result.id, citations)


@pytest.mark.parametrize("folder", RDS_FOLDERS)
def test_the_stuffer_fills_every_limit_rules_out_every_other_mode_and_writes_every_word(
    rds_small: Path, folder: str
) -> None:
    pack = load_pack(rds_small)
    truth = pack.scenario(folder).failure_modes
    diagnosis, toolset, recorder = _run(StufferAgent(truth, packs=[pack]), pack, folder)
    _citations_hold(diagnosis, toolset)
    assert sorted(diagnosis.failure_modes) == sorted(truth)
    assert len({c.item for claim in diagnosis.claims for c in claim.citations}) == MAX_CITED_ITEMS
    others = {m for m in pack.vocabulary.names if m not in truth and m != "unknown"}
    # Every other mode ruled out several times, each entry citing another item.
    assert Counter(r.hypothesis for r in diagnosis.ruled_out) == dict.fromkeys(others, RULE_OUTS_PER_MODE)
    for mode in others:
        entries = [r for r in diagnosis.ruled_out if r.hypothesis == mode]
        assert len({r.citations[0].item for r in entries}) == RULE_OUTS_PER_MODE
    # Every source the run served items of is cited (the best-matched item of each).
    cited_sources = {toolset.served_items()[c.item].source for claim in diagnosis.claims for c in claim.citations}
    assert cited_sources == {item.source for item in toolset.served_items().values()}
    # Each claim cites one item with its strongest facts: a series' level just under its highest run of
    # SUSTAINED points (the fewest a level counts over), over that run's window.
    served = toolset.served_items()
    assert all(len({c.item for c in claim.citations}) == 1 for claim in diagnosis.claims)
    peaks = [c for claim in diagnosis.claims for c in claim.citations if c.fact == FactKind.ABOVE and c.start]
    assert peaks
    for c in peaks:
        values = [v for _, v in served[c.item].points]
        best = max(min(values[i : i + SUSTAINED]) for i in range(len(values) - SUSTAINED + 1))
        inside = [v for t, v in served[c.item].points if t is not None and c.start <= t <= (c.end or t)]
        assert len(inside) == SUSTAINED and min(inside) == best
        assert c.value is not None and best - abs(best) * 1e-2 <= c.value < best
    # Every tool, and every metric one by one; the location is one resource the evidence named.
    called = Counter(s.name for s in recorder.steps if isinstance(s, ToolCallStep))
    assert set(called) == {t.name for t in toolset.specs()} - {"submit_diagnosis"}
    assert called["query_metrics"] > 1
    resources = {r for item in served.values() if (r := item.identity.get("resource"))}
    assert len(diagnosis.location) == 1 and diagnosis.location[0] in resources
    words = vocabulary_words(pack.vocabulary)
    for text in (diagnosis.root_cause, diagnosis.report, *diagnosis.causal_chain, *(c.text for c in diagnosis.claims)):
        assert words in text


def test_the_stuffer_bounds_single_values_read_from_the_fields_the_contract_names() -> None:
    """A pod's restarts, a deployment's ready replicas, a node's readiness, an event's count, a monitor's level:
    read from the JSON the agent saw, each is the point the harness recorded, and bounded from both sides."""
    pack = load_pack(K8S_SMALL)
    diagnosis, toolset, _ = _run(StufferAgent(["oom_killed"], packs=[pack]), pack, "001-ledger-memory")
    _citations_hold(diagnosis, toolset)
    served = toolset.served_items()
    bounded = [c for e in (*diagnosis.claims, *diagnosis.ruled_out) for c in e.citations if c.value is not None]
    kinds = {served[c.item].kind for c in bounded}
    assert {"pod", "event"} <= kinds, kinds
    for c in bounded:
        if served[c.item].series:
            continue
        ((_, value),) = served[c.item].points
        assert c.start is None and c.value is not None
        assert (c.value < value) if c.fact == FactKind.ABOVE else (c.value > value)
        assert abs(c.value - value) <= max(abs(value) * 1e-2, 1e-2), (c, value)
    assert diagnosis.location and not set(diagnosis.location) - {"ledger", *_resources(served)}


def test_the_notebook_reads_every_single_point_the_harness_served(rds_small: Path) -> None:
    for pack_root, folder in ((K8S_SMALL, "003-node-lost"), (rds_small, "014-checkpoint-storm-cpu-saturation")):
        pack = load_pack(pack_root)
        toolset = RcaToolset(pack.scenario(folder), BackendMode.FULL, vocabulary=pack.vocabulary)
        recorder = Recorder()
        task = Task(run_id="r", prompt="p", alert=toolset.alert, tools=toolset.specs()).bind(toolset, recorder)
        notebook = asyncio.run(investigate(task, targets=5))
        served = toolset.served_items()
        single = {i: item for i, item in served.items() if not item.series and item.points}
        assert single, folder
        for ref, item in single.items():
            assert item.points == ((None, notebook.items[ref].value),), (ref, item.identity)


def _resources(served: dict[str, ServedItem]) -> set[str]:
    names = {v for item in served.values() for k, v in item.identity.items() if k in ("pod", "node", "deployment")}
    return names | {v.rpartition("/")[2] for item in served.values() if (v := item.identity.get("object"))}


def test_the_stuffer_knows_the_answer_only_from_its_spec(rds_small: Path) -> None:
    pack = load_pack(rds_small)
    agent = resolve_agent("redteam:stuffer=storage_full+cpu_saturation", packs=[pack])
    diagnosis, _, _ = _run(agent, pack, "001-replication-lag")
    assert sorted(diagnosis.failure_modes) == ["cpu_saturation", "storage_full"]


def test_the_zscore_agent_cites_its_top_series_with_its_true_trend_and_locates_it(rds_small: Path) -> None:
    pack = load_pack(rds_small)
    diagnosis, toolset, _ = _run(ZScoreAgent(packs=[pack]), pack, "001-replication-lag")
    _citations_hold(diagnosis, toolset)
    served = toolset.served_items()
    top = diagnosis.claims[0].citations[0]
    assert top.fact in (FactKind.RISING, FactKind.FALLING, FactKind.FLAT, FactKind.PRESENT)
    assert served[top.item].series
    assert pack.vocabulary.is_failure_mode(diagnosis.failure_modes[0])
    assert diagnosis.location == [served[top.item].identity["resource"]]


def test_alert_only_calls_each_tool_once_and_cites_the_first_item_of_each_result(rds_small: Path) -> None:
    pack = load_pack(rds_small)
    diagnosis, toolset, recorder = _run(resolve_agent("redteam:alert-only", packs=[pack]), pack, "003-storage-full")
    _citations_hold(diagnosis, toolset)
    called = Counter(s.name for s in recorder.steps if isinstance(s, ToolCallStep))
    assert called and max(called.values()) == 1
    assert all(c.fact == FactKind.PRESENT for claim in diagnosis.claims for c in claim.citations)


def test_alert_only_on_kubernetes_reads_pod_logs_by_the_ids_beside_their_lines() -> None:
    pack = load_pack(K8S_SMALL)
    diagnosis, toolset, recorder = _run(resolve_agent("redteam:alert-only", packs=[pack]), pack, "001-ledger-memory")
    _citations_hold(diagnosis, toolset)
    called = Counter(s.name for s in recorder.steps if isinstance(s, ToolCallStep))
    assert called["get_pod_logs"] == 1
    assert diagnosis.location


def test_a_constant_answers_its_mode_everywhere_and_a_bad_mode_is_a_spec_error(rds_small: Path) -> None:
    pack = load_pack(rds_small)
    agent = resolve_agent("redteam:constant=storage_full", packs=[pack])
    for folder in RDS_FOLDERS:
        diagnosis, toolset, _ = _run(agent, pack, folder)
        assert diagnosis.failure_modes == ["storage_full"]
        _citations_hold(diagnosis, toolset)
    with pytest.raises(AgentSpecError, match="storage_ful") as info:
        resolve_agent("redteam:constant=storage_ful", packs=[pack])
    assert "did you mean 'storage_full'" in info.value.render()


@pytest.mark.parametrize("spec", ["redteam:nope", "redteam:constant", "redteam:stuffer", "redteam:zscore=x"])
def test_an_unknown_red_team_spec_lists_the_agents(spec: str) -> None:
    with pytest.raises(AgentSpecError) as info:
        resolve_agent(spec)
    assert "redteam:alert-only" in info.value.render()


def test_the_guesser_draws_again_each_attempt_and_reproduces_by_seed(rds_small: Path) -> None:
    pack = load_pack(rds_small)
    toolset = RcaToolset(pack.scenario("001-replication-lag"), BackendMode.FULL, vocabulary=pack.vocabulary)
    task = Task(run_id="r", prompt="p", alert=toolset.alert, tools=toolset.specs())
    draws = [GuesserAgent(3, packs=[pack]).draw(task) for _ in range(2)]
    assert draws[0] == draws[1], "a fresh agent with the same seed draws the same first guess"
    agent = GuesserAgent(3, packs=[pack])
    assert len({agent.draw(task) for _ in range(12)}) > 1, "each attempt draws again"


class _Quiet:
    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: object) -> None: ...
    def on_run_end(self, report: object) -> None: ...


def test_the_guesser_under_retries_is_headlined_by_its_first_attempt(rds_small: Path) -> None:
    from sredrill.engine import RunOptions, Settings, run_packs, run_sync
    from sredrill.engine.audit import first_attempt

    report = run_sync(
        run_packs(
            [str(rds_small)], settings=Settings(agent="redteam:guesser"), options=RunOptions(retries=5),
            listener=_Quiet(), store=None,
        )
    )  # fmt: skip
    retried = [r for r in report.results if len(r.attempts) > 1]
    assert retried, "the guesser misses some first attempts, and the engine retries them"
    for result in retried:
        assert result.attempts[0].status == TestStatus.FAILED
        assert first_attempt(result) == TestStatus.FAILED  # whatever the retries forgave after it


@pytest.mark.parametrize("folder", RDS_FOLDERS)
def test_the_enumerator_is_served_every_series_and_answers_as_the_reference_does(folder: str) -> None:
    pack = load_pack("rds_postgres")
    diagnosis, toolset, _ = _run(resolve_agent("redteam:enumerator"), pack, folder, BackendMode.SELECTIVE)
    reference, chosen, _ = _run(resolve_agent("reference"), pack, folder, BackendMode.SELECTIVE)
    assert set(toolset.returned_metrics()) == set(pack.scenario(folder).metric_names)
    assert toolset.points_served() > toolset.data_budget.points >= chosen.points_served()
    assert diagnosis.failure_modes == reference.failure_modes and diagnosis.root_cause == reference.root_cause
