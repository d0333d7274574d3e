"""The reference agent on the built-in RDS pack: both axes, honest trajectories, no scenario knowledge.

Each scenario runs on the `full` backend (Axis 1) and the `selective` backend (Axis 2) through a real
`RcaToolset`, and is graded by `grading.grade_diagnosis`, exactly as the RCA suite does. When a gate
fails, the assertion prints the table of failures with each grade's `failure_reason`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sredrill.agents import Agent, AgentReply, Task, resolve_agent
from sredrill.agents.reference import ReferenceAgent, citing
from sredrill.agents.reference.catalog import REASONED
from sredrill.diagnosis import MAX_CITATIONS_PER_CLAIM, MAX_CITED_ITEMS, Diagnosis, FactKind
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.evidence.items import ServedItem
from sredrill.grading import Grade, grade_diagnosis
from sredrill.grading.facts import check_fact, trend_of
from sredrill.scenarios import Pack, Scenario, load_pack, normalize_name
from sredrill.trajectory import Recorder, ThinkingStep, Trajectory

PROMPT = "Investigate this alert and find the root cause."
AGENT_PACKAGE = Path(__file__).resolve().parents[2] / "src" / "sredrill" / "agents" / "reference"
SEED_SCENARIOS = 15  # 000-014 are the seed's scenarios; 015+ are sredrill's own


@dataclass(frozen=True)
class Run:
    """One agent run on one scenario and backend, graded."""

    scenario: Scenario
    mode: BackendMode
    reply: AgentReply
    grade: Grade
    toolset: RcaToolset
    trajectory: Trajectory

    @property
    def axis(self) -> int:
        return 1 if self.mode == BackendMode.FULL else 2

    @property
    def diagnosis(self) -> Diagnosis:
        assert self.reply.diagnosis is not None, f"{self.scenario.folder}: the agent returned no diagnosis"
        return self.reply.diagnosis


async def run_scenario(agent: Agent, pack: Pack, scenario: Scenario, mode: BackendMode) -> Run:
    """Run the agent on one scenario through a real toolset and grade it as the RCA suite does."""
    toolset = RcaToolset(scenario, mode, vocabulary=pack.vocabulary)
    recorder = Recorder()
    task = Task(run_id="run-under-test", prompt=PROMPT, alert=toolset.alert, tools=toolset.specs())
    task.bind(toolset, recorder)
    reply = await agent.run(task, recorder)
    trajectory = Trajectory(recorder.steps)
    grade = grade_diagnosis(
        scenario,
        reply.diagnosis,
        trajectory,
        axis=1 if mode == BackendMode.FULL else 2,
        returned_metrics=toolset.returned_metrics(),
        vocabulary=pack.vocabulary,
        loops=reply.loops,
        served=toolset.served_items(),
    )
    return Run(scenario, mode, reply, grade, toolset, trajectory)


def run_pack(
    pack: Pack,
    modes: Sequence[BackendMode] = (BackendMode.FULL, BackendMode.SELECTIVE),
    agent: Agent | None = None,
) -> list[Run]:
    """Every scenario of the pack on every backend given, in pack order (default agent: the RDS one)."""
    agent = agent or ReferenceAgent()

    async def all_runs() -> list[Run]:
        return [await run_scenario(agent, pack, s, m) for m in modes for s in pack.scenarios]

    return asyncio.run(all_runs())


def failure_table(runs: Iterable[Run]) -> str:
    """The failed runs as a table: scenario, axis, expected and predicted failure modes, failure reason."""
    rows = [
        f"  {r.scenario.folder:<45} axis {r.axis}  expected {','.join(r.grade.expected.failure_modes):<35} "
        f"got {','.join(r.grade.actual.failure_modes):<35} {r.grade.failure_reason}"
        for r in runs
        if not r.grade.passed
    ]
    return "\n".join(["failures:", *rows]) if rows else "no failures"


def is_seed(scenario: Scenario) -> bool:
    return int(scenario.folder[:3]) < SEED_SCENARIOS


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack("rds_postgres")


@pytest.fixture(scope="module")
def runs(pack: Pack) -> list[Run]:
    return run_pack(pack)


def _on(runs: list[Run], mode: BackendMode) -> list[Run]:
    return [r for r in runs if r.mode == mode]


def test_every_seed_scenario_passes_axis_1(runs: list[Run]) -> None:
    axis1 = [r for r in _on(runs, BackendMode.FULL) if is_seed(r.scenario)]
    assert len(axis1) == SEED_SCENARIOS
    assert all(r.grade.passed for r in axis1), failure_table(axis1)


def test_at_least_14_seed_scenarios_pass_axis_2(runs: list[Run]) -> None:
    axis2 = [r for r in _on(runs, BackendMode.SELECTIVE) if is_seed(r.scenario)]
    passed = sum(r.grade.passed for r in axis2)
    assert passed >= 14, f"{passed} of {len(axis2)} passed\n" + failure_table(axis2)


def test_every_sredrill_scenario_passes_both_axes(runs: list[Run]) -> None:
    own = [r for r in runs if not is_seed(r.scenario)]
    assert own, "the pack has no scenario past 014"
    assert all(r.grade.passed for r in own), failure_table(own)


def test_axis_2_gates_ruling_out_and_required_queries_where_defined(runs: list[Run]) -> None:
    for r in _on(runs, BackendMode.SELECTIVE):
        answer = r.scenario.answer
        if answer.ruling_out_keywords or answer.ruled_out:
            outcome = r.grade.checks["ruling_out"]
            assert outcome.role == "gate" and outcome.passed, (r.scenario.folder, outcome.detail)
        if answer.required_queries:
            outcome = r.grade.checks["required_queries"]
            assert outcome.role == "gate" and outcome.passed, (r.scenario.folder, outcome.detail)


def test_on_the_selective_backend_it_asks_by_name_for_what_its_hypotheses_read(runs: list[Run]) -> None:
    chose = False
    for r in _on(runs, BackendMode.SELECTIVE):
        listed = set(r.scenario.metric_names)
        asked = r.toolset.queried_metrics()
        assert set(asked) <= listed, "it asks for metrics by their listed names only"
        assert set(r.toolset.returned_metrics()) == listed & (REASONED | set(asked)), r.scenario.folder
        assert r.grade.checks["data_budget"].passed, (r.scenario.folder, r.grade.checks["data_budget"].detail)
        chose |= set(asked) < listed
    assert chose, "somewhere it leaves a listed metric no hypothesis reads unread"


def test_it_reads_every_evidence_source_and_submits_what_it_returns(runs: list[Run]) -> None:
    for r in runs:
        assert r.toolset.sources_queried() >= {"alert", "aws_cloudwatch_metrics", "aws_rds_events"}
        assert r.toolset.submitted == r.diagnosis, r.scenario.folder


def test_plan_investigate_diagnose_stays_within_the_loop_budget(runs: list[Run]) -> None:
    for r in runs:
        steps = list(r.trajectory)
        assert isinstance(steps[0], ThinkingStep) and steps[0].content.startswith("Plan:")
        assert r.reply.loops == 1, r.scenario.folder
        assert r.grade.checks["trajectory_calibration"].passed, (r.scenario.folder, r.grade.trajectory)
        assert r.grade.redundant_calls == 0, r.scenario.folder


def test_every_claim_cites_items_served_in_the_run_with_facts_that_hold(runs: list[Run]) -> None:
    for r in runs:
        served = r.toolset.served_items()
        d = r.diagnosis
        assert d.claims, r.scenario.folder
        distinct = {c.item for claim in d.claims for c in claim.citations}
        assert len(distinct) <= MAX_CITED_ITEMS, (r.scenario.folder, len(distinct))
        for claim in d.claims:
            where = (r.scenario.folder, claim.text)
            assert claim.citations and not claim.sources, where  # items, never bare source names
            assert len(claim.citations) <= MAX_CITATIONS_PER_CLAIM, where
            assert claim.supports and set(claim.supports) <= set(d.failure_modes), where
            for c in claim.citations:
                assert c.item in served, (*where, c.item)
                assert check_fact(c, served[c.item]) is None, (*where, c.describe())
        for entry in d.ruled_out:
            assert len(entry.citations) <= MAX_CITATIONS_PER_CLAIM, (r.scenario.folder, entry.hypothesis)
            for c in entry.citations:
                assert check_fact(c, served[c.item]) is None, (r.scenario.folder, entry.hypothesis, c.describe())
        for check in ("citations", "decisive_evidence", "uncited_claims"):
            assert r.grade.checks[check].passed, (r.scenario.folder, check, r.grade.checks[check].detail)


def test_each_cause_is_backed_by_its_own_claims(runs: list[Run]) -> None:
    """Every diagnosed fault has a claim supporting it alone, citing a series or record of its own evidence."""
    for r in runs:
        d = r.diagnosis
        for mode in d.failure_modes:
            own = [c for c in d.claims if c.supports == [mode]]
            assert own and own[0].citations, (r.scenario.folder, mode)


def test_most_alternatives_are_ruled_out_with_the_evidence_that_refutes_them(runs: list[Run]) -> None:
    entries = [e for r in runs for e in r.diagnosis.ruled_out]
    cited = [e for e in entries if e.citations]
    # The rest say what cannot be checked ("no read replica shows up", a missing metric): nothing to cite.
    assert len(cited) >= 0.8 * len(entries), f"{len(cited)} of {len(entries)} ruled-out entries cite an item"
    for e in entries:
        if not e.citations:
            assert re.search(r"missing|cannot|no read replica|no failover|not excluded", e.reason, re.I), e


def test_every_hypothesis_is_either_diagnosed_or_ruled_out_by_its_name(runs: list[Run], pack: Pack) -> None:
    modes = {"replication_lag", "connection_exhaustion", "storage_full", "cpu_saturation", "checkpoint_io_storm"}
    v = pack.vocabulary
    for r in runs:
        d = r.diagnosis
        names = (normalize_name(e.hypothesis) for e in d.ruled_out)
        dismissed = {v.resolve(n) for n in names if v.is_failure_mode(n)}
        assert not dismissed & set(d.failure_modes), r.scenario.folder
        assert modes | {"failover"} <= dismissed | set(d.failure_modes), (r.scenario.folder, sorted(dismissed))


def test_the_location_is_where_the_fault_is_as_the_evidence_names_it(runs: list[Run]) -> None:
    for r in runs:
        d, s = r.diagnosis, r.scenario
        if d.failure_modes == ["healthy"]:
            assert d.location == [], s.folder
            continue
        replicas = {
            *(dim.value for m in s.metrics if m.metric_name == "ReplicaLag" for dim in m.dimensions),
            s.alert.common_annotations.get("read_replica", ""),
            *(e.source_identifier for e in s.events),
        } - {"", s.metadata.db_instance_identifier}
        assert d.location and set(d.location) <= {s.metadata.db_instance_identifier, *replicas}, (s.folder, d.location)
        if "replication_lag" in d.failure_modes:
            assert set(d.location) & replicas, (s.folder, d.location)  # the replica falls behind, not the primary
        else:
            assert d.location == [s.metadata.db_instance_identifier], (s.folder, d.location)


def test_the_report_quotes_every_citation_it_rests_on(runs: list[Run]) -> None:
    for r in runs:
        d = r.diagnosis
        for entry in (*d.claims, *d.ruled_out):
            for c in entry.citations:
                assert c.describe() in d.report, (r.scenario.folder, c.describe())


def test_prose_never_uses_vocabulary_identifiers(runs: list[Run], pack: Pack) -> None:
    identifiers = {i for i in pack.vocabulary.identifiers() if "_" in i}
    for r in runs:
        d = r.diagnosis
        prose = [d.root_cause, *d.causal_chain, *(c.text for c in d.claims), d.report]
        prose += [t for ro in d.ruled_out for t in (ro.hypothesis, ro.reason)]
        for text in prose:
            words = set(re.findall(r"[a-z0-9_]+", text.lower()))
            assert not words & identifiers, (r.scenario.folder, sorted(words & identifiers), text)


def test_compositional_faults_name_every_root_cause_and_no_side_effect(runs: list[Run]) -> None:
    for r in _on(runs, BackendMode.FULL):
        if len(r.scenario.failure_modes) > 1:
            assert sorted(r.diagnosis.failure_modes) == sorted(r.scenario.failure_modes), r.scenario.folder
            assert "independent faults" in r.diagnosis.root_cause


def test_it_is_deterministic(pack: Pack, runs: list[Run]) -> None:
    again = run_pack(pack, modes=(BackendMode.FULL,))
    first = [r.diagnosis.model_dump() for r in _on(runs, BackendMode.FULL)]
    assert [r.diagnosis.model_dump() for r in again] == first


def test_it_works_on_the_temporal_backend_by_looking_again_once_time_has_passed(pack: Pack) -> None:
    temporal = run_pack(pack, modes=(BackendMode.TEMPORAL,))
    for r in temporal:
        assert sorted(r.diagnosis.failure_modes) == sorted(r.scenario.failure_modes), failure_table([r])
        assert r.reply.loops == 2, "the evidence ends at the alert, so it investigates a second round"
        assert r.grade.checks["failure_modes"].passed


def test_resolving_the_reference_spec_gives_the_agent_of_the_tasks_domain(pack: Pack) -> None:
    from sredrill.agents.reference import DomainReference

    agent = resolve_agent("reference")
    assert isinstance(agent, DomainReference) and agent.spec == "reference"  # results keep saying `reference`
    toolset = RcaToolset(pack.scenarios[0], BackendMode.FULL, vocabulary=pack.vocabulary)
    task = Task(run_id="r", prompt=PROMPT, alert=toolset.alert, tools=toolset.specs())
    assert isinstance(agent.agent_for(task), ReferenceAgent)
    named = resolve_agent("rds-reference")
    assert isinstance(named, ReferenceAgent) and named.spec == "rds-reference"


def test_without_tools_it_says_it_cannot_tell_instead_of_guessing() -> None:
    async def go() -> AgentReply:
        task = Task(run_id="r", prompt=PROMPT, alert={"title": "CPUUtilization above 90% on some-db"})
        return await ReferenceAgent().run(task, Recorder())

    reply = asyncio.run(go())
    assert reply.diagnosis is not None
    assert reply.diagnosis.failure_modes == ["unknown"]
    assert reply.diagnosis.category == "unknown"


# -- the guard: no scenario knowledge in the agent (STYLE #39) ------------------------------------------------


def _pack_secrets(pack: Pack) -> dict[str, str]:
    """Strings only one scenario of the pack holds: folder names, long slugs, instance ids, SQL prefixes."""
    secrets: dict[str, str] = {}
    for s in pack.scenarios:
        secrets[s.folder.lower()] = f"{s.folder}: folder name"
        slug = s.folder[4:]
        if slug.count("-") >= 2:
            secrets[slug.lower()] = f"{s.folder}: slug"
        ids = {s.metadata.db_instance_identifier, *(d.value for m in s.metrics for d in m.dimensions)}
        ids |= {e.source_identifier for e in s.events}
        ids |= {v for k, v in s.alert.common_annotations.items() if k in ("db_instance_identifier", "read_replica")}
        for ident in filter(None, ids):
            secrets[str(ident).lower()] = f"{s.folder}: instance identifier"
        for sql in s.performance_insights.top_sql if s.performance_insights else ():
            prefix = " ".join(sql.statement.split())[:30].lower()
            secrets[prefix] = f"{s.folder}: SQL statement prefix"
    return secrets


def test_the_agents_hold_no_scenario_knowledge(pack: Pack) -> None:
    secrets = _pack_secrets(pack)
    assert len(secrets) > 3 * len(pack.scenarios)
    hits = []
    files = [*sorted(AGENT_PACKAGE.rglob("*.py")), AGENT_PACKAGE.parent / "baselines.py"]
    assert files
    for path in files:
        text = " ".join(path.read_text().lower().split())
        hits += [f"{path.name}: {why}: {needle!r}" for needle, why in secrets.items() if needle in text]
    assert not hits, "scenario knowledge in the reference agent:\n" + "\n".join(hits)


def test_the_guard_catches_a_planted_identifier_and_sql(pack: Pack) -> None:
    s = next(s for s in pack.scenarios if s.performance_insights and s.performance_insights.top_sql)
    assert s.performance_insights is not None
    planted = f'HOST = "{s.metadata.db_instance_identifier}"\nSQL = """{s.performance_insights.top_sql[0].statement}"""'
    text = " ".join(planted.lower().split())
    found = [why for needle, why in _pack_secrets(pack).items() if needle in text]
    assert any("instance identifier" in w for w in found) and any("SQL" in w for w in found)


# -- degenerate evidence: never a crash, never a claim of health without metrics ---------------------------------


def _diagnose(alert: dict[str, object], series: list[dict[str, object]], insights: dict[str, object]) -> Diagnosis:
    from sredrill.agents.reference.casefile import CaseFile
    from sredrill.agents.reference.observations import parse_alert, parse_insights, parse_series
    from sredrill.agents.reference.reasoning import conclude, open_case
    from sredrill.agents.reference.writing import write_diagnosis

    parsed = parse_series({"series": series})
    file = CaseFile.build(
        alert=parse_alert(alert),
        listed=[s.metric for s in parsed],
        period_s=60,
        window=None,
        series=parsed,
        events=[],
        insights=parse_insights(insights) if insights else None,
        read=frozenset({"aws_cloudwatch_metrics", "aws_rds_events", "aws_performance_insights"}),
    )
    return write_diagnosis(conclude(open_case(file)))


def _series(name: str, values: list[float], unit: str = "Count") -> dict[str, object]:
    stamps = [f"2026-01-01T00:{i:02d}:00Z" for i in range(len(values))]
    return {
        "metric_name": name,
        "stat": "Average",
        "unit": unit,
        "dimensions": {},
        "timestamps": stamps,
        "values": values,
    }


@pytest.mark.parametrize(
    ("series", "modes"),
    [
        ([], ["unknown"]),
        ([_series(m, [0.0] * 10) for m in ("CPUUtilization", "DatabaseConnections", "FreeStorageSpace")], ["healthy"]),
        ([_series("DatabaseConnections", [50.0] * 10)], ["healthy"]),
        ([_series("CPUUtilization", [20.0] * 5 + [97.0] * 10, "Percent")], ["cpu_saturation"]),
        ([_series("WriteLatency", [0.001] * 5 + [0.3] * 10, "Seconds")], ["unknown"]),
    ],
    ids=["no_metrics", "all_zero", "constant", "cpu_pinned_without_pi", "unexplained_latency"],
)
def test_degenerate_evidence_gets_an_honest_answer(series: list[dict[str, object]], modes: list[str]) -> None:
    alert = {"title": "an alarm", "state": "alerting"}
    d = _diagnose(alert, series, {})
    assert d.failure_modes == modes
    # Results without item ids (an older server) leave nothing to cite: claims name their sources instead.
    assert all(not c.citations and c.sources for c in d.claims)


# -- citing: only facts that hold on the points served, in the units served ---------------------------------------


def _served(values: list[float]) -> dict[str, ServedItem]:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    points = [(t0 + timedelta(minutes=i), v) for i, v in enumerate(values)]
    item = ServedItem.of("metric", "aws_cloudwatch_metrics", {"metric": "CPUUtilization"}, points=points, series=True)
    return {item.id: item}


def test_a_change_early_in_a_long_series_is_stated_over_the_minutes_around_it() -> None:
    values = [28.0, 28.0, 29.0, 52.0, 74.0, *([97.0] * 20)]
    items = _served(values)
    (ref,) = items
    assert trend_of(values) is None  # the whole series is no trend by the grader's rule
    onset = datetime(2026, 1, 1, 0, 3, tzinfo=UTC)
    c = citing.trend(items, ref, want=FactKind.RISING, since=onset)
    assert c is not None and c.start is not None and c.end is not None and c.start < onset < c.end
    assert check_fact(c, items[ref]) is None
    assert citing.trend(items, ref, want=FactKind.FALLING, since=onset) is None  # never a trend that does not hold


def test_bounds_are_round_and_every_point_in_the_window_clears_them() -> None:
    items = _served([0.5, 0.7, 0.61, 0.66])
    (ref,) = items
    below = citing.level(items, ref, FactKind.BELOW)
    above = citing.level(items, ref, FactKind.ABOVE)
    assert below is not None and below.value == 0.71 and check_fact(below, items[ref]) is None
    assert above is not None and above.value == 0.49 and check_fact(above, items[ref]) is None
    zeros = _served([0.0, 0.0, 3.0])
    (z,) = zeros
    assert citing.level(zeros, z, FactKind.ABOVE) is None  # "above a negative number" says nothing
    assert citing.level(zeros, "metric-0000000000", FactKind.BELOW) is None  # never an item not served
    assert citing.present(zeros, "metric-0000000000") is None


def test_items_are_kept_under_the_ids_results_give_in_the_units_served(pack: Pack) -> None:
    s = next(s for s in pack.scenarios if s.folder.startswith("003"))
    toolset = RcaToolset(s, BackendMode.FULL, vocabulary=pack.vocabulary)
    result = asyncio.run(toolset.call("query_metrics", {"metric_name": "FreeStorageSpace"}))
    assert isinstance(result, dict)
    mine = {i.id: i for i in citing.items_of("query_metrics", result)}
    served = toolset.served_items()
    assert mine and set(mine) <= set(served)
    for ref, item in mine.items():
        assert [v for _, v in item.points] == [v for _, v in served[ref].points]  # raw, not base units
