"""The Kubernetes domain's evidence views (`domains/k8s/views.py`): each builds for every scenario of the test pack,
with the rows the UI shows, and the UI's evidence section renders them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sredrill.domains.k8s import DOMAIN
from sredrill.scenarios import Pack
from sredrill.scenarios.domain import View
from sredrill.server.ui.evidence import evidence_html

from .conftest import FAILING_POD, IMAGE, NODE, OLD, OOM


def view(pack: Pack, folder: str, title: str) -> View:
    spec = next(v for v in DOMAIN.views if v.title == title)
    return spec.build(pack.scenario(folder))


def test_every_view_builds_for_every_scenario(pack: Pack) -> None:
    assert [v.source for v in DOMAIN.views] == list(DOMAIN.source_names)
    for scenario in pack.scenarios:
        for spec in DOMAIN.views:
            built = spec.build(scenario)
            assert built.kind in ("table", "timeline", "text")
            assert all(len(row) == len(built.columns) for row in built.rows)


def test_the_pods_table(pack: Pack) -> None:
    pods = view(pack, OOM, "Pods")
    assert pods.columns == ("pod", "container", "phase", "node", "restarts", "state / reason", "last termination")
    assert pods.rows[0] == (
        FAILING_POD,
        "ledger",
        "Running",
        "ip-10-20-1-11.ec2.internal",
        "6",
        "waiting (CrashLoopBackOff)",
        "OOMKilled, exit 137, at 2026-03-10T14:04:10Z",
    )
    assert pods.rows[1][1:] == ("istio-proxy", "Running", "ip-10-20-1-11.ec2.internal", "0", "running", "")
    assert view(pack, OLD, "Pods").rows[2][4:] == ("4", "running (Error)", "Error, exit 1")


def test_the_events_timeline(pack: Pack) -> None:
    events = view(pack, IMAGE, "Kubernetes events")
    assert events.kind == "timeline" and [e[0] for e in events.events] == sorted(e[0] for e in events.events)
    moment, text = events.events[1]
    assert moment == datetime(2026, 3, 10, 13, 52, 40, tzinfo=UTC)
    assert text.startswith("Warning Failed Pod/ledger-api-6f4c8b9d77-m2x8r (×6, since 2026-03-10 13:30:12): Failed")


def test_the_deployments_nodes_and_monitors_tables(pack: Pack) -> None:
    assert view(pack, IMAGE, "Deployments").rows == (
        ("ledger-api", "2/3", "2", "1", "1", "5", "registry.example.internal/ledger-api:4.13.0", "degraded"),
    )
    nodes = view(pack, NODE, "Nodes").rows
    assert nodes[1][:2] == ("ip-10-20-2-12.ec2.internal", "Unknown") and nodes[0][2:4] == ("", "3920m / 4")
    monitors = view(pack, OOM, "Datadog monitors").rows
    assert [(m[0], m[1]) for m in monitors][1:] == [
        ("ledger-api container restarts", "Alert"),
        ("ledger-api memory usage", "Warn"),
    ]


def test_the_pod_log_and_datadog_logs(pack: Pack) -> None:
    log = view(pack, OOM, "Pod log")
    assert log.kind == "text" and log.title == f"Pod log: {FAILING_POD} (ledger)" and "[kernel]" in log.text
    assert view(pack, OLD, "Pod log").text == ""
    logs = view(pack, OOM, "Datadog logs")
    assert logs.rows[2][:3] == ("2026-03-10 14:04:10", "error", "kubelet")


@pytest.mark.parametrize("folder", [OOM, NODE])
def test_the_ui_renders_the_views_of_the_sources_a_scenario_has(pack: Pack, folder: str) -> None:
    html = evidence_html(pack.scenario(folder))
    for title in ("Pods", "Kubernetes events", "Deployments", "Nodes", "Datadog logs", "Datadog monitors"):
        assert f"<h3>{title}</h3>" in html
    assert ("Pod log: " in html) is (folder == OOM)
    assert ("OOMKilled, exit 137" in html) is (folder == OOM)
    assert ("<td>Unknown</td>" in html) is (folder == NODE)
