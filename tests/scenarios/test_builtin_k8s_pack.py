"""The built-in `k8s` pack: lint-clean, reproducible, covering the vocabulary, with alerts that give nothing away.

Nothing here names a scenario's answer: expectations come from the answer keys and the domain's vocabulary.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sredrill.diagnosis import parse_diagnosis_text
from sredrill.domains.k8s import DOMAIN
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.grading import grade_diagnosis
from sredrill.scenarios import Pack, Scenario, blind_alert, find_leaks, leak_needles, lint_pack, load_pack
from tests.grading.agent_output import trajectory

REPO = Path(__file__).resolve().parents[2]
PACK_DIR = REPO / "src" / "sredrill" / "scenarios" / "packs" / "k8s"
sys.path.insert(0, str(REPO / "tools"))  # the generator's modules (k8s_drill: the timeline check)
from k8s_drill import timeline_problems  # noqa: E402


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack("k8s")


def raw_alert(s: Scenario) -> dict:  # type: ignore[type-arg]
    return json.loads((PACK_DIR / s.folder / "alert.json").read_text(encoding="utf-8"))


def word_forms(text: str) -> str:
    """`text` lower-cased with camelCase split and every separator a single space, padded with spaces."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", text).lower()
    return " " + re.sub(r"[^a-z0-9]+", " ", spaced).strip() + " "


def test_the_pack_is_a_k8s_pack_that_loads_and_lints_clean(pack: Pack) -> None:
    assert pack.domain == "k8s" and pack.errors == ()
    assert len(pack.scenarios) >= 24
    assert [f.render() for f in lint_pack(pack)] == []


def test_the_committed_files_are_what_the_generator_writes() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "gen_k8s_pack.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_the_check_sees_a_changed_file(tmp_path: Path) -> None:
    # The determinism test above could not fail if --check compared nothing: break a copy and look.
    copy = tmp_path / "k8s"
    shutil.copytree(PACK_DIR, copy)
    target = copy / "000-healthy-baseline" / "eks_pods.json"
    target.write_text(target.read_text(encoding="utf-8").replace('"Running"', '"Pending"', 1), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "gen_k8s_pack.py"), "--check", "--pack", str(copy)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "000-healthy-baseline/eks_pods.json" in done.stderr


def test_the_pack_covers_the_vocabulary_and_the_traps(pack: Pack) -> None:
    true_modes = Counter(m for s in pack.scenarios for m in s.failure_modes)
    assert {m.name for m in DOMAIN.failure_modes} <= set(true_modes), "every mode is a true cause somewhere"
    assert sum(1 for n in true_modes.values() if n >= 2) >= 8, "the main modes come in several shapes"
    duals = [s for s in pack.scenarios if len(s.failure_modes) == 2]
    assert len(duals) >= 4 and all(s.difficulty == 4 for s in duals)
    for s in duals:
        categories = {pack.vocabulary.category_of(m) for m in s.failure_modes}
        assert s.category in categories, s.folder
    healthy = [s for s in pack.scenarios if s.failure_modes == ("healthy",)]
    recovered = [s for s in healthy if any(a.startswith("recovered") for a in s.metadata.adversarial_signals)]
    assert len(recovered) >= 2 and len(healthy) >= len(recovered) + 2
    assert {s.difficulty for s in pack.scenarios} == {0, 1, 2, 3, 4}
    sources = {src.name for src in DOMAIN.sources}
    sparse = [
        s for s in pack.scenarios if s.failure_modes != ("healthy",) and not all(s.has_source(x) for x in sources)
    ]
    assert len(sparse) >= 4, "faults whose most direct evidence is missing"
    assert len({s.metadata.cluster_name for s in pack.scenarios}) == len(pack.scenarios)
    for s in pack.scenarios:
        assert s.answer.required_evidence_sources and all(s.has_source(x) for x in s.answer.required_evidence_sources)


def test_every_scenario_has_noise(pack: Pack) -> None:
    for s in pack.scenarios:
        workload = s.metadata.workload_name
        assert len([d for d in s.deployments if d.name != workload]) >= 2, s.folder
        assert any(c.restart_count > 0 for p in s.pods if workload not in p.name for c in p.containers), s.folder
        if s.has_source("eks_events"):
            assert any(e.type == "Normal" for e in s.k8s_events), s.folder
        if s.has_source("datadog_monitors"):
            assert any(m.overall_state == "OK" for m in s.monitors), s.folder
        if s.has_source("datadog_logs"):
            assert any(r.status == "info" and r.service != workload for r in s.datadog_logs), s.folder


def test_no_alert_names_a_failure_mode_in_any_word_form(pack: Pack) -> None:
    names = {n for m in pack.vocabulary.modes.values() for n in (m.name, *m.aliases)}
    names |= {c for c in pack.vocabulary.identifiers() if "_" in c}
    for s in pack.scenarios:
        text = word_forms(json.dumps(raw_alert(s)))
        joined = text.replace(" ", "")
        for name in names:
            spaced = " " + name.replace("_", " ") + " "
            assert spaced not in text, (s.folder, name)
            if "_" in name:
                assert name.replace("_", "") not in joined, (s.folder, name)


def test_no_alert_key_separates_healthy_from_faulty(pack: Pack) -> None:
    shapes: dict[bool, set[tuple[tuple[str, ...], ...]]] = {True: set(), False: set()}
    for s in pack.scenarios:
        alert = raw_alert(s)
        labels, annotations = alert["commonLabels"], alert["commonAnnotations"]
        assert "error" not in annotations and not any("failure_mode" in k for k in annotations), s.folder
        assert all(str(v).strip() for v in (*labels.values(), *annotations.values())), s.folder
        shape = (tuple(sorted(alert)), tuple(sorted(labels)), tuple(sorted(annotations)))
        shapes[s.failure_modes == ("healthy",)].add(shape)
    assert shapes[True] == shapes[False]


def test_no_blinded_alert_contains_a_leak_needle(pack: Pack) -> None:
    for s in pack.scenarios:
        payload = json.dumps(blind_alert(s, pack.vocabulary).to_payload())
        assert find_leaks(payload, leak_needles(s, pack.vocabulary)) == [], s.folder


# The checks that need a diagnosis's item citations: the reference texts cite none (item ids exist only in a run),
# so these are checked with citations of what a run served in tests/domains/k8s/test_pack_keys.py.
GROUNDED = {"decisive_evidence", "evidence_cited", "location", "ruling_out", "uncited_claims"}


@pytest.mark.parametrize("axis", [1, 2])
def test_every_reference_answer_passes_its_own_key_on_words_and_fails_without_citations(pack: Pack, axis: int) -> None:
    failures, ungrounded = {}, []
    for s in pack.scenarios:
        diagnosis = parse_diagnosis_text(s.answer.model_response)
        assert diagnosis is not None, s.folder
        tools = sorted(DOMAIN.trajectory_tools(s.answer.optimal_trajectory))
        grade = grade_diagnosis(
            s,
            diagnosis,
            trajectory(*tools),
            axis=axis,
            returned_metrics=set(s.answer.required_queries or ()),
            vocabulary=pack.vocabulary,
        )
        failed = {k: c.detail for k, c in grade.checks.items() if not c.passed and k not in GROUNDED}
        if failed:
            failures[s.folder] = failed
        if grade.passed or grade.checks["decisive_evidence"].passed:
            ungrounded.append(s.folder)
    assert failures == {}
    assert ungrounded == []  # words and labels alone pass no scenario


async def test_every_tool_answers_on_every_backend(pack: Pack) -> None:
    for s in pack.scenarios:
        for mode in (BackendMode.FULL, BackendMode.SELECTIVE, BackendMode.TEMPORAL):
            tools = RcaToolset(s, mode)
            for tool in DOMAIN.tools:
                if not s.has_source(tool.source):
                    continue
                args = {"pod": s.pod_logs.pod_name} if tool.name == "get_pod_logs" else {}
                result = await tools.call(tool.name, args)
                assert isinstance(result, dict) and "error" not in result, (s.folder, mode, tool.name, result)
        alert = raw_alert(s)
        pod = alert["commonAnnotations"].get("kube_pod")
        if pod is not None:
            assert pod in {p.name for p in s.pods}, s.folder


def _files(s: Scenario) -> dict[str, Any]:
    """The scenario's own JSON files as written (by stem)."""
    folder = PACK_DIR / s.folder
    return {f.stem: json.loads(f.read_text(encoding="utf-8")) for f in folder.glob("*.json")}


def test_every_timeline_holds(pack: Pack) -> None:
    # Container runs after their pod started and one after the other, the pod log inside one of its
    # container's runs, events about a listed pod after the pod started.
    for s in pack.scenarios:
        files = _files(s)
        pods = files.get("eks_pods", {"pods": []})["pods"]
        events = files.get("eks_events", {"warning_events": []})["warning_events"]
        assert timeline_problems(pods, events, files.get("eks_pod_logs")) == [], s.folder


def test_the_timeline_check_sees_an_impossible_order(pack: Pack) -> None:
    # The check above could pass on anything if timeline_problems found nothing: break a copy of each kind.
    restarts = [s for s in pack.scenarios if any(c.last_state for p in s.pods for c in p.containers)]
    s = next(s for s in restarts if s.has_source("eks_pod_logs"))
    files = _files(s)
    pods, log = files["eks_pods"]["pods"], files["eks_pod_logs"]
    restarted = next(c for p in pods for c in p["containers"] if c.get("last_state") and c["state"].get("started_at"))
    restarted["state"]["started_at"] = "2000-01-01T00:00:00Z"
    events = [{"involved_object": f"Pod/{pods[0]['name']}", "reason": "BackOff", "first_time": "2000-01-01T00:00:00Z"}]
    log = dict(log, logs="2000-01-01T00:00:00Z INFO too early\n")
    found = " | ".join(timeline_problems(pods, events, log))
    assert "before its pod started" in found and "before the pod started" in found and "outside its runs" in found


# Kubernetes' own words that a reference claim may state of the evidence it cites.
EVENT_REASONS = {
    "BackOff", "Killing", "Unhealthy", "FailedCreate", "FailedScheduling", "FailedMount", "Evicted",
    "EvictionThresholdMet", "NodeNotReady", "NodeReady", "TaintManagerEviction", "ProgressDeadlineExceeded",
    "OOMKilling", "NotTriggerScaleUp", "SuccessfulCreate", "SuccessfulDelete", "ScalingReplicaSet",
}  # fmt: skip
POD_REASONS = {
    "CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError", "OOMKilled", "Evicted",
    "NodeLost", "Unschedulable", "PodInitializing", "Completed",
}  # fmt: skip


def test_each_reference_claim_names_only_reasons_its_evidence_shows(pack: Pack) -> None:
    # A claim citing the events (or the pods) that names an event reason (or a container or pod reason) is
    # backed by one: no reference answer describes BackOff events a scenario does not have.
    missing = {}
    for s in pack.scenarios:
        diagnosis = parse_diagnosis_text(s.answer.model_response)
        assert diagnosis is not None
        events = {e.reason for e in s.k8s_events} if s.has_source("eks_events") else set()
        pods: set[str] = set()
        for p in s.pods if s.has_source("eks_pods") else ():
            pods |= {c.reason for c in p.conditions} | {str(getattr(p, "reason", ""))}
            for c in p.containers:
                pods |= {st.reason for st in (c.state, c.last_state) if st is not None}
        for claim in diagnosis.claims:
            stated = re.sub(r"\b(?:not|no|without)\s+[A-Za-z]+", "", claim.text)  # "not OOMKilled" states none
            words = set(re.findall(r"[A-Za-z]+", stated))
            if "eks_events" in claim.evidence and (words & EVENT_REASONS) - events:
                missing[(s.folder, claim.text)] = (words & EVENT_REASONS) - events
            if "eks_pods" in claim.evidence and (words & POD_REASONS) - pods:
                missing[(s.folder, claim.text)] = (words & POD_REASONS) - pods
    assert missing == {}
