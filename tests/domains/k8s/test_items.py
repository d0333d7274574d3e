"""The Kubernetes domain's evidence items (`domains/k8s/payloads.py`, `serve.py`): every record a tool returns
carries its item's id, the answer's items are exactly what was served, ids depend on identity alone (not on the
backend, the call, the filters or the file order), `temporal` serves fewer items, answer-key selectors and facts
read them. Through the real toolset over `tests/fixtures/k8s_small`, loaded by the real loader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sredrill.diagnosis import ITEM_ID, Citation, FactKind
from sredrill.domains.k8s import DOMAIN
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.evidence.items import ServedItem, item_id
from sredrill.evidence.serving import server_factory
from sredrill.grading.facts import check_fact
from sredrill.scenarios import Pack, Scenario
from sredrill.scenarios.answer import ItemSelector

from .conftest import FAILING_POD, IMAGE, NODE, OLD, OOM, SIBLING, edited_pack

# Each tool, the result list its records are in, and the kind of their items.
LISTS = {
    "list_pods": ("pods", "pod"),
    "get_events": ("events", "event"),
    "list_deployments": ("deployments", "deploy"),
    "get_node_health": ("nodes", "node"),
    "search_logs": ("logs", "log"),
    "query_monitors": ("monitors", "monitor"),
}
FOLDERS = ("000-healthy", OOM, IMAGE, NODE, OLD)


def result_ids(tool: str, result: Any) -> list[str]:
    """The item ids a result names, in order (a pod log's `ids`, else each record's `id`)."""
    assert isinstance(result, dict)
    if tool == "get_pod_logs":
        assert len(result["ids"]) == len(result["lines"])
        return list(result["ids"])
    key, _ = LISTS[tool]
    return [record["id"] for record in result[key]]


async def every_call(scenario: Scenario, mode: BackendMode) -> tuple[RcaToolset, dict[str, list[str]]]:
    """One call of each tool without arguments (the failing pod's log) on a fresh toolset: tool -> ids."""
    tools = RcaToolset(scenario, mode)
    out = {}
    for tool in (*LISTS, "get_pod_logs"):
        args = {"pod": FAILING_POD} if tool == "get_pod_logs" else {}
        if tool == "list_pods":
            args = {"namespace": "*"} if mode != BackendMode.FULL else {}
        out[tool] = result_ids(tool, await tools.call(tool, args))
    return tools, out


@pytest.mark.parametrize("folder", FOLDERS)
async def test_every_record_of_every_result_has_the_id_of_an_item_the_answer_served(pack: Pack, folder: str) -> None:
    tools, ids = await every_call(pack.scenario(folder), BackendMode.FULL)
    for entry in tools.audit:
        named = ids[entry.tool]
        # The answer's items are the result's records, one for one, in order.
        assert [i.id for i in entry.items] == named and entry.n_events == len(named)
        kind = "log" if entry.tool == "get_pod_logs" else LISTS[entry.tool][1]
        assert all(ITEM_ID.match(i) and i.startswith(f"{kind}-") for i in named)
        assert all(i.id == item_id(i.kind, i.identity) for i in entry.items)
    served = tools.served_items()
    # On `full` every item of the scenario is served: what `items()` lists for answer-key lint.
    everything = {i.id: i for i in server_factory(DOMAIN)(pack.scenario(folder)).items()}
    assert set(served) == set(everything)
    assert len(everything) == len(list(server_factory(DOMAIN)(pack.scenario(folder)).items()))  # ids are distinct


async def test_ids_are_the_same_on_every_backend_and_in_every_call(pack: Pack) -> None:
    scenario = pack.scenario(OOM)
    _, full = await every_call(scenario, BackendMode.FULL)
    _, again = await every_call(scenario, BackendMode.FULL)
    _, selective = await every_call(scenario, BackendMode.SELECTIVE)
    assert full == again
    for tool, ids in selective.items():
        assert ids and set(ids) <= set(full[tool]), tool
    # A temporal run that waited until everything is dated: the same ids again.
    tools = RcaToolset(scenario, BackendMode.TEMPORAL)
    await tools.call("wait", {"minutes": 10})
    late = result_ids("search_logs", await tools.call("search_logs", {}))
    assert late == full["search_logs"]


async def test_the_identity_fields_per_kind(pack: Pack) -> None:
    tools, _ = await every_call(pack.scenario(OOM), BackendMode.FULL)
    by_kind: dict[str, list[ServedItem]] = {}
    for item in tools.served_items().values():
        by_kind.setdefault(f"{item.kind}/{item.source}", []).append(item)
    fields = {k: {tuple(sorted(i.identity)) for i in v} for k, v in by_kind.items()}
    assert fields == {
        "pod/eks_pods": {("namespace", "pod")},
        "deploy/eks_deployments": {("deployment", "namespace")},  # from the scenario's base folder
        "node/eks_node_health": {("node",)},
        "event/eks_events": {("namespace", "object", "reason", "text", "time")},
        "log/eks_pod_logs": {("container", "pod", "text")},
        "log/datadog_logs": {("host", "service", "text", "time")},
        "monitor/datadog_monitors": {("monitor",)},
    }
    pods = {i.identity["pod"]: i for i in by_kind["pod/eks_pods"]}
    # A pod's point is the total restarts of its containers (6 + 0 for the failing pod's ledger and proxy).
    assert pods[FAILING_POD].points == ((None, 6),) and pods[SIBLING].points == ((None, 1),)
    assert pods[FAILING_POD].identity == {"namespace": "payments", "pod": FAILING_POD}
    backoff = next(i for i in by_kind["event/eks_events"] if i.identity["reason"] == "BackOff")
    assert backoff.identity["time"] == "2026-03-10T13:41:20Z" and backoff.identity["object"] == f"Pod/{FAILING_POD}"
    assert (
        backoff.points == ((None, 14),)
        and backoff.at is not None
        and backoff.at.isoformat().startswith("2026-03-10T14:04:12")
    )
    monitors = {i.identity["monitor"]: i.points for i in by_kind["monitor/datadog_monitors"]}
    assert monitors == {
        "ledger-api error rate": ((None, 0.0),),
        "ledger-api container restarts": ((None, 1.0),),
        "ledger-api memory usage": ((None, 0.5),),
    }
    kernel = next(i for i in by_kind["log/eks_pod_logs"] if i.identity["text"].startswith("[kernel]"))
    assert kernel.at is None and kernel.identity["container"] == "ledger" and kernel.identity["pod"] == FAILING_POD


async def test_nodes_and_deployments_carry_readiness(pack: Pack) -> None:
    tools, _ = await every_call(pack.scenario(NODE), BackendMode.FULL)
    served = tools.served_items().values()
    nodes = {i.identity["node"]: i.points for i in served if i.kind == "node"}
    assert nodes["ip-10-20-2-12.ec2.internal"] == ((None, 0.0),)  # Ready Unknown is not ready
    assert nodes["ip-10-20-1-11.ec2.internal"] == ((None, 1.0),)
    deployments = [i for i in served if i.kind == "deploy"]
    assert deployments and all(set(i.identity) == {"namespace", "deployment"} for i in deployments)
    raw = json.loads((pack.root / NODE / "eks_deployments.json").read_text())["deployments"]
    ready = {d["name"]: d["ready"] for d in raw}
    assert {i.identity["deployment"]: i.points for i in deployments} == {n: ((None, r),) for n, r in ready.items()}


async def test_ids_do_not_depend_on_the_order_of_the_files(pack: Pack, tmp_path: Path) -> None:
    def reverse(key: str) -> Any:
        def edit(data: Any) -> None:
            data[key].reverse()

        return edit

    edits: dict[str, Any] = {
        f"{OOM}/eks_pods.json": reverse("pods"),
        f"{OOM}/eks_events.json": reverse("warning_events"),
    }
    edits |= {f"{OOM}/datadog_logs.json": reverse("logs"), f"{OOM}/datadog_monitors.json": reverse("monitors")}
    reordered = edited_pack(tmp_path, edits)
    _, before = await every_call(pack.scenario(OOM), BackendMode.FULL)
    _, after = await every_call(reordered.scenario(OOM), BackendMode.FULL)
    for tool in before:
        assert sorted(before[tool]) == sorted(after[tool]), tool
    assert before["list_pods"] != after["list_pods"]  # the order changed, the ids did not


async def test_pod_log_ids_follow_the_lines_whatever_the_limit(pack: Pack) -> None:
    tools = RcaToolset(pack.scenario(OOM), BackendMode.SELECTIVE)
    whole = await tools.call("get_pod_logs", {"pod": FAILING_POD})
    tail = await tools.call("get_pod_logs", {"pod": FAILING_POD, "limit": 2})
    assert isinstance(whole, dict) and isinstance(tail, dict)
    assert tail["ids"] == whole["ids"][-2:] and len(set(whole["ids"])) == 7
    # The second call served fewer lines, but the run's union keeps the first call's.
    assert sum(i.kind == "log" for i in tools.served_items().values()) == 7


async def test_a_repeated_log_line_is_numbered_by_its_occurrence(pack: Pack, tmp_path: Path) -> None:
    line = "2026-03-10T14:06:12Z INFO ledger-api 4.12.3 starting, heap limit 480Mi"

    def twice(data: Any) -> None:
        data["logs"] += line + "\n"

    edited = edited_pack(tmp_path, {f"{OOM}/eks_pod_logs.json": twice})
    tools = RcaToolset(edited.scenario(OOM), BackendMode.SELECTIVE)
    whole = await tools.call("get_pod_logs", {"pod": FAILING_POD})
    last = await tools.call("get_pod_logs", {"pod": FAILING_POD, "limit": 1})
    assert isinstance(whole, dict) and isinstance(last, dict)
    first, second = whole["ids"][-2:]
    assert whole["lines"][-2:] == [line, line] and first != second
    assert last["ids"] == [second]  # the occurrence is counted over the whole log, not over what a call shows
    items = tools.served_items()
    assert "n" not in items[first].identity and items[second].identity["n"] == "2"
    # The first occurrence keeps the id it has in the unedited log.
    original = await RcaToolset(pack.scenario(OOM), BackendMode.SELECTIVE).call("get_pod_logs", {"pod": FAILING_POD})
    assert isinstance(original, dict) and original["ids"][-1] == first


async def test_temporal_serves_only_what_the_clock_reached(pack: Pack) -> None:
    scenario = pack.scenario(OOM)
    full, _ = await every_call(scenario, BackendMode.FULL)
    early = RcaToolset(scenario, BackendMode.TEMPORAL)
    clock = early.clock
    assert clock is not None
    # The dated sources first, while the clock is at the alert's start.
    for tool, args in (("get_events", {}), ("get_pod_logs", {"pod": FAILING_POD}), ("search_logs", {})):
        await early.call(tool, args)
    full_items, early_items = full.served_items(), early.served_items()
    assert set(early_items) < {k for k, i in full_items.items() if i.kind in ("event", "log")}
    held_back = [i for k, i in full_items.items() if k not in early_items and i.kind in ("event", "log")]
    assert {i.source for i in held_back} == {"eks_events", "eks_pod_logs", "datadog_logs"}
    # A held-back line or record is dated after the clock (the clock moved one step per call).
    for item in held_back:
        if item.source != "eks_events":
            assert item.at is not None and item.at > clock
    # Pods are snapshots: the same items on temporal as on full.
    pods = await early.call("list_pods", {})
    assert isinstance(pods, dict)
    assert {p["id"] for p in pods["pods"]} == {k for k, i in full_items.items() if i.kind == "pod"}


async def test_selectors_and_facts_read_the_items(pack: Pack) -> None:
    tools, _ = await every_call(pack.scenario(OOM), BackendMode.FULL)
    served = tools.served_items()
    failing = next(i for i in served.values() if i.kind == "pod" and i.identity["pod"] == FAILING_POD)
    restarts = ItemSelector.model_validate({"kind": "pod", "pod": FAILING_POD.upper(), "shows": ["above"]})
    assert restarts.matches(failing.kind, failing.source, failing.identity)
    assert not restarts.matches("pod", "eks_pods", {"namespace": "payments", "pod": SIBLING})
    assert check_fact(Citation(item=failing.id, fact=FactKind.ABOVE, value=3), failing) is None
    assert check_fact(Citation(item=failing.id, fact=FactKind.BELOW, value=3), failing) is not None
    oom = ItemSelector.model_validate({"kind": "log", "text": "out of memory"})
    matching = [i for i in served.values() if oom.matches(i.kind, i.source, i.identity)]
    assert {i.source for i in matching} == {"eks_pod_logs"} and len(matching) == 1
    backoff = ItemSelector.model_validate({"kind": "event", "reason": "backoff", "object": f"Pod/{FAILING_POD}"})
    (event,) = [i for i in served.values() if backoff.matches(i.kind, i.source, i.identity)]
    assert check_fact(Citation(item=event.id, fact=FactKind.ABOVE, value=10), event) is None
    # A monitor in Alert is 1: above 0.5 holds.
    alerting = next(i for i in served.values() if i.kind == "monitor" and i.points == ((None, 1.0),))
    assert check_fact(Citation(item=alerting.id, fact=FactKind.ABOVE, value=0.5), alerting) is None


async def test_a_monitor_without_data_has_no_point(pack: Pack, tmp_path: Path) -> None:
    def no_data(data: Any) -> None:
        data["monitors"][0]["overall_state"] = "No Data"

    edited = edited_pack(tmp_path, {f"{OOM}/datadog_monitors.json": no_data})
    result = await RcaToolset(edited.scenario(OOM), BackendMode.FULL).call("query_monitors", {})
    assert isinstance(result, dict)
    record = next(m for m in result["monitors"] if m["overall_state"] == "No Data")
    item = {i.id: i for i in server_factory(DOMAIN)(edited.scenario(OOM)).items()}[record["id"]]
    # Unknown is not zero: no value to be above or below; the monitor was served all the same.
    assert item.points == () and check_fact(Citation(item=item.id, fact=FactKind.PRESENT), item) is None
    assert check_fact(Citation(item=item.id, fact=FactKind.BELOW, value=1), item) is not None
    assert record["monitor_id"] == 9101  # Datadog's own number, beside the item's id
