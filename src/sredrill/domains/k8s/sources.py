"""The Kubernetes domain's evidence sources: how each one's file is read from a scenario folder.

Each source is one `<source>.json` file (`eks_pods.json`, …), taken from the scenario's folder, else from its
`base:` folder, and read only when `available_evidence` lists the source (`reference/original_eks_suite.md` §1.2).
Each loader returns a `SourceData` whose attributes are what the domain's own code reads (`scenario.pods`, …).
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import TypeVar

from pydantic import BaseModel

from sredrill.scenarios import SourceData
from sredrill.scenarios.domain import SourceFiles

from .metadata import EvidenceSource
from .records import DatadogLogs, DatadogMonitors, Deployments, K8sEvents, NodeHealth, PodLogs, Pods

__all__ = ["ATTRIBUTE_DEFAULTS", "LOADERS", "file_of"]

M = TypeVar("M", bound=BaseModel)

ATTRIBUTE_DEFAULTS = MappingProxyType(
    {
        "pods": (),
        "k8s_events": (),
        "deployments": (),
        "nodes": (),
        "pod_logs": None,
        "datadog_logs": (),
        "monitors": (),
    }
)
"""The scenario attributes of a source the scenario does not have (no pods file: `scenario.pods == ()`)."""


def file_of(source: EvidenceSource) -> str:
    """The file a source is read from (`eks_pods.json`)."""
    return f"{source.value}.json"


def _read(files: SourceFiles, model: type[M], source: EvidenceSource) -> M:
    file = file_of(source)
    folder = next((f for f in files.folders if files.exists(f, file)), None)
    if folder is None:
        raise files.missing(file, source.value)
    return files.read(model, file, folder)


def load_pods(files: SourceFiles) -> SourceData:
    data = _read(files, Pods, EvidenceSource.PODS)
    return SourceData(value=data, attributes=MappingProxyType({"pods": tuple(data.pods)}))


def load_events(files: SourceFiles) -> SourceData:
    data = _read(files, K8sEvents, EvidenceSource.EVENTS)
    events = tuple(sorted(data.warning_events, key=lambda e: e.last_time))
    return SourceData(value=data, attributes=MappingProxyType({"k8s_events": events}))


def load_deployments(files: SourceFiles) -> SourceData:
    data = _read(files, Deployments, EvidenceSource.DEPLOYMENTS)
    return SourceData(value=data, attributes=MappingProxyType({"deployments": tuple(data.deployments)}))


def load_nodes(files: SourceFiles) -> SourceData:
    data = _read(files, NodeHealth, EvidenceSource.NODE_HEALTH)
    return SourceData(value=data, attributes=MappingProxyType({"nodes": tuple(data.nodes)}))


def load_pod_logs(files: SourceFiles) -> SourceData:
    data = _read(files, PodLogs, EvidenceSource.POD_LOGS)
    return SourceData(value=data, attributes=MappingProxyType({"pod_logs": data}))


def load_datadog_logs(files: SourceFiles) -> SourceData:
    data = _read(files, DatadogLogs, EvidenceSource.DATADOG_LOGS)
    logs = tuple(sorted(data.logs, key=lambda r: r.timestamp))
    return SourceData(value=data, attributes=MappingProxyType({"datadog_logs": logs}))


def load_monitors(files: SourceFiles) -> SourceData:
    data = _read(files, DatadogMonitors, EvidenceSource.DATADOG_MONITORS)
    return SourceData(value=data, attributes=MappingProxyType({"monitors": tuple(data.monitors)}))


LOADERS: dict[EvidenceSource, Callable[[SourceFiles], SourceData]] = {
    EvidenceSource.PODS: load_pods,
    EvidenceSource.EVENTS: load_events,
    EvidenceSource.DEPLOYMENTS: load_deployments,
    EvidenceSource.NODE_HEALTH: load_nodes,
    EvidenceSource.POD_LOGS: load_pod_logs,
    EvidenceSource.DATADOG_LOGS: load_datadog_logs,
    EvidenceSource.DATADOG_MONITORS: load_monitors,
}
