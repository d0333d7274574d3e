"""The Kubernetes domain's failure modes as data: names, categories, aliases, one-line descriptions.

The upstream EKS suite's eleven modes (`reference/original_eks_suite.md` §2.1) plus the ones a Kubernetes SRE
meets beside them (a bad config or secret, a dependency outage); the core adds `healthy` (alias `recovered`).
Aliases are identifiers (blind mode scrubs them from alerts); synonyms are more names an agent may write for a
mode (published with the vocabulary, resolved to the mode, but not identifiers: see `FailureMode.synonyms`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from sredrill.diagnosis import Category
from sredrill.scenarios import FailureMode

__all__ = ["COMPAT_CATEGORIES", "FAILURE_MODES", "KEYWORD_ALIASES"]

_C, _R, _I, _D, _X = (
    Category.CONFIGURATION_ERROR,
    Category.RESOURCE_EXHAUSTION,
    Category.INFRASTRUCTURE,
    Category.DEPENDENCY_FAILURE,
    Category.CODE_DEFECT,
)

FAILURE_MODES: tuple[FailureMode, ...] = (
    FailureMode(
        "crashloop_backoff",
        _X,
        ("crash_loop", "crashloop", "crash_loop_backoff"),
        "a container exits on start, again and again",
        synonyms=("crash_looping", "container_crash_loop"),
    ),
    FailureMode(
        "oom_killed",
        _R,
        ("oomkilled", "out_of_memory", "oom_kill", "memory_limit_exceeded"),
        "a container is killed at its memory limit",
        synonyms=("oom", "memory_exhaustion"),
    ),
    FailureMode(
        "image_pull_backoff",
        _C,
        ("image_pull_failure", "err_image_pull", "imagepullbackoff", "image_not_found"),
        "the kubelet cannot pull the container image",
        synonyms=("image_pull_error", "image_pull_failed"),
    ),
    FailureMode(
        "pending_pod",
        _R,
        ("unschedulable", "unschedulable_pod", "failed_scheduling", "insufficient_capacity"),
        "pods stay Pending: no node can take them",
        synonyms=("pods_pending", "scheduling_failure"),
    ),
    FailureMode(
        "probe_failure",
        _C,
        ("liveness_probe_failure", "readiness_probe_failure", "failing_probe"),
        "liveness or readiness probes fail, so pods restart or leave the service",
        synonyms=("probe_failures", "health_probe_failure"),
    ),
    FailureMode(
        "resource_quota_exceeded",
        _R,
        ("quota_exceeded", "quota_exhaustion", "namespace_quota_exceeded"),
        "the namespace's ResourceQuota refuses new pods",
        synonyms=("quota_limit_reached",),
    ),
    FailureMode(
        "dns_resolution_failure",
        _D,
        ("dns_failure", "coredns_failure", "name_resolution_failure"),
        "names do not resolve in the cluster",
        synonyms=("dns_outage", "dns_error"),
    ),
    FailureMode(
        "node_not_ready",
        _I,
        ("node_failure", "node_down", "node_lost"),
        "a node stops reporting Ready",
        synonyms=("node_notready", "node_unhealthy"),
    ),
    FailureMode(
        "deployment_rollout_stuck",
        _C,
        ("rollout_stuck", "stuck_rollout", "progress_deadline_exceeded", "failed_rollout"),
        "a rollout makes no progress: new pods never become available",
        synonyms=("stalled_rollout", "rollout_stalled"),
    ),
    FailureMode(
        "evicted_pods",
        _R,
        ("pod_eviction", "evicted", "node_pressure_eviction"),
        "the kubelet evicts pods under node pressure",
        synonyms=("pods_evicted",),
    ),
    FailureMode(
        "bad_config",
        _C,
        ("misconfiguration", "missing_secret", "missing_configmap", "bad_secret", "create_container_config_error"),
        "a missing or wrong ConfigMap or Secret stops containers",
        synonyms=("config_error", "invalid_config", "bad_configuration"),
    ),
    FailureMode(
        "dependency_unavailable",
        _D,
        ("downstream_outage", "upstream_dependency_failure", "dependency_down"),
        "a service the workload calls is down",
        synonyms=("dependency_outage", "downstream_unavailable"),
    ),
)
"""In the order the vocabulary lists them (after the core's `healthy`, before `unknown`)."""

KEYWORD_ALIASES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "OOMKilled": ("oom killed", "oom-killed", "out of memory", "oom kill*"),
        "ImagePullBackOff": ("image pull back-off", "image pull backoff", "errimagepull", "failed to pull"),
        "CrashLoopBackOff": ("crash loop", "crashloop", "crash-loop", "back-off restarting"),
        "Unschedulable": ("failedscheduling", "failed scheduling", "cannot be scheduled", "insufficient"),
        "NotReady": ("not ready", "notready"),
    }
)
"""Keyword -> spellings a grader accepts for it: Kubernetes' reason names as people write them."""

COMPAT_CATEGORIES: Mapping[str, tuple[Category, ...]] = MappingProxyType({"dns_resolution_failure": (_D,)})
"""Failure mode -> the categories compatibility grading also accepts for it (DNS is a dependency's failure as much
as the cluster's: the upstream scorer accepts `dependency_failure` beside the key's category)."""
