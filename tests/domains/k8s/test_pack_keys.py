"""The built-in `k8s` pack's grounded keys (`location`, `decisive`, `refuting`, derived by
`tools/k8s_pack_grounding.py`): every selector names items the scenario has, with the facts it asks for possible,
the items a fault's selectors name are at its location, every location name is in the evidence, healthy
scenarios have none, and each key is consistent. Through the real loader and the domain's evidence server."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path

import pytest

from sredrill.agents import Task
from sredrill.agents.redteam import StufferAgent
from sredrill.diagnosis import Citation, Claim, Diagnosis, FactKind, RuledOut, parse_diagnosis_text
from sredrill.domains.k8s import DOMAIN
from sredrill.domains.k8s.payloads import MONITOR_LEVELS
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.evidence.items import ServedItem
from sredrill.evidence.serving import server_factory
from sredrill.grading import grade_diagnosis
from sredrill.grading.facts import check_fact
from sredrill.scenarios import Pack, Scenario, lint_pack, load_pack
from sredrill.scenarios.answer import ItemSelector
from sredrill.trajectory import Recorder, Trajectory
from tests.grading.agent_output import trajectory

from .conftest import FAILING_POD, OOM, SIBLING, edited_pack


@cache
def builtin() -> Pack:
    pack = load_pack("k8s")
    assert not pack.errors, pack.errors
    return pack


def scenarios() -> list[str]:
    return [s.id for s in builtin().scenarios]


def items_of(scenario: Scenario) -> tuple[ServedItem, ...]:
    return server_factory(DOMAIN)(scenario).items()


def matching(selector: ItemSelector, items: tuple[ServedItem, ...]) -> list[ServedItem]:
    return [i for i in items if selector.matches(i.kind, i.source, i.identity)]


def citation(fact: FactKind, item: ServedItem) -> Citation:
    """The citation stating this fact about the item, with a value it holds for (for above and below)."""
    values = [v for _, v in item.points]
    value = None
    if fact == FactKind.ABOVE and values:
        value = min(values) - 0.5
    if fact == FactKind.BELOW and values:
        value = max(values) + 0.5
    return Citation(item=item.id, fact=fact, value=value)


def can_hold(fact: FactKind, item: ServedItem) -> bool:
    """Some citation stating this fact about the item (fully served) holds."""
    return check_fact(citation(fact, item), item) is None


def cite(selectors: list[ItemSelector], served: Mapping[str, ServedItem]) -> list[Citation]:
    """One holding citation per selector (at most 3) that the selector accepts, of the first served item it names."""
    out = []
    for selector in selectors[:3]:
        for item in matching(selector, tuple(served.values())):
            facts = selector.shows or [FactKind.PRESENT]
            good = [c for f in facts if check_fact(c := citation(f, item), item) is None and selector.accepts(c)]
            if good:
                out.append(good[0])
                break
    return out


def at_location(item: ServedItem, location: list[str]) -> bool:
    """True when an item of the cluster's objects names a place of the key's location (logs and monitors are
    checked by their text elsewhere)."""
    places = {n.casefold() for n in location}
    if item.kind == "pod":
        return item.identity["pod"].casefold() in places
    if item.kind == "node":
        return item.identity["node"].casefold() in places
    if item.kind == "deploy":
        return item.identity["deployment"].casefold() in places
    if item.kind == "event":
        name = item.identity["object"].partition("/")[2].casefold()
        return name in places or any(name.startswith(f"{p}-") for p in places) or name.rsplit("-", 1)[0] in places
    return True


@pytest.mark.parametrize("folder", scenarios())
def test_every_selector_names_items_the_scenario_has(folder: str) -> None:
    scenario = builtin().scenario(folder)
    key = scenario.answer
    assert key.conflicts() == []
    items = items_of(scenario)
    modes = set(key.expected_failure_modes)
    assert set(key.decisive) == modes, "every failure mode has decisive items"
    assert set(key.refuting) == set(key.ruled_out), "every ruled-out hypothesis has refuting items"
    for table in (key.decisive, key.refuting):
        for name, selectors in table.items():
            assert 1 <= len(selectors) <= 3, name
            for selector in selectors:
                found = matching(selector, items)
                assert found, f"{name}: {selector.describe()} names no item"
                facts = selector.shows or [FactKind.PRESENT]
                citable = [c for f in facts for i in found if can_hold(f, i) and selector.accepts(c := citation(f, i))]
                assert citable, f"{name}: {selector.describe()}: no citation of its items holds and counts"


@pytest.mark.parametrize("folder", scenarios())
def test_a_faults_items_are_at_its_location(folder: str) -> None:
    scenario = builtin().scenario(folder)
    key = scenario.answer
    if key.expected_failure_modes == ("healthy",):
        assert key.location == []
        return
    assert key.location
    items = items_of(scenario)
    for mode, selectors in key.decisive.items():
        for selector in selectors:
            strays = [i for i in matching(selector, items) if not at_location(i, key.location)]
            assert not strays, f"{mode}: {selector.describe()} also names {[dict(i.identity) for i in strays]}"
    # Every place is named by the evidence an agent can read.
    said = " ".join(" ".join(i.identity.values()) for i in items).casefold()
    assert all(name.casefold() in said for name in key.location), key.location


# The words of a fault's symptom records: Kubernetes' own reasons, which name the failure mode itself.
SYMPTOM_WORDS = re.compile(
    r"OOMKill|ImagePull|ErrImagePull|Failed to pull|FailedScheduling|exceeded quota|Evicted|CrashLoop|Back-off"
    r"|Unhealthy|probe failed|ProgressDeadline|NodeNotReady|not ready",
    re.IGNORECASE,
)
SYMPTOM_KINDS = {"pod", "deploy", "node", "monitor"}
"""Their state is the symptom (waiting, restarted, not Ready, in Alert): what a labeller reads first."""
# The image tag's typo (4.2.O) is named by the pull failure alone: no other record of 027 shows the cause.
SYMPTOM_ONLY = {("027-dual-image-tag-and-configmap", "image_pull_backoff")}


@pytest.mark.parametrize("folder", scenarios())
def test_a_hard_fault_is_decided_by_its_cause_not_by_the_records_that_name_its_mode(folder: str) -> None:
    """From difficulty 2 on, every decisive item of a fault shows its cause in words no mode's name uses: a
    label-oracle stuffer that greps the evidence for the mode's words must not find them."""
    scenario = builtin().scenario(folder)
    key = scenario.answer
    if int(scenario.metadata.scenario_difficulty) < 2 or key.expected_failure_modes == ("healthy",):
        return
    items = items_of(scenario)
    for mode, selectors in key.decisive.items():
        if (folder, mode) in SYMPTOM_ONLY:
            continue
        for selector in selectors:
            for item in matching(selector, items):
                assert item.kind not in SYMPTOM_KINDS, f"{mode}: {selector.describe()} names a {item.kind}"
                words = " ".join(item.identity.values())
                assert not SYMPTOM_WORDS.search(words), f"{mode}: {selector.describe()} names {words!r}"


# The cause records that were the best of their tool's output (the first line of any tail of 011's pod log, 025's
# newest Datadog records, 018's fatal line in the mode's words) until the keys named another record of the cause.
ONCE_STUFFED = ("011-rollout-waits-on-migration", "018-configmap-typo-crashloop", "025-rollout-init-container-wait")


@pytest.mark.parametrize("mode", [BackendMode.FULL, BackendMode.SELECTIVE])
def test_the_label_oracle_stuffer_cites_the_decisive_items_of_at_most_a_tenth_of_the_hard_faults(
    mode: BackendMode,
) -> None:
    """Told the true modes, the stuffer calls every tool and cites the items whose words match them and the best
    of each tool: on difficulty >= 2 it passes at most 10% of the scenarios (issue 16's limit; graded on the
    backend's axis, as the audit does), and cites no decisive item of those it used to pass by them."""
    pack = builtin()
    hard = [s for s in pack.scenarios if int(s.metadata.scenario_difficulty) >= 2]
    backed, passed = [], []
    for s in hard:
        toolset = RcaToolset(s, mode, vocabulary=pack.vocabulary)
        recorder = Recorder()
        task = Task(run_id="r", prompt="p", alert=toolset.alert, tools=toolset.specs()).bind(toolset, recorder)
        reply = asyncio.run(StufferAgent(s.answer.expected_failure_modes, packs=[pack]).run(task, recorder))
        grade = grade_diagnosis(
            s,
            reply.diagnosis,
            Trajectory(recorder.steps),
            axis=1 if mode == BackendMode.FULL else 2,
            returned_metrics=set(toolset.returned_metrics()),
            vocabulary=pack.vocabulary,
            served=toolset.served_items(),
        )
        if grade.checks["decisive_evidence"].passed:
            backed.append(s.folder)
        if all(c.passed for c in grade.checks.values() if c.role.value == "gate"):
            passed.append(s.folder)
    assert not set(backed) & set(ONCE_STUFFED), backed
    assert len(passed) * 10 <= len(hard), passed


def test_the_old_symptom_records_no_longer_decide_a_hard_fault() -> None:
    """017's restarting pods and their BackOff events were decisive before; now only the exception is."""
    scenario = builtin().scenario("017-crashloop-poison-message")
    selectors = scenario.answer.decisive["crashloop_backoff"]
    items = items_of(scenario)
    backoff = [i for i in items if i.kind == "event" and i.identity["reason"] == "BackOff"]
    restarted = [i for i in items if i.kind == "pod" and i.points and i.points[0][1] > 2]
    exception = [i for i in items if i.kind == "log" and "IndexError: list index out of range" in i.identity["text"]]
    assert backoff and restarted and exception
    named = {i.id for sel in selectors for i in matching(sel, items)}
    assert not named & {i.id for i in backoff + restarted}
    assert {i.id for i in exception} <= named


def test_healthy_keys_ask_for_facts_of_health() -> None:
    healthy = [s for s in builtin().scenarios if s.answer.expected_failure_modes == ("healthy",)]
    assert len(healthy) >= 4
    for scenario in healthy:
        shows = {f for s in scenario.answer.decisive["healthy"] for f in s.shows}
        assert shows <= {FactKind.ABOVE, FactKind.BELOW} and shows, scenario.id


def bounded(key_table: Mapping[str, list[ItemSelector]]) -> list[tuple[str, ItemSelector]]:
    return [(n, s) for n, sels in key_table.items() for s in sels if {FactKind.ABOVE, FactKind.BELOW} & set(s.shows)]


@pytest.mark.parametrize("folder", scenarios())
def test_every_bound_separates_the_fault_from_the_rest(folder: str) -> None:
    """Every above/below a selector asks for has a bound (without one, `restarts above -1` would count), and the
    bound says something: no pod or node away from the fault clears it, a monitor must be in Alert (not Warn), a
    deployment's ready replicas are compared with its desired ones."""
    scenario = builtin().scenario(folder)
    key = scenario.answer
    items = items_of(scenario)
    desired = {d.name: d.desired for d in scenario.deployments}
    healthy = key.expected_failure_modes == ("healthy",)
    for name, selector in bounded(key.decisive) + bounded(key.refuting):
        (fact,) = selector.shows
        bound = selector.above if fact == FactKind.ABOVE else selector.below
        assert bound is not None, f"{name}: {selector.describe()} states {fact.value} without a bound"
        kind = selector.fields["kind"]
        if kind == "deploy":
            wanted = desired[selector.fields["deployment"]]
            assert bound == (wanted - 1 if fact == FactKind.ABOVE else wanted), f"{name}: {selector.describe()}"
        elif kind == "monitor":
            assert fact == FactKind.ABOVE and bound >= MONITOR_LEVELS["warn"], f"{name}: {selector.describe()}"
        elif healthy:  # nothing is at fault to separate: the bound is health itself
            health = {"pod": (FactKind.BELOW, 1), "node": (FactKind.ABOVE, 0.5)}
            assert (fact, bound) == health[kind], f"{name}: {selector.describe()}"
        elif name in key.decisive and kind in ("pod", "node"):
            away = [i for i in items if i.kind == kind and not at_location(i, key.location)]
            cleared = [i.id for i in away if check_fact(Citation(item=i.id, fact=fact, value=bound), i) is None]
            assert away and not cleared, f"{name}: {selector.describe()} also holds for {cleared}"


def test_a_crashing_pods_selector_names_its_replica_set_and_asks_for_more_than_noise() -> None:
    scenario = builtin().scenario("001-crashloop-startup-panic")
    (pod,) = [s for s in scenario.answer.decisive["crashloop_backoff"] if s.fields["kind"] == "pod"]
    assert pod.shows == [FactKind.ABOVE] and pod.above == 2 and pod.fields["pod"].endswith("-*")
    items = items_of(scenario)
    crashing = matching(pod, items)
    assert len(crashing) == 4 and all(i.identity["pod"] in scenario.answer.location for i in crashing)
    item = crashing[0]
    (restarts,) = [v for _, v in item.points]

    def counts(fact: FactKind, value: float | None = None) -> bool:
        c = Citation(item=item.id, fact=fact, value=value)
        return check_fact(c, item) is None and pod.accepts(c)

    assert counts(FactKind.ABOVE, restarts - 1) and counts(FactKind.ABOVE, 2)
    assert not counts(FactKind.ABOVE, 0), "one restart is noise, not a crash loop"
    assert not counts(FactKind.PRESENT) and not counts(FactKind.ABOVE, restarts)
    healthy_pods = [i for i in items if i.kind == "pod" and i.points == ((None, 0),)]
    assert healthy_pods and not any(pod.matches(i.kind, i.source, i.identity) for i in healthy_pods)


async def serve_everything(scenario: Scenario, mode: BackendMode) -> RcaToolset:
    """A toolset over the scenario after one call of each of its tools (every namespace on `selective`)."""
    tools = RcaToolset(scenario, mode)
    for tool in DOMAIN.tools:
        if not scenario.has_source(tool.source):
            continue
        args: dict[str, object] = {}
        if tool.name == "get_pod_logs":
            assert scenario.pod_logs is not None
            args = {"pod": scenario.pod_logs.pod_name}
        elif tool.name in ("list_pods", "get_events", "list_deployments") and mode != BackendMode.FULL:
            args = {"namespace": "*"}
        elif tool.name == "search_logs":
            args = {"limit": 500}
        await tools.call(tool.name, args)
    return tools


@pytest.mark.parametrize("axis", [1, 2])
async def test_the_reference_answer_citing_the_decisive_items_passes_its_key(axis: int) -> None:
    """The key can be passed from the evidence: the reference answer, its claims replaced by one per mode that
    cites the decisive items the tools served, its ruled-out entries citing the refuting items, and the first
    location name, passes every check on both axes."""
    failures = {}
    for s in builtin().scenarios:
        key = s.answer
        tools = await serve_everything(s, BackendMode.FULL if axis == 1 else BackendMode.SELECTIVE)
        served = tools.served_items()
        reference = parse_diagnosis_text(key.model_response)
        assert reference is not None
        claims = [
            Claim(text=f"the evidence of {mode}", evidence=list(cite(key.decisive[mode], served)), supports=[mode])
            for mode in key.expected_failure_modes
        ]
        # A claim for each required source no decisive item is of (what evidence_cited asks).
        cited = {served[c.item].source for claim in claims for c in claim.citations}
        for source in key.required_evidence_sources:
            if source not in cited:
                first = next(i for i in served.values() if i.source == source)
                claims.append(Claim(text=f"what {source} shows", evidence=[first.id]))
        # The reference's reasons, in the key's order (the rows list them alike), with refuting citations.
        reasons = [r.reason for r in reference.ruled_out] + [""] * len(key.ruled_out)
        ruled_out = [
            RuledOut(hypothesis=h, reason=reasons[i], evidence=list(cite(key.refuting[h], served)))
            for i, h in enumerate(key.ruled_out)
        ] + reference.ruled_out[len(key.ruled_out) :]  # what else the reference dismisses, as it says it
        diagnosis = Diagnosis.model_validate(
            {
                **reference.model_dump(),
                "claims": claims,
                "ruled_out": ruled_out,
                "location": key.location[:1],
            }
        )
        grade = grade_diagnosis(
            s,
            diagnosis,
            trajectory(*sorted(DOMAIN.trajectory_tools(key.optimal_trajectory))),
            axis=axis,
            returned_metrics=set(tools.returned_metrics()) | set(key.required_queries or ()),
            vocabulary=builtin().vocabulary,
            served=served,
        )
        failed = {k: c.detail for k, c in grade.checks.items() if not c.passed and c.role.value == "gate"}
        if failed:
            failures[s.folder] = failed
    assert failures == {}, failures


def test_lint_reports_a_selector_that_names_no_item(tmp_path: Path) -> None:
    def grounded(text: str) -> str:
        return text + (
            "failure_modes: [oom_killed]\n"
            "location: [ledger-api]\n"
            "decisive:\n"
            f"  oom_killed:\n    - {{kind: pod, pod: {FAILING_POD}, shows: [above]}}\n"
            "    - {kind: pod, pod: ledger-api-no-such-pod}\n"
        )

    pack = edited_pack(tmp_path, {f"{OOM}/answer.yml": grounded})
    findings = [f for f in lint_pack(pack) if f.rule == "key_selector"]
    assert [f.field for f in findings] == ["decisive.oom_killed[1]"]
    assert "ledger-api-no-such-pod" in findings[0].message and FAILING_POD in findings[0].fix


def test_lint_reports_a_bound_missing_unreachable_or_shared_with_the_rest(tmp_path: Path) -> None:
    # The failing pod restarted 6 times, its sibling once, the third pod never: no bound, one it cannot clear,
    # one the sibling clears too (each reported), and an informative one (not reported).
    pod = f"{{kind: pod, pod: {FAILING_POD}, shows: [above]"
    selectors = [f"{pod}}}", f"{pod}, above: 6}}", f"{pod}, above: 0}}", f"{pod}, above: 2}}"]

    def grounded(text: str) -> str:
        lines = "".join(f"    - {s}\n" for s in selectors)
        return text + f"failure_modes: [oom_killed]\nlocation: [{FAILING_POD}]\ndecisive:\n  oom_killed:\n{lines}"

    pack = edited_pack(tmp_path, {f"{OOM}/answer.yml": grounded})
    findings = {f.field: f for f in lint_pack(pack) if f.rule == "key_bound"}
    assert sorted(findings) == [f"decisive.oom_killed[{j}]" for j in range(3)], [f.render() for f in findings.values()]
    none, unreachable, shared = (findings[f"decisive.oom_killed[{j}]"] for j in range(3))
    assert none.severity.value == "warning" and "without a bound" in none.message
    assert unreachable.severity.value == "error" and "their points: 6" in unreachable.message
    assert shared.severity.value == "warning" and SIBLING in shared.message and "1 pod(s)" in shared.message
