"""The Kubernetes reference agent: both axes over Kubernetes packs, honest claims, no scenario knowledge.

Each scenario runs on the `full` backend (Axis 1) and the `selective` backend (Axis 2) through a real
`RcaToolset` and K8s evidence server, graded by `grading.grade_diagnosis` as the RCA suite grades it. The packs:
our development scenarios in the upstream layout (`fixtures/k8s_dev`), the other K8s fixtures of the repository
(`tests/fixtures/k8s_small`, `k8s_env`, `eks_layout`: written by others, never seen while the agent was
written), and the built-in `k8s` pack. When a gate fails, the assertion prints the failures.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from sredrill.agents import resolve_agent
from sredrill.agents.k8s_reference import K8sReferenceAgent
from sredrill.agents.k8s_reference.quotes import is_quoted_in, quotes_of
from sredrill.agents.reference import DomainReference
from sredrill.diagnosis import MAX_CITATIONS_PER_CLAIM, MAX_CITED_ITEMS, Citation, FactKind
from sredrill.evidence import BackendMode, RcaToolset
from sredrill.grading import CheckId
from sredrill.grading.facts import check_fact
from sredrill.scenarios import Pack, load_pack
from sredrill.scenarios.domain import domain_of_tools, get_domain
from tests.agents.test_reference_agent import PROMPT, Run, failure_table, run_pack

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
AGENT_PACKAGE = REPO / "src" / "sredrill" / "agents" / "k8s_reference"
DEV = HERE / "fixtures" / "k8s_dev"
REFERENCE = resolve_agent("reference")  # as `sredrill run --agent reference` runs it: the task's domain's agent
OTHERS = [REPO / "tests" / "fixtures" / name for name in ("k8s_small", "k8s_env", "eks_layout")]


def _modes_right(runs: Iterable[Run]) -> list[Run]:
    return [r for r in runs if sorted(r.diagnosis.failure_modes) == sorted(r.scenario.failure_modes)]


@pytest.fixture(scope="module")
def dev() -> Pack:
    return load_pack(str(DEV))


@pytest.fixture(scope="module")
def dev_runs(dev: Pack) -> list[Run]:
    return run_pack(dev, agent=REFERENCE)


@pytest.fixture(scope="module")
def builtin() -> Pack:
    return load_pack("k8s")


def test_every_dev_scenario_passes_both_axes(dev_runs: list[Run]) -> None:
    assert len(dev_runs) == 30
    assert all(r.grade.passed for r in dev_runs), failure_table(dev_runs)


@pytest.mark.parametrize("root", OTHERS, ids=[p.name for p in OTHERS])
def test_the_other_k8s_fixtures_pass_with_their_failure_modes_right(root: Path) -> None:
    # Measured when this was written: every scenario of each fixture passed, both axes (k8s_small 10/10, k8s_env
    # 8/8, eks_layout 28/28). eks_layout stands in for unseen upstream folders: a regression guard, never tuned to.
    if not root.is_dir():
        pytest.skip(f"{root.name} is not in this checkout")
    pack = load_pack(str(root))
    runs = run_pack(pack, agent=REFERENCE)
    wrong = [r for r in runs if r not in _modes_right(runs)]
    assert not wrong, failure_table(wrong) + "".join(
        f"\n  {r.scenario.folder}: {r.diagnosis.root_cause}" for r in wrong
    )
    assert all(r.grade.passed for r in runs), failure_table(runs)


# The development figure on the built-in pack (graded v2: cited items with facts that hold, the keys' decisive
# items, location and refuting items), measured when this was written: 60 of 60 passed (30 per axis), failure
# modes right on all 60. A regression guard at the measured figure: every miss is printed.
MIN_PASS_RATE = 1.0
MIN_MODES_RIGHT = 1.0


@pytest.fixture(scope="module")
def builtin_runs(builtin: Pack) -> list[Run]:
    return run_pack(builtin, agent=REFERENCE)


def test_the_builtin_pack_meets_the_measured_development_figure(builtin_runs: list[Run]) -> None:
    runs = builtin_runs
    passed = sum(r.grade.passed for r in runs)
    assert runs and passed >= MIN_PASS_RATE * len(runs), f"{passed} of {len(runs)} passed\n" + failure_table(runs)
    right = _modes_right(runs)
    assert len(right) >= MIN_MODES_RIGHT * len(runs), failure_table(r for r in runs if r not in right)


def _on(runs: list[Run], folder: str) -> list[Run]:
    found = [r for r in runs if r.scenario.folder.startswith(folder)]
    assert found, folder
    return found


def _ruled(r: Run, hypothesis: str) -> str:
    return next(o.reason for o in r.diagnosis.ruled_out if o.hypothesis == hypothesis)


def test_the_diagnosis_quotes_the_decisive_evidence(builtin_runs: list[Run]) -> None:
    """The root cause quotes what decides it: the dependency's answer, the kernel's message, the resolver's own
    error, the registry's answer, the configuration error; a recovered incident says so and names the change."""
    expect = {
        "022": ["api.seatplan.example answers HTTP 503", "503 Service Unavailable"],
        "028": ["nf_conntrack: table full, dropping packet", "api.faregrid.example answers HTTP 503"],
        "020": ["CoreDNS's queries to its upstream resolver"],
        "008": ["CoreDNS is denied access to the Kubernetes API", "forbidden"],
        "014": ["no match for platform in manifest"],
        "018": ["required key", "exit with code 78"],
        "024": ["during startup", "connection refused", "with no exception or error", "initialDelaySeconds"],
        "015": ["recovered", "OOM kill", "a change came after the last of it"],
    }
    for folder, needles in expect.items():
        for r in _on(builtin_runs, folder):
            text = " ".join([r.diagnosis.root_cause, *r.diagnosis.causal_chain])
            missing = [n for n in needles if n not in text]
            assert not missing, (r.scenario.folder, r.axis, missing, r.diagnosis.root_cause)


def test_a_quote_names_the_record_it_is_clipped_from() -> None:
    record = 'Liveness probe failed: Get "http://10.24.42.194:8080/health": context deadline exceeded'
    assert quotes_of("x (“Liveness probe failed: Get … context deadline exceeded”)") == [
        ["Liveness probe failed: Get", "context deadline exceeded"]
    ]
    (middle,) = quotes_of('the probe fails (“Liveness probe failed: Get "http://10.24.42 … deadline exceeded”)')
    assert is_quoted_in(middle, record)
    (other_pod,) = quotes_of('(“Liveness probe failed: Get "http://10.36.47 … deadline exceeded”)')
    assert not is_quoted_in(other_pod, record)  # another pod's probe: its address differs
    (reordered,) = quotes_of("(“context deadline exceeded … Liveness probe failed”)")
    assert not is_quoted_in(reordered, record)  # the pieces must come in order
    assert quotes_of("a word (“OOMKilled”) and (“…”)") == []  # too short to name one record


def _quoted_records(r: Run) -> list[list[str]]:
    """For each quote of the root cause that names served log records or events, those items."""
    served = r.toolset.served_items()
    texts = {i: str(dict(it.identity).get("text", "")) for i, it in served.items() if it.kind in ("log", "event")}
    named = [[i for i, t in texts.items() if is_quoted_in(pieces, t)] for pieces in quotes_of(r.diagnosis.root_cause)]
    return [items for items in named if items]


@pytest.mark.parametrize("which", ["dev", "builtin"])
def test_every_record_the_root_cause_quotes_is_cited_by_a_claim_backing_a_fault(
    which: str, dev_runs: list[Run], builtin_runs: list[Run]
) -> None:
    """What the conclusion quotes (the panic line, the registry's answer, the resolver's error, what fills a
    node) is cited, in a claim that supports a diagnosed fault, not only in the prose."""
    checked = 0
    for r in dev_runs if which == "dev" else builtin_runs:
        d = r.diagnosis
        if set(d.failure_modes) & {"healthy", "unknown"}:
            continue
        # A claim supports the modes it names, or every diagnosed one when it names none.
        backing = {c.item for claim in d.claims for c in claim.citations}
        for items in _quoted_records(r):
            checked += 1
            assert backing & set(items), (r.scenario.folder, r.axis, items, d.root_cause)
    assert checked >= 10


def test_rule_outs_say_what_evidence_contradicts_each(builtin_runs: list[Run]) -> None:
    for r in _on(builtin_runs, "022"):  # the vendor answers: its name resolves
        assert "api.seatplan.example resolves and answers" in _ruled(r, "DNS failure"), r.axis
    for r in _on(builtin_runs, "020"):  # the name does not resolve, but the service answers its synthetic check
        assert "synthetic check “Synthetics: api.bankpartner.example" in _ruled(r, "dependency down"), r.axis
    for r in _on(builtin_runs, "008"):  # the services it calls serve their own requests
        assert "itself serves requests" in _ruled(r, "dependency down"), r.axis
    for r in _on(builtin_runs, "024"):  # the restarts are the kubelet's: no exception before the SIGTERM
        assert "no exception or error" in _ruled(r, "crash loop"), r.axis


def test_a_fault_in_a_workload_released_with_the_alerted_one_is_a_cause(builtin_runs: list[Run]) -> None:
    for r in _on(builtin_runs, "027"):
        d = r.diagnosis
        assert sorted(d.failure_modes) == ["bad_config", "image_pull_backoff"], r.axis
        assert "one change rolled out both" in d.root_cause and "contact-sync" in d.root_cause, d.root_cause
        # Its warnings are not dismissed as another workload's, and its fault is no rule-out of the alerted one.
        assert not any("contact-sync" in o.hypothesis for o in d.ruled_out), d.ruled_out
        assert not any(o.hypothesis == "bad config" for o in d.ruled_out), d.ruled_out


def test_a_cluster_agents_records_about_the_workloads_pods_are_its_history(tmp_path: Path) -> None:
    """With no Warning event left, the OOM kills an agent reported about the old pods, and the change after the
    last of them, still tell a recovered incident."""
    source = next((REPO / "src" / "sredrill" / "scenarios" / "packs" / "k8s").glob("015-*"))
    folder = tmp_path / "pack" / source.name
    shutil.copytree(source, folder)
    events = json.loads((folder / "eks_events.json").read_text())
    key = "warning_events" if "warning_events" in events else "events"
    events[key] = [e for e in events[key] if e["type"] != "Warning"]
    (folder / "eks_events.json").write_text(json.dumps(events))
    for r in run_pack(load_pack(str(folder.parent)), agent=REFERENCE):
        d = r.diagnosis
        assert d.failure_modes == ["healthy"], d.root_cause
        assert "the OOM kill is history" in d.root_cause and "OOMKilled (exit code 137" in d.root_cause, d.root_cause
        assert "a change came after the last of it" in d.root_cause and "recovered" in d.root_cause, d.root_cause


def _release_copy(tmp_path: Path, *, record: bool, hours_apart: int) -> Pack:
    """The built-in dual release (027) with or without the deploy record naming both deployments, and the
    other deployment's pods created `hours_apart` before the alerted one's."""
    source = next((REPO / "src" / "sredrill" / "scenarios" / "packs" / "k8s").glob("027-*"))
    folder = tmp_path / "pack" / source.name
    shutil.copytree(source, folder)
    logs = json.loads((folder / "datadog_logs.json").read_text())
    if not record:
        logs["logs"] = [r for r in logs["logs"] if "Deployment/contact-sync" not in r["message"]]
    (folder / "datadog_logs.json").write_text(json.dumps(logs))
    pods = json.loads((folder / "eks_pods.json").read_text())
    for p in pods["pods"]:
        if p["name"].startswith("contact-sync-") and hours_apart:
            start = datetime.fromisoformat(p["start_time"]) - timedelta(hours=hours_apart)
            p["start_time"] = start.isoformat().replace("+00:00", "Z")
    (folder / "eks_pods.json").write_text(json.dumps(pods))
    return load_pack(str(folder.parent))


def test_pods_created_together_are_one_release_and_pods_hours_apart_are_not(tmp_path: Path) -> None:
    together = run_pack(_release_copy(tmp_path / "a", record=False, hours_apart=0), agent=REFERENCE)
    for r in together:
        assert sorted(r.diagnosis.failure_modes) == ["bad_config", "image_pull_backoff"], r.diagnosis.root_cause
        assert "created with those of deployment contact-api, in one release" in r.diagnosis.root_cause
    apart = run_pack(_release_copy(tmp_path / "b", record=False, hours_apart=3), agent=REFERENCE)
    for r in apart:
        assert r.diagnosis.failure_modes == ["image_pull_backoff"], r.diagnosis.root_cause
        assert any("contact-sync" in o.hypothesis for o in r.diagnosis.ruled_out), r.diagnosis.ruled_out


def test_another_workload_failing_without_a_link_stays_a_red_herring(dev_runs: list[Run]) -> None:
    for r in _on(dev_runs, "011"):
        assert r.diagnosis.failure_modes == ["healthy"], r.diagnosis.root_cause
        assert any("reports" in o.hypothesis for o in r.diagnosis.ruled_out), r.diagnosis.ruled_out


def test_targets_are_hosts_not_words() -> None:
    from sredrill.agents.k8s_reference.network import targets
    from sredrill.agents.k8s_reference.observations import LogRecord

    def rec(message: str) -> LogRecord:
        return LogRecord(None, "error", "", "", message, {})

    found = targets([
        rec('rates lookup failed: dial tcp: lookup cache.ns.svc.cluster.local on 10.96.0.10:53: i/o timeout'),
        rec("quote request to https://api.vendor.example/v1/quotes failed: 503 Service Unavailable"),
        rec("reserve: POST http://stock.ns.svc.cluster.local:8080/v1: dial tcp 10.1.2.3:8080: connection refused"),
        rec("upstream timed out (110: Connection timed out) while connecting to upstream"),
    ])  # fmt: skip
    assert found[:3] == ["api.vendor.example", "cache.ns.svc.cluster.local", "stock.ns.svc.cluster.local:8080"]
    assert found[3:] == ["10.1.2.3:8080"]  # a bare address comes after every name


def test_on_the_selective_backend_it_passes_the_namespace_and_the_pod(dev_runs: list[Run]) -> None:
    for r in (r for r in dev_runs if r.mode == BackendMode.SELECTIVE):
        calls = {c.name: c.args for c in r.trajectory.tool_calls(verified=True)}
        namespace = r.scenario.metadata.namespace  # type: ignore[attr-defined]
        assert calls["list_pods"].get("namespace") == namespace, r.scenario.folder
        assert calls["get_pod_logs"]["pod"] in {p.name for p in r.scenario.pods}, r.scenario.folder  # type: ignore[attr-defined]


def _grounded(r: Run) -> list[str]:
    """What is wrong with a run's citations, by the rules the grader applies (empty: nothing)."""
    served = r.toolset.served_items()
    d = r.diagnosis
    wrong = []
    cited: set[str] = set()
    for where, entries in [*((f"claim {c.text[:60]!r}", c.citations) for c in d.claims),
                           *((f"ruled out {o.hypothesis!r}", o.citations) for o in d.ruled_out)]:  # fmt: skip
        if len(entries) > MAX_CITATIONS_PER_CLAIM:
            wrong.append(f"{where}: {len(entries)} citations")
        for c in entries:
            item = served.get(c.item)
            why = "never served" if item is None else check_fact(c, item)
            if why is not None:
                wrong.append(f"{where}: {c.describe()}: {why}")
    for claim in d.claims:
        cited |= {c.item for c in claim.citations}
    if len(cited) > MAX_CITED_ITEMS:
        wrong.append(f"the claims cite {len(cited)} distinct items")
    return wrong


@pytest.mark.parametrize("which", ["dev", "builtin"])
def test_every_citation_names_a_served_item_with_a_fact_that_holds_within_the_limits(
    which: str, dev_runs: list[Run], builtin_runs: list[Run]
) -> None:
    for r in dev_runs if which == "dev" else builtin_runs:
        assert not _grounded(r), (r.scenario.folder, r.axis, _grounded(r))
        assert r.grade.checks[CheckId.CITATIONS].passed, (r.scenario.folder, r.grade.checks[CheckId.CITATIONS])
        d = r.diagnosis
        # Every cause is backed by a claim that supports it with a citation; every rule-out cites what refutes it.
        for mode in (m for m in d.failure_modes if m not in ("healthy", "unknown")):
            assert any(c.citations and mode in c.supports for c in d.claims), (r.scenario.folder, mode)
        assert all(o.citations for o in d.ruled_out), (r.scenario.folder, [o.hypothesis for o in d.ruled_out])
        # What the limits leave without an item is told in the report, never claimed uncited.
        assert all(c.citations for c in d.claims), (r.scenario.folder, [c.text for c in d.claims if not c.citations])
        assert all(set(c.supports) <= set(d.failure_modes) for c in d.claims), r.scenario.folder


def test_claims_name_sources_it_read_and_prose_has_no_identifier(dev_runs: list[Run], dev: Pack) -> None:
    identifiers = {i for i in dev.vocabulary.identifiers() if "_" in i}
    for r in dev_runs:
        read = r.toolset.sources_queried()
        for claim in r.diagnosis.claims:
            assert claim.sources and set(claim.sources) <= read, (r.scenario.folder, claim.text)
        d = r.diagnosis
        for text in [d.root_cause, *d.causal_chain, *(c.text for c in d.claims), d.report]:
            words = set(text.lower().replace("-", " ").split())
            assert not words & identifiers, (r.scenario.folder, sorted(words & identifiers))
        assert r.toolset.submitted == r.diagnosis, r.scenario.folder
        assert r.reply.loops == 1 and r.grade.redundant_calls == 0, r.scenario.folder


def test_the_location_is_the_resource_at_fault_as_the_evidence_names_it(builtin_runs: list[Run]) -> None:
    for r in builtin_runs:
        d = r.diagnosis
        if d.failure_modes in (["healthy"], ["unknown"]):
            assert d.location == [], (r.scenario.folder, d.location)
            continue
        said = [v for item in r.toolset.served_items().values() for v in item.identity.values()]
        assert d.location and all(any(place in text for text in said) for place in d.location), (
            r.scenario.folder,
            d.location,
        )
        if "node_not_ready" in d.failure_modes:
            bad = {n.name for n in r.scenario.nodes if n.ready != "True"}  # type: ignore[attr-defined]
            assert bad & set(d.location), (r.scenario.folder, d.location)
        if set(d.failure_modes) <= {"oom_killed", "crashloop_backoff", "image_pull_backoff", "bad_config"}:
            workloads = {x.name for x in r.scenario.deployments}  # type: ignore[attr-defined]
            assert set(d.location) <= workloads, (r.scenario.folder, d.location)


def test_a_fact_is_stated_only_when_it_holds_and_an_item_without_id_is_not_cited() -> None:
    from sredrill.agents.k8s_reference.citing import cite_deployment, cite_node, cite_pod
    from sredrill.agents.k8s_reference.observations import parse_deployments, parse_nodes, parse_pods

    pod = {"name": "a-1", "containers": [{"name": "c", "restart_count": 4}, {"name": "s", "restart_count": 1}]}
    (restarted,) = parse_pods({"pods": [{**pod, "id": "pod-0123456789"}]})
    assert cite_pod(restarted) == Citation(item="pod-0123456789", fact=FactKind.ABOVE, value=4)  # 5 restarts
    (quiet,) = parse_pods({"pods": [{"name": "a-2", "id": "pod-abcdefabcd", "containers": [{"name": "c"}]}]})
    assert cite_pod(quiet) == Citation(item="pod-abcdefabcd", fact=FactKind.BELOW, value=1)
    (unnamed,) = parse_pods({"pods": [pod]})  # an older server: no id, nothing to cite
    assert cite_pod(unnamed) is None
    (bad,) = parse_pods({"pods": [{**pod, "id": "Pod 1"}]})
    assert cite_pod(bad) is None
    short, full = parse_deployments({"deployments": [
        {"name": "a", "id": "deploy-0000000001", "desired": 3, "ready": 1},
        {"name": "b", "id": "deploy-0000000002", "desired": 2, "ready": 2},
    ]})  # fmt: skip
    assert cite_deployment(short) == Citation(item="deploy-0000000001", fact=FactKind.BELOW, value=2)
    assert cite_deployment(full) == Citation(item="deploy-0000000002", fact=FactKind.ABOVE, value=1)
    down, up = parse_nodes({"nodes": [{"name": "n1", "id": "node-000000000a", "ready": "False"},
                                      {"name": "n2", "id": "node-000000000b", "ready": True}]})  # fmt: skip
    assert cite_node(down) == Citation(item="node-000000000a", fact=FactKind.BELOW, value=0.5)
    assert cite_node(up) == Citation(item="node-000000000b", fact=FactKind.ABOVE, value=0.5)


def test_a_pod_logs_ids_name_its_lines_only_when_they_are_parallel() -> None:
    from sredrill.agents.k8s_reference.observations import parse_pod_log

    lines = ["2024-05-01T10:00:00Z INFO starting", "ready"]
    log = parse_pod_log({"pod": "a-1", "lines": lines, "ids": ["log-0000000001", "log-0000000002"]})
    assert log is not None and [r.ref for r in log.lines] == ["log-0000000001", "log-0000000002"]
    skewed = parse_pod_log({"pod": "a-1", "lines": lines, "ids": ["log-0000000001"]})
    assert skewed is not None and [r.ref for r in skewed.lines] == [None, None]


def test_a_dual_fault_names_both_and_every_single_fault_names_one(dev_runs: list[Run]) -> None:
    for r in dev_runs:
        if len(r.scenario.failure_modes) > 1:
            assert "independent faults" in r.diagnosis.root_cause, r.diagnosis.root_cause
        else:
            assert len(r.diagnosis.failure_modes) == 1, (r.scenario.folder, r.diagnosis.failure_modes)


def test_it_is_deterministic(dev: Pack, dev_runs: list[Run]) -> None:
    again = run_pack(dev, modes=(BackendMode.FULL,), agent=REFERENCE)
    first = [r.diagnosis.model_dump() for r in dev_runs if r.mode == BackendMode.FULL]
    assert [r.diagnosis.model_dump() for r in again] == first


def test_reference_runs_the_k8s_agent_on_k8s_tasks_and_the_named_spec_resolves(dev: Pack) -> None:
    from sredrill.agents import Task

    agent = resolve_agent("reference")
    assert isinstance(agent, DomainReference)
    toolset = RcaToolset(dev.scenarios[0], BackendMode.FULL, vocabulary=dev.vocabulary)
    task = Task(run_id="r", prompt=PROMPT, alert=toolset.alert, tools=toolset.specs())
    assert isinstance(agent.agent_for(task), K8sReferenceAgent)
    named = resolve_agent("k8s-reference")
    assert isinstance(named, K8sReferenceAgent) and named.spec == "k8s-reference"


def test_domain_of_tools_names_the_domain_whose_own_tools_are_offered() -> None:
    k8s, rds = get_domain("k8s"), get_domain("rds")
    assert domain_of_tools(k8s.tool_names) is k8s and domain_of_tools(rds.tool_names) is rds
    # One foreign tool beside a domain's own does not change the domain.
    assert domain_of_tools([*k8s.tool_names, rds.tool_names[1]]) is k8s
    assert domain_of_tools(["get_alert", "submit_diagnosis"]) is None and domain_of_tools([]) is None


# -- the guard: no scenario knowledge in the agent (STYLE #39) ------------------------------------------------

# Kubernetes' own namespaces are Kubernetes knowledge, not a scenario's.
_KUBERNETES_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
_MIN_LINE = 24  # shorter log texts are words any log has ("GET /healthz 200")
_MIN_NAME = 10


def _pack_secrets(pack: Pack) -> dict[str, str]:
    """Strings of the pack's scenarios: folder names, slugs, pod, deployment, node and namespace names, log lines."""
    secrets: dict[str, str] = {}

    def add(text: str | None, why: str, *, short: bool = False) -> None:
        text = " ".join((text or "").lower().split())
        if not text or text in _KUBERNETES_NAMESPACES:
            return
        # A name that is a plain English word (a namespace `claims`, a deployment `search`) says nothing about a
        # scenario when code uses the word; a name shaped like an identifier (`ledger-api`, `ip-10-0-1-2…`) does.
        if short and not (re.search(r"[-0-9]", text) or len(text) >= _MIN_NAME):
            return
        if short or len(text) >= _MIN_LINE:
            secrets[text] = why

    for s in pack.scenarios:
        add(s.folder, f"{s.folder}: folder name", short=True)
        if s.folder[4:].count("-") >= 2:
            add(s.folder[4:], f"{s.folder}: slug", short=True)
        meta = s.metadata
        for key in ("namespace", "workload_name", "cluster_name"):
            add(getattr(meta, key, None), f"{s.folder}: {key}", short=True)
        for p in s.pods:  # type: ignore[attr-defined]
            add(p.name, f"{s.folder}: pod name", short=True)
            add(p.namespace, f"{s.folder}: namespace", short=True)
            add(p.node_name if p.node_name != "unscheduled" else None, f"{s.folder}: node name", short=True)
        for d in s.deployments:  # type: ignore[attr-defined]
            add(d.name, f"{s.folder}: deployment name", short=True)
        for n in s.nodes:  # type: ignore[attr-defined]
            add(n.name, f"{s.folder}: node name", short=True)
        for r in s.datadog_logs:  # type: ignore[attr-defined]
            add(r.message, f"{s.folder}: Datadog log line")
        if s.pod_logs is not None:  # type: ignore[attr-defined]
            for line in s.pod_logs.logs.splitlines():  # type: ignore[attr-defined]
                add(line, f"{s.folder}: pod log line")
    return secrets


def _spelled(needle: str, text: str) -> bool:
    """The needle as a whole name or phrase of the text (`web-api` is not in `web-api-gateway`)."""
    return re.search(rf"(?<![a-z0-9_-]){re.escape(needle)}(?![a-z0-9_-])", text) is not None


def _agent_text() -> list[tuple[str, str]]:
    files = [*sorted(AGENT_PACKAGE.rglob("*.py")), AGENT_PACKAGE.parent / "baselines.py"]
    assert files
    return [(path.name, " ".join(path.read_text().lower().split())) for path in files]


@pytest.mark.parametrize("source", ["k8s", str(DEV), *map(str, OTHERS)], ids=["k8s", "k8s_dev", "k8s_small",
                                                                             "k8s_env", "eks_layout"])  # fmt: skip
def test_the_agent_holds_no_scenario_knowledge(source: str) -> None:
    if not Path(source).is_dir() and source != "k8s":
        pytest.skip(f"{source} is not in this checkout")
    pack = load_pack(source)
    secrets = _pack_secrets(pack)
    assert len(secrets) > 2 * len(pack.scenarios)  # the guard has something to look for
    hits = [f"{name}: {why}: {needle!r}" for name, text in _agent_text() for needle, why in secrets.items()
            if _spelled(needle, text)]  # fmt: skip
    assert not hits, "scenario knowledge in the K8s reference agent:\n" + "\n".join(hits)


def test_the_guard_catches_a_planted_pod_name_and_log_line(builtin: Pack) -> None:
    s = next(s for s in builtin.scenarios if s.pods and s.datadog_logs)  # type: ignore[attr-defined]
    line = next(r.message for r in s.datadog_logs if len(r.message) >= _MIN_LINE)  # type: ignore[attr-defined]
    planted = f'POD = "{s.pods[0].name}"\nLINE = "{line}"'  # type: ignore[attr-defined]
    text = " ".join(planted.lower().split())
    found = [why for needle, why in _pack_secrets(builtin).items() if _spelled(needle, text)]
    assert any("pod name" in w for w in found) and any("log line" in w for w in found), found
