"""The Kubernetes domain's `scenario.yml` keys and its evidence sources (the file stems).

The keys are the upstream EKS suite's (`reference/original_eks_suite.md` §2.2), so its folders load unmodified.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field

from sredrill.scenarios import ScenarioMetadata

__all__ = ["EvidenceSource", "K8sMetadata"]


class EvidenceSource(StrEnum):
    """The evidence files of a Kubernetes scenario, by file stem."""

    PODS = "eks_pods"
    EVENTS = "eks_events"
    DEPLOYMENTS = "eks_deployments"
    NODE_HEALTH = "eks_node_health"
    POD_LOGS = "eks_pod_logs"
    DATADOG_LOGS = "datadog_logs"
    DATADOG_MONITORS = "datadog_monitors"


class K8sMetadata(ScenarioMetadata):
    """`scenario.yml` of a Kubernetes scenario: the shared keys plus the cluster's and the workload's."""

    engine: Literal["eks", "gke", "aks", "kubernetes"]
    cluster_name: str = Field(min_length=1)
    namespace: str = Field(min_length=1)
    workload_type: Literal["deployment", "statefulset", "daemonset", "job", "cronjob", "replicaset"]
    workload_name: str = Field(min_length=1)
    region: str = Field(min_length=1)
    available_evidence: list[EvidenceSource] = Field(min_length=1)
    """The evidence sources of the scenario."""
