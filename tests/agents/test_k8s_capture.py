"""Blind mode on the Kubernetes domain (issue 15, item 4): every byte a `py:` and a `cmd:` agent receives over
every K8s pack (the upstream-layout fixture and each built-in K8s pack), on every backend, carries no answer.

An explorer agent asks for everything: the alert, each tool with its widest arguments, and the log of every pod
it hears of (every container, current and previous). What it received (the Task, and for `cmd:` its argv, the
environment sredrill gave it and the HTTP tool listing; every tool answer) must contain no leak needle
(`leak_needles`: ids, folder, snake identifiers of the vocabulary, reference sentences); the alert must not name
a failure mode or category in any word form (`find_leaks(vocabulary=)`) and must have no `error` or
`k8s_failure_mode` key; and no blinded alert field's presence or emptiness separates healthy from faulty.
Evidence keeps its native reasons (`OOMKilled`): the tool answers are checked for literal needles only.

The vocabulary is published (issue 16): the prompt ends with it and `submit_diagnosis` lists it. That text is the
pack's, byte-identical for every scenario, so it tells nothing about one: each is checked to be the published text
and the same across the pack, and everything else an agent receives is checked without it.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import shlex
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from sredrill.agents import Task
from sredrill.diagnosis import Category
from sredrill.engine import RunOptions, Settings, run_packs
from sredrill.engine.plan import IsolationRequest
from sredrill.evidence import tool_specs
from sredrill.results import RunReport, TestResult
from sredrill.scenarios import Pack, Scenario, builtin_pack_names, find_leaks, get_domain, leak_needles, load_pack
from sredrill.scenarios.blind import predictive_fields
from sredrill.trajectory import ToolError

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "eks_layout"
BUILTIN_K8S = [name for name in builtin_pack_names() if load_pack(name).domain == "k8s"]
PACKS: dict[str, Pack] = {p.name: p for p in (load_pack(FIXTURE), *(load_pack(n) for n in BUILTIN_K8S))}
MODES = ("full", "selective", "temporal")
ANSWER_KEYS = ("k8s_failure_mode", "error")  # upstream's: the failure mode (or a decoy), "" exactly when healthy
Answer = dict[str, Any]


def explore() -> Generator[tuple[str, dict[str, Any]], Answer, None]:
    """The calls of an agent that asks for everything. A generator: yields `(tool, arguments)` and is sent each
    answer (a tool error as `{"tool_error": code, "message": …}`). The `cmd:` agent runs this same source."""
    yield "get_alert", {}
    pods = yield "list_pods", {"namespace": "*"}
    events = yield "get_events", {"namespace": "*"}
    yield "list_deployments", {"namespace": "*"}
    yield "get_node_health", {}
    logs = yield "search_logs", {"limit": 500}
    yield "query_monitors", {}
    containers: dict[str, list[Any]] = {}
    for pod in pods.get("pods", []):
        containers[pod["name"]] = [c["name"] for c in pod.get("containers", [])] or [None]
    heard = [e.get("involved_object", "") for e in events.get("events", [])]
    heard += ["Pod/" + t.split(":", 1)[1] for r in logs.get("logs", []) for t in r.get("tags", []) if "kube_pod:" in t]
    for kind, _, name in (str(h).partition("/") for h in heard):
        if kind == "Pod" and name:
            containers.setdefault(name, [None])
    for pod, names in containers.items():
        for container in names:
            for previous in (False, True):
                yield "get_pod_logs", {"pod": pod, "container": container, "limit": 1000, "previous": previous}


async def py_explorer(task: Task) -> dict[str, Any]:
    """The `py:` agent: runs `explore` through `task.call_tool` and writes what it received to `$CAPTURE_DIR`."""
    calls: list[Any] = []
    plan, answer = explore(), None
    while True:
        try:
            name, args = plan.send(answer) if answer is not None else next(plan)
        except StopIteration:
            break
        try:
            answer = await task.call_tool(name, **args)
        except ToolError as exc:
            answer = {"tool_error": exc.code, "message": exc.message}
        calls.append([name, args, answer])
    seen = {
        "task": task.model_dump(mode="json", exclude={"tools"}),
        "tools": [t.model_dump(mode="json") for t in task.tools],
        "calls": calls,
    }
    Path(os.environ["CAPTURE_DIR"], task.run_id + ".json").write_text(json.dumps(seen))
    return {"root_cause": "nothing conclusive", "failure_modes": ["unknown"], "category": "unknown"}


CMD_EXPLORER = (
    """
import json, os, sys, urllib.error, urllib.request

def request(method, path, args=None):
    req = urllib.request.Request(
        os.environ["SREDRILL_TOOLS_URL"] + path, method=method,
        data=None if args is None else json.dumps(args).encode(),
        headers={"Authorization": "Bearer " + os.environ["SREDRILL_RUN_TOKEN"], "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return json.load(resp)
    except urllib.error.HTTPError as err:
        return json.load(err)

"""
    + inspect.getsource(explore)
    .replace("Generator[tuple[str, dict[str, Any]], Answer, None]", "object")
    .replace("dict[str, list[Any]]", "dict")
    + """
stdin = sys.stdin.read()
task = json.loads(stdin)
calls, plan, answer = [], explore(), None
while True:
    try:
        name, args = plan.send(answer) if answer is not None else next(plan)
    except StopIteration:
        break
    reply = request("POST", "/tools/" + name, args)
    answer = reply["result"] if "result" in reply else {"tool_error": reply["error"]["code"],
                                                         "message": reply["error"]["message"]}
    calls.append([name, args, answer])
seen = {"argv": sys.argv, "env": dict(os.environ), "stdin": stdin, "tools": task.pop("tools"), "task": task,
        "http_tools": request("GET", "/tools")["tools"], "calls": calls}
with open(os.path.join(os.environ["CAPTURE_DIR"], task["run_id"] + ".json"), "w") as f:
    json.dump(seen, f)
print(json.dumps({"kind": "diagnosis", "root_cause": "nothing conclusive", "failure_modes": ["unknown"],
                  "category": "unknown"}))
"""
)


class Collect:
    """A run listener that keeps nothing but the results."""

    def __init__(self) -> None:
        self.results: list[TestResult] = []

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: TestResult) -> None:
        self.results.append(result)

    def on_run_end(self, report: RunReport) -> None: ...


def capture(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    agent: str,
    mode: str,
    *,
    packs: tuple[str, ...] = (),
    blind: bool = True,
) -> dict[str, dict[str, Any]]:
    """Runs the packs (default: every K8s pack) with the explorer on `mode`; returns what it received, by qualified
    scenario id."""
    packs = packs or tuple(PACKS)
    out = tmp_path / "capture"
    out.mkdir()
    monkeypatch.setenv("CAPTURE_DIR", str(out))  # in the parent's environment: not something sredrill sent
    monkeypatch.chdir(tmp_path)  # sys.path and cwd of the `py:` import; no pack is under it
    if agent == "py":
        spec = f"py:{__name__}:py_explorer"
    else:
        script = tmp_path / "explorer.py"
        script.write_text(CMD_EXPLORER)
        spec = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    report = asyncio.run(
        run_packs(
            [str(FIXTURE) if name == FIXTURE.name else name for name in packs],
            settings=Settings(agent=spec),
            options=RunOptions(jobs=2),
            listener=Collect(),
            store=None,
            mode=mode,
            blind=blind,
            # The explorer reads the packs at import and writes to CAPTURE_DIR: the bytes sent are what this test
            # audits, and a sandbox would mask the packs it checks them against (tests/e2e/test_isolation_oracles.py
            # is where isolation itself is tested).
            isolation=IsolationRequest(isolation="process", agent_env=("CAPTURE_DIR",)),
        )
    )
    errored = {r.id: r.failure_reason for r in report.results if r.status == "errored"}
    assert errored == {}
    by_run = {r.agent_run_id: r.id.split("#")[0] for r in report.results}
    seen = {by_run[p.stem]: json.loads(p.read_text()) for p in out.glob("*.json")}
    assert sorted(seen) == sorted(s.qualified_id for name in packs for s in PACKS[name].scenarios)
    return seen


def scenario_of(qualified_id: str) -> tuple[Pack, Scenario]:
    pack_name, _, folder = qualified_id.partition("/")
    pack = PACKS[pack_name]
    return pack, pack.scenario(folder)


def keys(value: Any) -> Iterator[str]:
    """Every key of a JSON value, at any depth."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from keys(v)


def sent_env(env: dict[str, str]) -> dict[str, str]:
    """The variables sredrill set or changed for the agent (the rest is the test process's own environment)."""
    return {k: v for k, v in env.items() if os.environ.get(k) != v}


def test_the_packs_under_test_are_kubernetes_and_alert_with_the_upstream_answer_keys() -> None:
    assert "k8s" in BUILTIN_K8S  # H5's pack; the parametrisation covers whatever other K8s packs exist
    fixture = PACKS[FIXTURE.name]
    raw = [s.alert.common_annotations for s in fixture.scenarios]
    # The fixture's alerts carry what blinding must remove: the mode (decoys in the healthy ones) and `error`.
    assert sum("k8s_failure_mode" in a for a in raw) == 13 and all("error" in a for a in raw)
    # The check can fail: the raw alerts name their mode (some in Title or camel case too).
    leaking = [
        s.folder
        for s in fixture.scenarios
        if find_leaks(s.alert.model_dump_json(by_alias=True), (), vocabulary=fixture.vocabulary)
    ]
    assert len(leaking) >= 13, leaking


def audit(seen: dict[str, dict[str, Any]], agent: str) -> list[str]:
    """Every leak in what the explorer received, one line each; asserts what else each capture must hold."""
    leaks: list[str] = []
    listings: dict[str, set[str]] = {}
    prompts: dict[str, set[str]] = {}
    for qualified_id, got in sorted(seen.items()):
        pack, scenario = scenario_of(qualified_id)
        needles = leak_needles(scenario, pack.vocabulary)
        alert = got["task"]["alert"]
        answers = {name: answer for name, _, answer in got["calls"]}
        assert answers["get_alert"] == alert  # the alert in the Task is what get_alert answers
        # The alert: no needle, no failure-mode name in any word form, none of upstream's answer keys.
        for found in find_leaks(json.dumps(alert), needles, vocabulary=pack.vocabulary):
            leaks.append(f"{qualified_id} alert: {found!r} in {json.dumps(alert)}")
        leaks += [f"{qualified_id} alert: key {k!r}" for k in keys(alert) if k in ANSWER_KEYS]
        # The prompt: the domain's, then the pack's published vocabulary (the one text that names modes).
        prompt = got["task"]["prompt"]
        prompts.setdefault(pack.name, set()).add(prompt)
        catalogue = pack.vocabulary.catalogue()
        assert prompt == get_domain(pack.domain).task_prompt(pack.vocabulary), qualified_id
        own = prompt.removesuffix(catalogue)
        leaks += [f"{qualified_id} prompt: {found!r}" for found in find_leaks(own, needles)]
        # Everything else: no literal needle (evidence may say OOMKilled, the cluster's own word).
        everything = [{k: v for k, v in got["task"].items() if k != "prompt"}, got["calls"]]
        if agent == "cmd":
            everything += [got["argv"], sent_env(got["env"])]
            stdin = json.loads(got["stdin"])  # the Task as sent, byte for byte: the catalogue is checked apart
            assert stdin.pop("tools") == got["tools"] and stdin == got["task"]
            assert got["http_tools"] == got["tools"]
            assert set(sent_env(got["env"])) <= {"SREDRILL_RUN_ID", "SREDRILL_TOOLS_URL", "SREDRILL_MCP_URL",
                                                 "SREDRILL_RUN_TOKEN", "SREDRILL_PROCESS_TAG", "TRACEPARENT",
                                                 "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"}  # fmt: skip
        leaks += [f"{qualified_id}: {found!r}" for found in find_leaks(json.dumps(everything), needles)]
        # Every tool answered its widest call (pod logs: an unknown pod or container may be an error).
        failed = {n: a for n, _, a in got["calls"] if "tool_error" in a and n != "get_pod_logs"}
        assert failed == {}, f"{qualified_id}: {failed}"
        listings.setdefault(pack.name, set()).add(json.dumps(got["tools"], sort_keys=True))
        # The listing but submit_diagnosis (whose schema lists the whole vocabulary) names no answer either, and
        # submit_diagnosis is the published one: the pack's vocabulary and how to cite, nothing of the scenario.
        tools = [t for t in got["tools"] if t["name"] != "submit_diagnosis"]
        leaks += [f"{qualified_id} tool listing: {n!r}" for n in find_leaks(json.dumps(tools), needles)]
        (submit,) = [t for t in got["tools"] if t["name"] == "submit_diagnosis"]
        (published,) = [t for t in tool_specs(get_domain(pack.domain), pack.vocabulary) if t.name == submit["name"]]
        assert submit == published.model_dump(mode="json"), qualified_id
        assert catalogue in submit["input_schema"]["properties"]["failure_modes"]["description"]
    # The prompt and the tool listing are each one text for every scenario of a pack: they tell nothing about one.
    assert {name: len(texts) for name, texts in listings.items()} == dict.fromkeys(listings, 1)
    assert {name: len(texts) for name, texts in prompts.items()} == dict.fromkeys(prompts, 1)
    return leaks


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("agent", ["py", "cmd"])
def test_every_byte_an_explorer_receives_carries_no_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str, mode: str
) -> None:
    seen = capture(tmp_path, monkeypatch, agent, mode)
    leaks = audit(seen, agent)
    assert not leaks, "the agent received the answer:\n" + "\n".join(leaks)
    # No field of the alerts sent tells healthy from faulty (the Task's shape, not alert.json's).
    alerts = {qualified_id: got["task"]["alert"] for qualified_id, got in seen.items()}
    assert [line for pack in PACKS.values() for line in separating(pack, alerts)] == []
    # Evidence keeps its native reasons: the OOM scenarios' pods say OOMKilled (the cluster's word, not a leak).
    assert sum("OOMKilled" in json.dumps(got["calls"]) for got in seen.values()) >= 2


def test_the_capture_finds_what_the_raw_alerts_give_away(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The same explorer and checks with blinding off (`--no-blind`): the fixture's alerts name their modes.
    seen = capture(tmp_path, monkeypatch, "cmd", "full", packs=(FIXTURE.name,), blind=False)
    leaks = audit(seen, "cmd")
    assert any("alert: key 'k8s_failure_mode'" in line for line in leaks)
    assert any("alert: key 'error'" in line for line in leaks)
    assert any(line.startswith("eks_layout/001-oom-killed alert: 'crashloop_backoff'") for line in leaks)
    alerts = {qualified_id: got["task"]["alert"] for qualified_id, got in seen.items()}
    pack = PACKS[FIXTURE.name]
    assert f"{pack.name}: annotations.error is non-empty in 0/6 healthy, 8/8 faulty" in separating(pack, alerts)


def present(alert: dict[str, Any]) -> dict[str, bool]:
    """The fields of an alert as the Task carries it, each with whether it is non-empty."""
    out = {k: bool(v) for k, v in alert.items() if k not in ("labels", "annotations", "title", "state")}
    for section in ("labels", "annotations"):
        out.update({f"{section}.{k}": bool(str(v).strip()) for k, v in (alert.get(section) or {}).items()})
    return out


def separating(pack: Pack, alerts: dict[str, dict[str, Any]]) -> list[str]:
    """The fields of the alerts sent (by qualified id) whose presence or emptiness alone tells the pack's healthy
    scenarios from its faulty ones: `predictive_fields`' question, asked of what the agents received."""
    healthy = [present(alerts[s.qualified_id]) for s in pack.scenarios if s.category is Category.HEALTHY]
    faulty = [present(alerts[s.qualified_id]) for s in pack.scenarios if s.category is not Category.HEALTHY]
    out: list[str] = []
    if min(len(healthy), len(faulty)) < 2:  # one of a kind proves nothing
        return out
    for field in sorted({f for alert in healthy + faulty for f in alert}):
        for signal in ("present", "non-empty"):
            h = sum(field in a if signal == "present" else a.get(field, False) for a in healthy)
            x = sum(field in a if signal == "present" else a.get(field, False) for a in faulty)
            if (h, x) in {(len(healthy), 0), (0, len(faulty))}:
                out.append(f"{pack.name}: {field} is {signal} in {h}/{len(healthy)} healthy, {x}/{len(faulty)} faulty")
                break  # a field absent from one side is also empty there: once is enough
    return out


@pytest.mark.parametrize("pack_name", list(PACKS))
def test_no_blinded_alert_field_tells_healthy_from_faulty(pack_name: str) -> None:
    pack = PACKS[pack_name]
    n_healthy = sum(s.category is Category.HEALTHY for s in pack.scenarios)
    assert n_healthy >= 2 and len(pack.scenarios) - n_healthy >= 2, "the check needs 2+ of each kind"
    assert predictive_fields(pack) == []
