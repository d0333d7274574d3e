"""The Kubernetes domain's lint rules (`domains/k8s/lint.py`), each on the clean test pack and on a copy that breaks
it, and `visible_text`, which lint's leak rule reads: every string the tools serve is in it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sredrill.domains.k8s import DOMAIN
from sredrill.domains.k8s.lint import visible_text
from sredrill.scenarios import Finding, Pack, Severity, lint_pack

from .conftest import FAILING_POD, IMAGE, NODE, OLD, OOM, Edit, edited_pack


def findings(pack: Pack, rule: str | None = None) -> list[Finding]:
    return [f for f in lint_pack(pack) if rule is None or f.rule == rule]


def test_the_test_pack_lints_clean(pack: Pack) -> None:
    assert findings(pack) == []
    assert DOMAIN.lint and DOMAIN.visible_text is visible_text


def _set(path: list[Any], value: Any) -> Edit:
    def edit(data: Any) -> None:
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return edit


NEWEST = "ledger-api-5b7f9d8c66-t4hnd"
"""The newest ledger-api pod of the OOM scenario (started 2026-03-09T08:00:06Z)."""


def _replaced(last: str = "2026-03-09T07:59:40Z", pod: str = "ledger-api-7c9d4b6f58-wq2tx") -> dict[str, Any]:
    """A BackOff event about a pod of an older ReplicaSet, which eks_pods.json no longer lists."""
    return {
        "namespace": "payments",
        "reason": "BackOff",
        "type": "Warning",
        "involved_object": f"Pod/{pod}",
        "message": f"Back-off restarting failed container ledger in pod {pod}_payments",
        "first_time": "2026-03-09T07:41:00Z",
        "last_time": last,
        "count": 9,
    }


CASES: list[tuple[str, dict[str, Edit], str, str, str]] = [
    (
        "namespace",
        {f"{OOM}/eks_pods.json": _set(["pods", 1, "namespace"], "checkout")},
        f"{OOM}/eks_pods.json",
        "pods[1].namespace",
        "'checkout' is not the scenario's namespace 'payments'",
    ),
    (
        "namespace",
        {f"{OOM}/eks_events.json": _set(["warning_events", 1, "namespace"], "checkout")},
        f"{OOM}/eks_events.json",
        "warning_events[1].namespace",
        "'checkout' is not the scenario's namespace 'payments'",
    ),
    (
        # A Datadog record about one of the scenario's own pods, tagged with another namespace.
        "namespace",
        {f"{OOM}/datadog_logs.json": _set(["logs", 0, "tags", 2], "kube_namespace:checkout")},
        f"{OOM}/datadog_logs.json",
        "logs[0].tags[2]",
        "'checkout' is not the scenario's namespace 'payments', and the record is about pod "
        "ledger-api-5b7f9d8c66-t4hnd, which is in 'payments'",
    ),
    (
        # ... or about the workload itself (no pod tag).
        "namespace",
        {f"{OOM}/datadog_logs.json": _set(["logs", 1, "tags"], ["service:ledger-api", "kube_namespace:checkout"])},
        f"{OOM}/datadog_logs.json",
        "logs[1].tags[1]",
        "the record is about deployment ledger-api, which is in 'payments'",
    ),
    (
        "event_object",
        {f"{OOM}/eks_events.json": _set(["warning_events", 0, "involved_object"], "Pod/ledger-api-gone-1")},
        f"{OOM}/eks_events.json",
        "warning_events[0].involved_object",
        "the event is about Pod/ledger-api-gone-1, which is not among the pods of eks_pods.json",
    ),
    (
        # A replaced pod's event seen after the newest pod of its ReplicaSet started: the pod is not gone.
        "event_object",
        {f"{OOM}/eks_events.json": lambda d: d["warning_events"].append(_replaced("2026-03-09T08:10:00Z"))},
        f"{OOM}/eks_events.json",
        "warning_events[3].involved_object",
        f"last seen 2026-03-09T08:10:00+00:00, after {NEWEST} of the same owner started (2026-03-09T08:00:06+00:00)",
    ),
    (
        # A gone pod of a deployment the scenario has no pod of: no replacement to date it against.
        "event_object",
        {
            f"{OOM}/eks_events.json": lambda d: d["warning_events"].append(
                _replaced(pod="audit-shipper-7c9d4b6f58-wq2tx")
            )
        },
        f"{OOM}/eks_events.json",
        "warning_events[3].involved_object",
        "the event is about Pod/audit-shipper-7c9d4b6f58-wq2tx, which is not among the pods of eks_pods.json",
    ),
    (
        "event_time",
        {f"{OOM}/eks_events.json": _set(["warning_events", 0, "last_time"], "2026-03-10T13:00:00Z")},
        f"{OOM}/eks_events.json",
        "warning_events[0].last_time",
        "last seen 2026-03-10T13:00:00+00:00, before it was first seen (2026-03-10T13:41:20+00:00)",
    ),
    (
        "event_time",
        {f"{OOM}/eks_events.json": _set(["warning_events", 1, "count"], 0)},
        f"{OOM}/eks_events.json",
        "warning_events[1].count",
        "count is 0",
    ),
    (
        "pod_logs",
        {f"{OOM}/eks_pod_logs.json": _set(["pod_name"], "ledger-api-5b7f9d8c66-zzzzz")},
        f"{OOM}/eks_pod_logs.json",
        "pod_name",
        "the log is of pod 'ledger-api-5b7f9d8c66-zzzzz', which list_pods does not show",
    ),
    (
        "pod_logs",
        {f"{OOM}/eks_pod_logs.json": _set(["container"], "app")},
        f"{OOM}/eks_pod_logs.json",
        "container",
        f"pod {FAILING_POD} has no container 'app'",
    ),
    (
        "node",
        {f"{NODE}/eks_pods.json": _set(["pods", 0, "node_name"], "ip-10-20-9-99.ec2.internal")},
        f"{NODE}/eks_pods.json",
        "pods[0].node_name",
        "runs on 'ip-10-20-9-99.ec2.internal', which eks_node_health.json does not list",
    ),
    (
        "node",
        {f"{NODE}/eks_pods.json": _set(["pods", 0, "node_name"], "unscheduled")},
        f"{NODE}/eks_pods.json",
        "pods[0].phase",
        "is Running but on no node (unscheduled)",
    ),
    (
        "consistency",
        {f"{IMAGE}/answer.yml": lambda t: t.replace("  - get_eks_events\nmodel", "  - get_eks_logs\nmodel")},
        f"{IMAGE}/answer.yml",
        "required_queries[1]",
        "'get_eks_logs' is not a tool of the k8s domain",
    ),
    (
        "consistency",
        {f"{IMAGE}/answer.yml": lambda t: t.replace("  - get_eks_events\nmodel", "  - get_pod_logs\nmodel")},
        f"{IMAGE}/answer.yml",
        "required_queries[1]",
        "'get_pod_logs' reads eks_pod_logs, which is not in available_evidence",
    ),
]


@pytest.mark.parametrize(("rule", "edits", "path", "field", "says"), CASES, ids=[f"{c[0]}-{c[3]}" for c in CASES])
def test_each_rule_warns_on_a_broken_copy(
    tmp_path: Path, rule: str, edits: dict[str, Edit], path: str, field: str, says: str
) -> None:
    found = findings(edited_pack(tmp_path, edits), rule)
    assert len(found) == 1, [f.render() for f in found]
    (finding,) = found
    assert finding.severity is Severity.WARNING and finding.path == f"k8s_small/{path}" and finding.field == field
    assert says in finding.message and finding.fix


def test_cluster_components_may_live_in_a_kube_namespace(tmp_path: Path) -> None:
    def coredns(data: Any) -> None:
        pod = dict(data["pods"][0], name="coredns-5d78c9869d-8kq2x", namespace="kube-system")
        data["pods"].append(pod)

    assert findings(edited_pack(tmp_path, {f"{OOM}/eks_pods.json": coredns})) == []


def test_events_of_a_replaced_pod_are_history(tmp_path: Path) -> None:
    # Kubernetes keeps a deleted pod's events for their TTL: one last seen before its replacement started is fine,
    # whether the replacement is of the same ReplicaSet or of a newer one (a rollout).
    def replaced(data: Any) -> None:
        data["warning_events"] += [_replaced(), _replaced(pod="ledger-api-5b7f9d8c66-bb2nk")]

    assert findings(edited_pack(tmp_path, {f"{OOM}/eks_events.json": replaced})) == []


def test_a_dependency_logs_in_its_own_namespace(tmp_path: Path) -> None:
    # The workload calls fx-rates in treasury: Datadog tags its records with treasury, which is not a mistake.
    def dependency(data: Any) -> None:
        record = {
            "timestamp": "2026-03-10T14:02:00Z",
            "status": "error",
            "service": "fx-rates",
            "host": "fx-rates-6d8b9c7f4d-p2xkq",
            "message": "upstream quote feed timed out after 5000ms",
            "tags": ["service:fx-rates", "kube_namespace:treasury", "kube_deployment:fx-rates",
                     "pod_name:fx-rates-6d8b9c7f4d-p2xkq"],
        }  # fmt: skip
        data["logs"].append(record)

    assert findings(edited_pack(tmp_path, {f"{OOM}/datadog_logs.json": dependency})) == []


def test_an_unscheduled_pending_pod_is_fine(tmp_path: Path) -> None:
    def pending(data: Any) -> None:
        data["pods"][0].update(node_name="unscheduled", phase="Pending")

    assert findings(edited_pack(tmp_path, {f"{NODE}/eks_pods.json": pending})) == []


# -- visible_text and the leak rule ----------------------------------------------------------------------------


def test_visible_text_holds_every_served_string(pack: Pack) -> None:
    texts = {(path.rsplit("/", 1)[1], field): text for path, field, text in visible_text(pack.scenario(OOM))}
    assert texts[("eks_pods.json", "pods[0].containers[0].state.message")].startswith("back-off 2m40s")
    assert texts[("eks_pods.json", "pods[0].containers[0].last_state.reason")] == "OOMKilled"
    assert texts[("eks_pods.json", "pods[0].containers[0].resources.limits")] == "memory 512Mi cpu 1"
    assert texts[("eks_pods.json", "pods[0].labels.app")] == "app ledger-api"
    assert "ContainersNotReady" in texts[("eks_pods.json", "pods[0].conditions[1]")]
    assert texts[("eks_events.json", "warning_events[2].message")].startswith("Readiness probe failed")
    assert texts[("eks_deployments.json", "deployments[0].image")].endswith(":4.12.3")
    assert texts[("eks_node_health.json", "nodes[2].instance_type")] == "m6i.xlarge"
    assert texts[("eks_pod_logs.json", "logs (line 6)")].startswith("[kernel]")
    assert texts[("datadog_logs.json", "logs[2].tags[4]")] == "kube_node:ip-10-20-1-11.ec2.internal"
    assert "kubernetes.memory.usage" in texts[("datadog_monitors.json", "monitors[2].query")]
    assert texts[("datadog_monitors.json", "monitors[1].message")] == "Containers of ledger-api restart repeatedly"
    # Files a scenario takes from its base are named by where they were read.
    assert any(p.endswith("000-healthy/eks_node_health.json") for p, _, _ in visible_text(pack.scenario(OOM)))


@pytest.mark.parametrize(
    ("file", "edit", "field"),
    [
        ("datadog_logs.json", _set(["logs", 1, "message"], "heap pressure: oom_killed soon"), "logs[1].message"),
        ("eks_events.json", _set(["warning_events", 1, "reason"], "Oom_Killed"), "warning_events[1].reason"),
        (
            "datadog_monitors.json",
            _set(["monitors", 0, "tags", 1], "scenario:001-ledger-memory"),
            "monitors[0].tags[1]",
        ),
        ("eks_pod_logs.json", lambda d: d.update(logs=d["logs"] + "bad_config detected\n"), "logs (line 8)"),
    ],
)
def test_the_leak_rule_reads_the_k8s_evidence(tmp_path: Path, file: str, edit: Edit, field: str) -> None:
    leaks = findings(edited_pack(tmp_path, {f"{OOM}/{file}": edit}), "leak")
    assert {(f.severity, f.path, f.field) for f in leaks} == {(Severity.ERROR, f"k8s_small/{OOM}/{file}", field)}


def test_native_reasons_are_not_leaks(pack: Pack) -> None:
    # OOMKilled, CrashLoopBackOff, ImagePullBackOff, NodeNotReady: Kubernetes' own words stay in the evidence.
    texts = " ".join(t for s in pack.scenarios for _, _, t in visible_text(s))
    for word in ("OOMKilled", "CrashLoopBackOff", "ImagePullBackOff", "NodeNotReady"):
        assert word in texts
    assert findings(pack, "leak") == []
    assert OLD in {s.id for s in pack.scenarios}
