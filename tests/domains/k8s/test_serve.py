"""The Kubernetes evidence server (`domains/k8s/serve.py`) through the real toolset: each tool on `full` (filters
ignored), `selective` (filters applied) and `temporal` (nothing after the clock), each filter, each error, and the
audit grading reads. The pack is `tests/fixtures/k8s_small`, loaded by the real loader."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sredrill.diagnosis import ITEM_ID
from sredrill.domains.k8s import DOMAIN
from sredrill.domains.k8s.payloads import rollout_status
from sredrill.domains.k8s.records import Deployment
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.evidence.serving import server_factory
from sredrill.scenarios import Pack, load_pack
from sredrill.trajectory import ToolError

from .conftest import FAILING_POD, FIXTURE, IMAGE, NODE, OLD, OOM, SIBLING, call, edited_pack

STARTS_AT = datetime(2026, 3, 10, 14, 5, tzinfo=UTC)


def names(items: list[Any], key: str = "name") -> list[str]:
    return [item[key] for item in items]


def without_id(record: dict[str, Any], kind: str) -> dict[str, Any]:
    """The record without its evidence item's id, which is checked here (test_items.py tests its value)."""
    rest = dict(record)
    assert ITEM_ID.match(rest.pop("id")) and record["id"].startswith(f"{kind}-")
    return rest


async def bad_call(pack: Pack, folder: str, tool: str, mode: str = "selective", **args: Any) -> str:
    with pytest.raises(ToolError) as info:
        await call(pack.scenario(folder), tool, mode, **args)
    assert info.value.code == "bad_arguments"
    return info.value.message


# -- the server as the toolset sees it --------------------------------------------------------------------


def test_every_tool_has_a_handler_and_the_clock_has_a_start(pack: Pack) -> None:
    server = server_factory(DOMAIN)(pack.scenario(OOM))
    assert set(getattr(server, "_handlers", {})) == {t.name for t in DOMAIN.tools}
    assert server.started_at == STARTS_AT  # the alert's startsAt
    assert server.step == timedelta(seconds=60)
    # No startsAt: the latest dated evidence (here the last Datadog record), so the clock holds nothing back.
    assert server_factory(DOMAIN)(pack.scenario("000-healthy")).started_at == datetime(
        2026, 3, 10, 13, 59, 30, tzinfo=UTC
    )


def test_nothing_dated_means_no_clock_and_everything_served(tmp_path: Path) -> None:
    yml = "000-healthy/scenario.yml"
    edited = edited_pack(
        tmp_path, {yml: lambda t: t.split("available_evidence:")[0] + "available_evidence: [eks_pods]\n"}
    )
    scenario = edited.scenario("000-healthy")
    assert server_factory(DOMAIN)(scenario).started_at is None
    assert RcaToolset(scenario, BackendMode.TEMPORAL).clock is None


async def test_the_audit_names_each_tool_and_its_legacy_name(pack: Pack) -> None:
    scenario = pack.scenario(OOM)
    selective = RcaToolset(scenario, BackendMode.SELECTIVE)
    await selective.call("list_pods", {})
    await selective.call("get_pod_logs", {"pod": FAILING_POD})
    assert selective.returned_metrics() == ("list_pods", "list_eks_pods", "get_pod_logs", "get_eks_pod_logs")
    assert [e.n_events for e in selective.audit] == [3, 7]
    assert selective.sources_queried() == {"eks_pods", "eks_pod_logs"}
    # On `full` every call returns everything, so being returned proves nothing (the core's rule).
    full = RcaToolset(scenario, BackendMode.FULL)
    await full.call("list_pods", {})
    assert full.returned_metrics() == () and full.audit[0].returned_metrics == ("list_pods", "list_eks_pods")


async def test_a_mutated_result_does_not_change_the_next(pack: Pack) -> None:
    tools = RcaToolset(pack.scenario(OOM), BackendMode.SELECTIVE)
    first = await tools.call("list_pods", {})
    assert isinstance(first, dict) and isinstance(first["pods"], list)
    first["pods"].clear()
    again = await tools.call("list_pods", {})
    assert isinstance(again, dict) and again["total"] == 3


# -- list_pods ---------------------------------------------------------------------------------------------


async def test_list_pods_shapes_states_and_last_terminations(pack: Pack) -> None:
    result = await call(pack.scenario(OOM), "list_pods", "full")
    assert result["total"] == 3
    failing = result["pods"][0]
    assert failing["name"] == FAILING_POD and failing["labels"]["app"] == "ledger-api"
    ledger, proxy = failing["containers"]
    assert ledger["state"] == {
        "state": "waiting",
        "reason": "CrashLoopBackOff",
        "message": f"back-off 2m40s restarting failed container=ledger pod={FAILING_POD}_payments",
        "exit_code": None,
        "started_at": None,
        "finished_at": None,
    }
    # last_state terminated: the last termination is it.
    assert ledger["last_termination"] == {
        "reason": "OOMKilled",
        "exit_code": 137,
        "message": "",
        "finished_at": "2026-03-10T14:04:10Z",
    }
    assert ledger["resources"]["limits"]["memory"] == "512Mi" and ledger["image"].endswith(":4.12.3")
    assert proxy["state"]["state"] == "running" and proxy["last_termination"] is None
    assert failing["conditions"][1] == {
        "type": "ContainersReady",
        "status": "False",
        "reason": "ContainersNotReady",
        "message": "containers with unready status: [ledger]",
    }


async def test_an_exit_code_beside_a_running_state_is_the_last_termination(pack: Pack) -> None:
    pods = (await call(pack.scenario(OLD), "list_pods", "full"))["pods"]
    restarted = pods[2]["containers"][0]
    assert restarted["restart_count"] == 4 and restarted["state"]["state"] == "running"
    assert restarted["last_termination"] == {"reason": "Error", "exit_code": 1, "message": "", "finished_at": None}
    # Fields a file does not record are absent, not null: no image, resources or labels here.
    assert "image" not in restarted and "resources" not in restarted and "labels" not in pods[2]


async def test_list_pods_shows_a_deletion_timestamp(pack: Pack) -> None:
    pods = (await call(pack.scenario(NODE), "list_pods", "full"))["pods"]
    assert [p.get("deletion_timestamp") for p in pods] == [None, "2026-03-10T14:12:40Z", None]
    assert pods[1]["phase"] == "Unknown"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, ["2xk9p", "q7wzm", "t4hnd"]),
        ({"name": "Q7W"}, ["q7wzm"]),
        ({"phase": "pending"}, ["m2x8r"]),
        ({"phase": "Running"}, ["2xk9p", "t4hnd"]),
        ({"node": "ip-10-20-3-13.ec2.internal"}, ["t4hnd"]),
        ({"namespace": "payments"}, ["2xk9p", "t4hnd", "m2x8r"]),
        ({"namespace": "*"}, ["2xk9p", "t4hnd", "m2x8r"]),
    ],
)
async def test_list_pods_filters_on_selective_and_not_on_full(
    pack: Pack, args: dict[str, Any], expected: list[str]
) -> None:
    folder = IMAGE if "phase" in args or "namespace" in args else OOM
    selective = await call(pack.scenario(folder), "list_pods", **args)
    assert [n.rsplit("-", 1)[1] for n in names(selective["pods"])] == expected
    assert selective["total"] == len(expected)
    full = await call(pack.scenario(folder), "list_pods", "full", **args)
    assert full["total"] == 3


async def test_list_pods_says_what_exists_when_nothing_matches(pack: Pack) -> None:
    result = await call(pack.scenario(OOM), "list_pods", name="checkout")
    assert result["pods"] == [] and result["total"] == 0
    assert f"the pods: {FAILING_POD}" in result["note"]


async def test_list_pods_errors_name_the_known_values(pack: Pack) -> None:
    message = await bad_call(pack, OOM, "list_pods", node="ip-10-20-9-99.ec2.internal")
    assert "no node 'ip-10-20-9-99.ec2.internal'" in message and "known: ip-10-20-1-11.ec2.internal" in message
    message = await bad_call(pack, OOM, "list_pods", namespace="paymnets")
    assert "did you mean 'payments'?" in message and "'*' for all" in message
    # A phase that is not one is wrong on every backend (the argument model checks it).
    message = await bad_call(pack, OOM, "list_pods", "full", phase="Crashing")
    assert "'Crashing' is not a pod phase; allowed: Pending, Running, Succeeded, Failed, Unknown" in message
    # On `full` a name filter is ignored, so an unknown node is no error there.
    assert (await call(pack.scenario(OOM), "list_pods", "full", node="nowhere"))["total"] == 3


# -- get_events --------------------------------------------------------------------------------------------


async def test_get_events_oldest_first_with_every_field(pack: Pack) -> None:
    events = (await call(pack.scenario(OOM), "get_events", "full"))["events"]
    assert names(events, "reason") == ["ScalingReplicaSet", "BackOff", "Unhealthy"]
    assert without_id(events[1], "event") == {
        "type": "Warning",
        "reason": "BackOff",
        "message": f"Back-off restarting failed container ledger in pod {FAILING_POD}_payments",
        "involved_object": f"Pod/{FAILING_POD}",
        "namespace": "payments",
        "first_time": "2026-03-10T13:41:20Z",
        "last_time": "2026-03-10T14:04:12Z",
        "count": 14,
    }


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"involved_object": "Node/ip-10-20-2-12.ec2.internal"}, ["NodeNotReady", "NodeControllerEviction"]),
        ({"involved_object": "node"}, ["NodeNotReady", "NodeControllerEviction"]),
        ({"involved_object": "q7wzm"}, ["NodeNotReady"]),
        ({"reason": "nodecontrollereviction"}, ["NodeControllerEviction"]),
        ({"type": "Warning", "start": "2026-03-10T14:10:00Z"}, ["NodeControllerEviction"]),
        ({"end": "2026-03-10T14:06:35Z"}, ["NodeNotReady"]),
        ({"namespace": "*"}, ["NodeNotReady", "NodeNotReady", "NodeControllerEviction"]),
    ],
)
async def test_get_events_filters_on_selective_and_not_on_full(
    pack: Pack, args: dict[str, Any], expected: list[str]
) -> None:
    selective = await call(pack.scenario(NODE), "get_events", **args)
    assert names(selective["events"], "reason") == expected and selective["total"] == len(expected)
    assert (await call(pack.scenario(NODE), "get_events", "full", **args))["total"] == 3


async def test_get_events_type_and_bad_arguments(pack: Pack) -> None:
    normal = await call(pack.scenario(IMAGE), "get_events", type="Normal")
    assert names(normal["events"], "reason") == ["ScalingReplicaSet"]
    message = await bad_call(pack, IMAGE, "get_events", "full", type="Error")
    assert "'Error' is not allowed; allowed: Warning, Normal" in message
    message = await bad_call(pack, IMAGE, "get_events", start="2026-03-10T15:00:00Z", end="2026-03-10T14:00:00Z")
    assert "must be before end" in message
    message = await bad_call(pack, IMAGE, "get_events", namespace="kube-system")
    assert "no namespace 'kube-system'" in message and "known: payments" in message


async def test_get_events_on_temporal_holds_back_what_was_first_seen_after_the_clock(pack: Pack) -> None:
    tools = RcaToolset(pack.scenario(OOM), BackendMode.TEMPORAL)
    assert tools.clock == STARTS_AT
    first = await tools.call("get_events", {})
    assert isinstance(first, dict)
    # The readiness failures begin at 14:06:30: not yet. The back-off began before and is shown whole.
    assert names(first["events"], "reason") == ["ScalingReplicaSet", "BackOff"]
    await tools.call("get_alert", {})  # no call but a wait moves the clock
    assert (await tools.call("get_events", {}))["total"] == 2
    await tools.call("wait", {"minutes": 2})
    later = await tools.call("get_events", {})  # the clock is now 14:07
    assert isinstance(later, dict) and later["total"] == 3


# -- get_pod_logs ------------------------------------------------------------------------------------------


async def test_get_pod_logs_serves_the_last_lines_oldest_first(pack: Pack) -> None:
    result = await call(pack.scenario(OOM), "get_pod_logs", pod=FAILING_POD)
    assert result["pod"] == FAILING_POD and result["container"] == "ledger"
    assert result["total_lines"] == 7 and result["truncated"] is False
    assert result["lines"][0] == "2026-03-10T14:02:33Z INFO ledger-api 4.12.3 starting, heap limit 480Mi"
    assert result["lines"][5].startswith("[kernel] Memory cgroup out of memory")
    limited = await call(pack.scenario(OOM), "get_pod_logs", pod=FAILING_POD, container="ledger", limit=2)
    assert limited["lines"] == result["lines"][-2:] and limited["truncated"] is True and limited["total_lines"] == 7
    # The limit applies on every backend: it is a size, not a filter.
    assert len((await call(pack.scenario(OOM), "get_pod_logs", "full", pod="x", limit=3))["lines"]) == 3


async def test_get_pod_logs_on_full_serves_the_recorded_log_whatever_pod_was_asked(pack: Pack) -> None:
    result = await call(pack.scenario(OOM), "get_pod_logs", "full", pod="no-such-pod", container="sidecar")
    assert result["pod"] == FAILING_POD and result["container"] == "ledger" and result["total_lines"] == 7
    # A scenario without a pod log answers with no lines, under the pod asked for.
    empty = await call(pack.scenario(OLD), "get_pod_logs", "full", pod="anything")
    assert empty == {
        "pod": "anything",
        "container": None,
        "lines": [],
        "ids": [],
        "total_lines": 0,
        "truncated": False,
    }


async def test_get_pod_logs_of_a_known_pod_without_a_collected_log_is_empty(pack: Pack) -> None:
    sibling = await call(pack.scenario(OOM), "get_pod_logs", pod=SIBLING)
    assert sibling == {
        "pod": SIBLING,
        "container": "ledger",
        "lines": [],
        "ids": [],
        "total_lines": 0,
        "truncated": False,
    }
    proxy = await call(pack.scenario(OOM), "get_pod_logs", pod=FAILING_POD, container="istio-proxy")
    assert proxy["lines"] == [] and proxy["container"] == "istio-proxy"
    # A pod the events name (it is not in the pods file any more) is known too.
    image = await call(pack.scenario(IMAGE), "get_pod_logs", pod="ledger-api-6f4c8b9d77-m2x8r")
    assert image["total_lines"] == 0


async def test_get_pod_logs_errors_name_the_known_pods_and_containers(pack: Pack) -> None:
    message = await bad_call(pack, OOM, "get_pod_logs", pod="ledger-api-5b7f9d8c66-2xk9q")
    assert f"no pod 'ledger-api-5b7f9d8c66-2xk9q' in this scenario (did you mean '{FAILING_POD}'?)" in message
    assert f"known: {FAILING_POD}, {SIBLING}, ledger-api-5b7f9d8c66-t4hnd" in message
    message = await bad_call(pack, OOM, "get_pod_logs", pod=FAILING_POD, container="app")
    assert f"no container of pod {FAILING_POD} 'app'" in message and "known: ledger, istio-proxy" in message
    message = await bad_call(pack, OOM, "get_pod_logs", "full")
    assert "missing required argument 'pod'" in message
    message = await bad_call(pack, OOM, "get_pod_logs", "full", pod=FAILING_POD, limit=5000)
    assert "limit: must be between 1 and 1000, got 5000" in message


async def test_an_error_echoes_a_hostile_name_only_in_part(pack: Pack) -> None:
    message = await bad_call(pack, OOM, "get_pod_logs", pod="p" * 100_000)
    assert len(message) < 1000 and "p" * 80 + "…" in message


async def test_get_pod_logs_on_temporal_holds_back_later_lines_and_keeps_undated_ones(pack: Pack) -> None:
    tools = RcaToolset(pack.scenario(OOM), BackendMode.TEMPORAL)
    result = await tools.call("get_pod_logs", {"pod": FAILING_POD})
    assert isinstance(result, dict) and result["total_lines"] == 6
    lines = result["lines"]
    assert isinstance(lines, list) and lines[-1].startswith("[kernel]")  # undated: kept
    assert not any(str(line).startswith("2026-03-10T14:06") for line in lines)


async def test_get_pod_logs_previous_says_what_was_collected(pack: Pack) -> None:
    result = await call(pack.scenario(OOM), "get_pod_logs", pod=FAILING_POD, previous=True)
    assert result["total_lines"] == 7 and "only one log was collected" in result["note"]


# -- list_deployments --------------------------------------------------------------------------------------


async def test_list_deployments_with_rollout_status(pack: Pack) -> None:
    healthy = (await call(pack.scenario(OOM), "list_deployments", "full"))["deployments"][0]
    assert healthy["rollout_status"] == "complete" and healthy["revision"] == 4 and healthy["updated"] == 3
    assert names(healthy["conditions"], "type") == ["Available", "Progressing"]
    rollout = await call(pack.scenario(IMAGE), "list_deployments")
    assert rollout["total"] == 1 and rollout["deployments"][0]["rollout_status"] == "degraded"
    bare = (await call(pack.scenario(NODE), "list_deployments"))["deployments"][0]
    assert bare["conditions"] == [] and bare["unavailable"] == 1


def deployment(**over: Any) -> Deployment:
    base: dict[str, Any] = {"name": "web", "namespace": "shop", "desired": 3, "ready": 3, "available": 3}
    return Deployment.model_validate({"unavailable": 0, **base, **over})


@pytest.mark.parametrize(
    ("over", "status"),
    [
        ({}, "complete"),
        ({"updated": 1}, "progressing"),
        ({"ready": 2}, "degraded"),
        ({"unavailable": 1, "updated": 1}, "degraded"),
        ({"conditions": [{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}]}, "stalled"),
        ({"conditions": [{"type": "Progressing", "status": "True", "reason": "ProgressDeadlineExceeded"}]}, "stalled"),
        (
            {"conditions": [{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"}]},
            "complete",
        ),
    ],
)
def test_rollout_status(over: dict[str, Any], status: str) -> None:
    assert rollout_status(deployment(**over)) == status


async def test_list_deployments_filters_and_errors(pack: Pack) -> None:
    assert (await call(pack.scenario(IMAGE), "list_deployments", name="ledger-api"))["total"] == 1
    assert (await call(pack.scenario(IMAGE), "list_deployments", namespace="payments"))["total"] == 1
    message = await bad_call(pack, IMAGE, "list_deployments", name="ledger")
    assert "no deployment 'ledger'" in message and "known: ledger-api" in message
    assert (await call(pack.scenario(IMAGE), "list_deployments", "full", name="ledger"))["total"] == 1


# -- get_node_health ---------------------------------------------------------------------------------------


async def test_get_node_health_counts_nodes_not_ready(pack: Pack) -> None:
    result = await call(pack.scenario(NODE), "get_node_health", "full")
    assert result["total"] == 3 and result["not_ready"] == 1
    lost = result["nodes"][1]
    assert without_id(lost, "node") == {
        "name": "ip-10-20-2-12.ec2.internal",
        "ready": "Unknown",
        "memory_pressure": "Unknown",
        "disk_pressure": "Unknown",
        "pid_pressure": "Unknown",
        "capacity": {"cpu": "4", "memory": "15.6Gi"},
        "allocatable": {"cpu": "3920m", "memory": "14.8Gi"},
        "instance_type": "m6i.xlarge",
        "internal_ip": "10.20.2.12",
    }
    one = await call(pack.scenario(NODE), "get_node_health", name="IP-10-20-2-12.ec2.internal")
    assert one["total"] == 1 and one["not_ready"] == 1
    healthy = await call(pack.scenario(NODE), "get_node_health", name="ip-10-20-1-11.ec2.internal")
    assert healthy["not_ready"] == 0
    message = await bad_call(pack, NODE, "get_node_health", name="ip-10-20-2-13.ec2.internal")
    assert "did you mean" in message and "known: ip-10-20-1-11.ec2.internal" in message
    assert (await call(pack.scenario(NODE), "get_node_health", "full", name="nope"))["total"] == 3


# -- search_logs -------------------------------------------------------------------------------------------


async def test_search_logs_newest_first_with_every_field(pack: Pack) -> None:
    result = await call(pack.scenario(OOM), "search_logs", "full")
    assert result["matched"] == 5 and result["truncated"] is False
    logs = result["logs"]
    assert names(logs, "timestamp") == sorted(names(logs, "timestamp"), reverse=True)
    assert without_id(logs[2], "log") == {
        "timestamp": "2026-03-10T14:04:10Z",
        "status": "error",
        "service": "kubelet",
        "host": "ip-10-20-1-11.ec2.internal",
        "message": f"container ledger in pod {FAILING_POD} terminated: OOMKilled, exit code 137",
        "tags": [
            "env:prod",
            "service:kubelet",
            "kube_namespace:payments",
            f"kube_pod:{FAILING_POD}",
            "kube_node:ip-10-20-1-11.ec2.internal",
            "kube_cluster:drill-use1",
        ],
    }


@pytest.mark.parametrize(
    ("args", "matched"),
    [
        ({"query": "status:error"}, ["14:08:02", "14:04:10"]),
        ({"query": "status:warning"}, ["14:03:58"]),
        ({"query": "service:kubelet"}, ["14:04:10"]),
        ({"query": f"kube_pod:{FAILING_POD}"}, ["14:04:10", "14:03:58"]),
        ({"query": "kube_pod:ledger-api-*-t4hnd"}, ["13:58:11"]),
        ({"query": "host:ip-10-20-1-11.ec2.internal"}, ["14:04:10"]),
        ({"query": "OOMKilled"}, ["14:04:10"]),
        ({"query": '"connection refused"'}, ["14:08:02"]),
        ({"query": "heap -status:error"}, ["14:03:58"]),
        ({"query": "service:ledger-api NOT status:info"}, ["14:08:02", "14:03:58"]),
        ({"query": 'kube_pod:"ledger-api-5b7f9d8c66-q7wzm" AND 200'}, ["14:04:30"]),
        ({"query": "*"}, ["14:08:02", "14:04:30", "14:04:10", "14:03:58", "13:58:11"]),
        ({"status": ["warn", "info"]}, ["14:04:30", "14:03:58", "13:58:11"]),
        ({"start": "2026-03-10T14:04:10Z", "end": "2026-03-10T14:08:02Z"}, ["14:04:30", "14:04:10"]),
    ],
)
async def test_search_logs_filters_on_selective_and_not_on_full(
    pack: Pack, args: dict[str, Any], matched: list[str]
) -> None:
    result = await call(pack.scenario(OOM), "search_logs", **args)
    assert [t[11:19] for t in names(result["logs"], "timestamp")] == matched and result["matched"] == len(matched)
    assert (await call(pack.scenario(OOM), "search_logs", "full", **args))["matched"] == 5


async def test_search_logs_limit_says_how_many_more(pack: Pack) -> None:
    result = await call(pack.scenario(OOM), "search_logs", "full", limit=2)
    assert result["matched"] == 5 and result["truncated"] is True and len(result["logs"]) == 2
    assert "3 older matching records before 2026-03-10T14:04:30Z: raise limit (at most 500)" in result["note"]


async def test_search_logs_malformed_queries_are_errors_on_every_backend(pack: Pack) -> None:
    message = await bad_call(pack, OOM, "search_logs", "full", query='"connection refused')
    assert message.startswith("search_logs: query: unbalanced quote")
    message = await bad_call(pack, OOM, "search_logs", query="service:")
    assert "'service:' at position 0 has no value: write service:value" in message
    message = await bad_call(pack, OOM, "search_logs", status=["fatal"])
    assert "'fatal' is not allowed; allowed: info, warn, error" in message


async def test_search_logs_on_temporal_holds_back_later_records(pack: Pack) -> None:
    tools = RcaToolset(pack.scenario(OOM), BackendMode.TEMPORAL)
    result = await tools.call("search_logs", {"query": "status:error"})
    assert isinstance(result, dict) and result["matched"] == 1  # the 14:08 record is three minutes away
    for _ in range(3):
        await tools.call("get_alert", {})  # calls do not move the clock
    assert (await tools.call("search_logs", {"query": "status:error"}))["matched"] == 1
    await tools.call("wait", {"minutes": 4})  # 14:09
    result = await tools.call("search_logs", {"query": "status:error"})
    assert isinstance(result, dict) and result["matched"] == 2


# -- query_monitors ----------------------------------------------------------------------------------------


async def test_query_monitors_filters_on_selective_and_not_on_full(pack: Pack) -> None:
    full = await call(pack.scenario(OOM), "query_monitors", "full", state=["OK"])
    assert full["total"] == 3
    assert without_id(full["monitors"][0], "monitor") == {
        "monitor_id": 9101,
        "name": "ledger-api error rate",
        "type": "query alert",
        "query": "sum(last_5m):sum:trace.http.request.errors{service:ledger-api,env:prod}.as_count() / "
        "sum:trace.http.request.hits{service:ledger-api,env:prod}.as_count() > 0.05",
        "overall_state": "OK",
        "message": "Error rate above 5% @pagerduty-payments",
        "tags": ["service:ledger-api", "team:payments"],
    }
    alerting = await call(pack.scenario(OOM), "query_monitors", state=["Alert", "Warn"])
    assert names(alerting["monitors"]) == ["ledger-api container restarts", "ledger-api memory usage"]
    by_text = await call(pack.scenario(OOM), "query_monitors", query="KUBERNETES.memory")
    assert names(by_text["monitors"]) == ["ledger-api memory usage"]
    by_tag = await call(pack.scenario(OOM), "query_monitors", query="pipeline:k8s-eks-synthetic")
    assert by_tag["total"] == 1
    message = await bad_call(pack, OOM, "query_monitors", state=["alert"])
    assert "did you mean 'Alert'?" in message


# -- temporal: nothing after the clock, whatever the calls ---------------------------------------------------

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_events", {}),
    ("get_events", {"type": "Warning"}),
    ("get_pod_logs", {"pod": FAILING_POD}),
    ("search_logs", {}),
    ("search_logs", {"query": "ledger"}),
    ("list_pods", {}),
    ("get_alert", {}),
]


def served_moments(tool: str, result: dict[str, Any]) -> list[datetime]:
    """The moments a result serves that the clock must bound: events' first_time, log records' timestamps, and
    pod log lines' leading timestamps."""
    if tool == "get_events":
        return [datetime.fromisoformat(e["first_time"]) for e in result["events"]]
    if tool == "search_logs":
        return [datetime.fromisoformat(r["timestamp"]) for r in result["logs"]]
    if tool == "get_pod_logs":
        return [datetime.fromisoformat(line.split()[0]) for line in result["lines"] if line[:4].isdigit()]
    return []


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(range(len(CALLS))), min_size=1, max_size=12))
def test_temporal_never_serves_a_moment_after_the_clock(picks: list[int]) -> None:
    scenario = load_pack(FIXTURE).scenario(OOM)
    tools = RcaToolset(scenario, BackendMode.TEMPORAL)

    async def run() -> None:
        for i in picks:
            tool, args = CALLS[i]
            clock = tools.clock
            assert clock is not None
            result = await tools.call(tool, args)
            assert isinstance(result, dict)
            assert all(moment <= clock for moment in served_moments(tool, result))

    asyncio.run(run())
