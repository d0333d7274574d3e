"""The Kubernetes domain: workload incidents on a cluster, in the upstream EKS suite's file layout.

`DOMAIN` is the whole declaration (`scenarios.domain.Domain`): the evidence sources (pods, events, deployments,
node health, pod logs, Datadog logs and monitors), the tools that read them, the failure-mode vocabulary, the
prompt, the lint and blinding rules, the evidence views, the server that answers the tools, and the reference
agent. Folders in the upstream layout (`reference/original_eks_suite.md`) load unmodified.
"""

from __future__ import annotations

from sredrill.scenarios.domain import BlindRules, Domain, EvidenceSourceDecl

from .lint import RULES, visible_text
from .metadata import EvidenceSource, K8sMetadata
from .sources import ATTRIBUTE_DEFAULTS, LOADERS, file_of
from .tools import TOOLS
from .views import VIEWS
from .vocabulary import COMPAT_CATEGORIES, FAILURE_MODES, KEYWORD_ALIASES

__all__ = [
    "ATTRIBUTE_DEFAULTS",
    "COMPAT_CATEGORIES",
    "DOMAIN",
    "FAILURE_MODES",
    "KEYWORD_ALIASES",
    "LOADERS",
    "PROMPT",
    "RULES",
    "SOURCES",
    "TOOLS",
    "VIEWS",
    "BlindRules",
    "Domain",
    "EvidenceSource",
    "EvidenceSourceDecl",
    "K8sMetadata",
    "file_of",
    "visible_text",
]

PROMPT = (
    "An alert fired on a workload running on Kubernetes. Investigate it with the tools you have: the alert, the "
    "pods and their containers, Kubernetes events, pod logs, deployments and their rollouts, node health, and "
    "the Datadog logs and monitors. Find the root cause, rule out the alternatives the evidence contradicts, "
    "cite the evidence for each claim, and submit a diagnosis."
)
"""What every agent is asked; nothing in it names a scenario, its folder or its failure mode (blind mode)."""

_S = EvidenceSource
_DESCRIPTIONS: dict[EvidenceSource, tuple[str, tuple[str, ...]]] = {
    _S.PODS: ("The workload's pods, their containers' states, restarts and conditions", ("pods", "eks", "kubectl")),
    _S.EVENTS: ("Kubernetes events of the namespace and its nodes", ("events", "k8s_events", "kubernetes_events")),
    _S.DEPLOYMENTS: ("Deployments and their replica counts", ("deployments", "rollout")),
    _S.NODE_HEALTH: ("The cluster's nodes and their conditions", ("nodes", "node_health")),
    _S.POD_LOGS: ("One pod's container log", ("pod_logs", "container_logs")),
    _S.DATADOG_LOGS: ("Datadog logs of the workload and the cluster", ("datadog", "logs")),
    _S.DATADOG_MONITORS: ("Datadog monitors and their states", ("monitors", "datadog_monitor")),
}

SOURCES: tuple[EvidenceSourceDecl, ...] = tuple(
    EvidenceSourceDecl(source.value, text, (file_of(source),), LOADERS[source], citations=citations)
    for source, (text, citations) in _DESCRIPTIONS.items()
)

DOMAIN = Domain(
    name="k8s",
    title="Kubernetes",
    metadata=K8sMetadata,
    sources=SOURCES,
    tools=TOOLS,
    failure_modes=FAILURE_MODES,
    prompt=PROMPT,
    server="sredrill.domains.k8s.serve:K8sEvidence",
    reference_agent="k8s-reference",
    resource_kinds=("pod", "node", "deployment", "container", "namespace"),
    lint=RULES,
    visible_text=visible_text,
    blinding=BlindRules(answer_keys=("k8s_failure_mode", "error")),
    views=VIEWS,
    attributes=ATTRIBUTE_DEFAULTS,
    keyword_aliases=KEYWORD_ALIASES,
    compat_categories=COMPAT_CATEGORIES,
)
"""The Kubernetes domain, registered as `k8s` in `scenarios.domain.DOMAINS`."""
