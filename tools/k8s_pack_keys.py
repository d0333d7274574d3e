"""The answer keys of the built-in `k8s` pack: one row per scenario, written before any evidence.

`gen_k8s_pack.py` renders each row as the scenario's `scenario.yml` and `answer.yml`; the evidence of each
scenario (`k8s_pack_scenarios*.py`) is written to match its row, never the other way round. Cluster, namespace,
workload and node names, images and numbers are sredrill's own.

Sources are spelled by letter in `evidence` (P pods, E events, D deployments, N node health, L pod logs, G Datadog
logs, M Datadog monitors); a scenario without a letter has no such file (missing evidence).
"""

# ruff: noqa: E501  (a reference answer is one line per claim, as the upstream format has it)
from __future__ import annotations

from dataclasses import dataclass

from sredrill.domains.k8s.vocabulary import FAILURE_MODES

SOURCE_LETTERS = {
    "P": "eks_pods",
    "E": "eks_events",
    "D": "eks_deployments",
    "N": "eks_node_health",
    "L": "eks_pod_logs",
    "G": "datadog_logs",
    "M": "datadog_monitors",
}
CATEGORY = {m.name: m.category.value for m in FAILURE_MODES} | {"healthy": "healthy"}


@dataclass(frozen=True)
class Key:
    """One scenario's ground truth and identity (the `scenario.yml` keys plus the `answer.yml` keys)."""

    folder: str
    engine: str
    cluster: str
    region: str
    namespace: str
    workload: str
    severity: str
    difficulty: int
    modes: tuple[str, ...]
    adversarial: tuple[str, ...]
    evidence: str
    keywords: tuple[str, ...]
    sources: tuple[str, ...]
    trajectory: tuple[str, ...]
    response: str
    ruled_out: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    queries: tuple[str, ...] = ()
    ruling: tuple[str, ...] = ()
    loops: int = 3
    clues: tuple[tuple[str, str], ...] = ()
    """(failure mode, text): log text that shows a mode the pods, events and nodes cannot (a dependency's answer,
    a resolver's error); each becomes a decisive `log` selector. The rest of `decisive` is derived from the
    evidence (`gen_k8s_pack.grounding`)."""
    where: tuple[tuple[str, str], ...] = ()
    """(failure mode, name): where that mode's fault is beyond what the pods, events and nodes name (a
    dependency's host, a resolver's address, a neighbour without limits), added to the derived `location`."""

    @property
    def category(self) -> str:
        return CATEGORY[self.modes[0]]

    @property
    def available_evidence(self) -> list[str]:
        return [SOURCE_LETTERS[c] for c in "PEDNLGM" if c in self.evidence]


def _r(text: str) -> str:
    """A reference answer: the text without the indentation of its source."""
    return "\n".join(line.strip() for line in text.strip().splitlines()) + "\n"


# One row per scenario: its identity on two lines, then its key (kept as written, hence fmt: off).
# fmt: off
KEYS: tuple[Key, ...] = (
    Key(
        "000-healthy-baseline", "eks", "shop-prod-use1", "us-east-1", "storefront", "catalog-api", "info", 0,
        ("healthy",), (), "PEDNGM",
        keywords=("healthy",),
        sources=("eks_pods",),
        trajectory=("list_pods", "list_deployments", "query_monitors"),
        loops=1,
        response=_r("""
            ROOT_CAUSE: No fault: catalog-api and the rest of the storefront namespace are healthy; the notification is the scheduled digest and every monitor reports OK.
            ROOT_CAUSE_CATEGORY: healthy
            FAILURE_MODES: healthy
            VALIDATED_CLAIMS:
            - All four catalog-api pods are Running and Ready and none restarted in the window. [evidence: eks_pods]
            - Every deployment in storefront has all its desired replicas available, and none is in the middle of a rollout. [evidence: eks_deployments]
            - All Datadog monitors of the namespace are OK. [evidence: datadog_monitors]
            - Every node reports Ready without memory, disk or PID pressure. [evidence: eks_node_health]
            NON_VALIDATED_CLAIMS: none
            CAUSAL_CHAIN:
            - scheduled digest -> all monitors OK -> nothing to act on
        """),
    ),
    Key(
        "001-crashloop-startup-panic", "eks", "billing-prod-euw1", "eu-west-1", "billing", "invoice-renderer",
        "critical", 1, ("crashloop_backoff",), ("the release rolled out cleanly; the crash comes after start",),
        "PEDNLGM",
        keywords=("CrashLoopBackOff", "panic"),
        ruled_out=("oom_killed", "image_pull_backoff"),
        forbidden=("oom_killed", "resource_exhaustion"),
        sources=("eks_pods", "eks_pod_logs"),
        trajectory=("list_pods", "get_events", "get_pod_logs"),
        queries=("list_pods", "get_pod_logs"),
        ruling=("exit code",),
        response=_r("""
            ROOT_CAUSE: Release 2.14.0 of invoice-renderer panics about 45 seconds after start (assignment to entry in nil map in the template cache refresh), so every pod restarts and sits in CrashLoopBackOff.
            ROOT_CAUSE_CATEGORY: code_defect
            FAILURE_MODES: crashloop_backoff
            VALIDATED_CLAIMS:
            - All invoice-renderer pods run image 2.14.0 and wait in CrashLoopBackOff after many restarts; the last termination is exit code 2 with reason Error. [evidence: eks_pods]
            - The container log ends with a Go panic, assignment to entry in nil map, raised from the template cache refresh. [evidence: eks_pod_logs]
            - BackOff events for the pods repeat since revision 18 rolled out. [evidence: eks_events]
            NON_VALIDATED_CLAIMS:
            - The refresh path changed in 2.14.0 and writes to a map it never initialised.
            CAUSAL_CHAIN:
            - revision 18 ships 2.14.0 -> the template refresh panics after start -> containers exit with code 2 -> the kubelet backs off restarts -> rendering requests fail
            RULED_OUT:
            - oom killed: the terminations are exit code 2 with reason Error, not OOMKilled, and memory stays far below the limit
            - image pull backoff: the image was pulled and the containers start
        """),
    ),
    Key(
        "002-oom-killed-worker", "eks", "media-prod-usw2", "us-west-2", "media", "thumbnail-worker", "warning", 1,
        ("oom_killed",), ("the pods show the kubelet's back-off after each kill",), "PEDNLGM",
        keywords=("OOMKilled", "memory limit"),
        ruled_out=("evicted_pods", "crashloop_backoff"),
        forbidden=("crashloop_backoff", "code_defect"),
        sources=("eks_pods",),
        trajectory=("list_pods", "get_events", "get_node_health"),
        queries=("list_pods", "get_node_health"),
        ruling=("pressure",),
        response=_r("""
            ROOT_CAUSE: thumbnail-worker containers exceed their 512Mi memory limit while decoding very large uploaded images and are OOMKilled (exit code 137), so the pods restart again and again.
            ROOT_CAUSE_CATEGORY: resource_exhaustion
            FAILURE_MODES: oom_killed
            VALIDATED_CLAIMS:
            - Each thumbnail-worker pod restarted several times and its last termination is OOMKilled with exit code 137; the container's memory limit is 512Mi. [evidence: eks_pods]
            - The worker logs the decode of a very large TIFF upload just before each restart. [evidence: eks_pod_logs]
            - The memory-versus-limit monitor of thumbnail-worker is in Alert. [evidence: datadog_monitors]
            - No node reports memory pressure. [evidence: eks_node_health]
            NON_VALIDATED_CLAIMS:
            - The decoder holds the whole bitmap in memory instead of streaming it.
            CAUSAL_CHAIN:
            - very large image uploads -> the decoder holds full bitmaps -> the container passes its 512Mi limit -> the kernel kills it -> restarts and back-off
            RULED_OUT:
            - evicted pods: no pod was evicted and no node is under memory pressure; the container hit its own limit
            - crash loop from the code: the containers exit only when killed at the memory limit, with no application error
        """),
    ),
    Key(
        "003-image-pull-missing-tag", "eks", "checkout-prod-use1", "us-east-1", "checkout", "cart-service",
        "critical", 1, ("image_pull_backoff",), ("the new pods are Pending",), "PEDNGM",
        keywords=("ImagePullBackOff", "tag"),
        ruled_out=("pending_pod", "crashloop_backoff"),
        forbidden=("pending_pod", "resource_exhaustion"),
        sources=("eks_pods", "eks_events"),
        trajectory=("list_pods", "get_events", "list_deployments"),
        queries=("list_pods", "get_events"),
        ruling=("scheduled",),
        response=_r("""
            ROOT_CAUSE: Revision 23 of cart-service points at image tag 3.8.1, which does not exist in the registry, so its pods cannot pull the image and stay in ImagePullBackOff while the rollout waits.
            ROOT_CAUSE_CATEGORY: configuration_error
            FAILURE_MODES: image_pull_backoff
            VALIDATED_CLAIMS:
            - The two new cart-service pods are Pending with their container waiting in ImagePullBackOff on tag 3.8.1. [evidence: eks_pods]
            - Failed events say the pull of cart-service:3.8.1 failed because the manifest is not found. [evidence: eks_events]
            - The deployment wants 4 replicas, has 2 updated and only 3 available. [evidence: eks_deployments]
            NON_VALIDATED_CLAIMS:
            - The build pipeline published only a release-candidate tag.
            CAUSAL_CHAIN:
            - revision 23 references a tag that was never pushed -> image pulls fail -> the new pods never start -> one old pod is already gone -> three replicas carry the traffic
            RULED_OUT:
            - pending pod: the new pods are scheduled on nodes; they are Pending only because the image cannot be pulled
            - crash loop: no container ever started, so nothing crashed
        """),
    ),
    Key(
        "004-pending-insufficient-memory", "eks", "analytics-prod-use2", "us-east-2", "reporting", "report-builder",
        "warning", 1, ("pending_pod",), (), "PEDNGM",
        keywords=("Insufficient memory", "autoscaler"),
        ruled_out=("resource_quota_exceeded", "node_not_ready"),
        forbidden=("node_not_ready", "infrastructure"),
        sources=("eks_pods", "eks_events"),
        trajectory=("list_pods", "get_events", "get_node_health"),
        queries=("get_events", "get_node_health"),
        ruling=("quota",),
        response=_r("""
            ROOT_CAUSE: report-builder scaled from 5 to 8 replicas, but the node group is at its maximum size and no node has enough free memory for the new pods' requests, so three pods stay Pending with Insufficient memory.
            ROOT_CAUSE_CATEGORY: resource_exhaustion
            FAILURE_MODES: pending_pod
            VALIDATED_CLAIMS:
            - Three report-builder pods are Pending with PodScheduled False and reason Unschedulable. [evidence: eks_pods]
            - FailedScheduling events report that 0 of 5 nodes are available because of Insufficient memory. [evidence: eks_events]
            - The cluster autoscaler logs that the node group is at its maximum size and cannot add a node. [evidence: datadog_logs]
            - All five nodes are Ready. [evidence: eks_node_health]
            NON_VALIDATED_CLAIMS: none
            CAUSAL_CHAIN:
            - report load rises -> the HPA asks for 8 replicas -> nodes lack memory for the requests and the autoscaler is capped -> new pods stay Pending -> latency climbs on the five running pods
            RULED_OUT:
            - resource quota exceeded: the pods were created, so no quota refused them; they wait for a node
            - node not ready: every node reports Ready
        """),
    ),
    Key(
        "005-quota-blocks-scale-up", "eks", "search-prod-apse1", "ap-southeast-1", "search", "query-frontend",
        "warning", 1, ("resource_quota_exceeded",), ("no pod is Pending",), "PEDNGM",
        keywords=("quota", "limits.cpu"),
        ruled_out=("pending_pod", "node_not_ready"),
        forbidden=("pending_pod",),
        sources=("eks_events", "eks_deployments"),
        trajectory=("list_deployments", "get_events", "list_pods"),
        queries=("get_events", "list_deployments"),
        ruling=("Pending",),
        response=_r("""
            ROOT_CAUSE: The HPA raised query-frontend to 10 replicas, but the namespace's ResourceQuota search-compute is used up on limits.cpu, so the ReplicaSet cannot create the four extra pods.
            ROOT_CAUSE_CATEGORY: resource_exhaustion
            FAILURE_MODES: resource_quota_exceeded
            VALIDATED_CLAIMS:
            - FailedCreate events on the query-frontend ReplicaSet say the pods are forbidden because quota search-compute has limits.cpu used 24 of 24. [evidence: eks_events]
            - The deployment wants 10 replicas and has 6 available. [evidence: eks_deployments]
            - Only six query-frontend pods exist and all are Running; none is Pending. [evidence: eks_pods]
            NON_VALIDATED_CLAIMS: none
            CAUSAL_CHAIN:
            - search traffic rises -> the HPA sets 10 replicas -> the ResourceQuota refuses new pods -> six pods carry the load -> latency rises
            RULED_OUT:
            - pending pod: no pod is Pending; the extra pods were never created
            - node not ready: the nodes are Ready and have room
        """),
    ),
    Key(
        "006-node-not-ready-kubelet", "eks", "ledger-prod-use1", "us-east-1", "ledger", "ledger-sync", "critical", 1,
        ("node_not_ready",), (), "PEDNGM",
        keywords=("NotReady", "node"),
        ruled_out=("crashloop_backoff", "probe_failure"),
        forbidden=("code_defect", "configuration_error"),
        sources=("eks_node_health", "eks_pods"),
        trajectory=("list_pods", "get_node_health", "get_events"),
        queries=("get_node_health", "list_pods"),
        ruling=("restarts",),
        response=_r("""
            ROOT_CAUSE: Node ip-10-61-22-87.ec2.internal stopped reporting (Ready Unknown) and the two ledger-sync pods on it are lost and marked for deletion, so the deployment runs short of ready replicas.
            ROOT_CAUSE_CATEGORY: infrastructure
            FAILURE_MODES: node_not_ready
            VALIDATED_CLAIMS:
            - Node ip-10-61-22-87.ec2.internal reports Ready Unknown while the other nodes are Ready. [evidence: eks_node_health]
            - The two ledger-sync pods on that node are not Ready and carry a deletion timestamp; the two pods on the other nodes are Running and Ready, and the two replacements created there are not Ready yet. [evidence: eks_pods]
            - NodeNotReady and taint-manager eviction events name the node and its pods. [evidence: eks_events]
            NON_VALIDATED_CLAIMS:
            - The instance lost its network or its kubelet hung.
            CAUSAL_CHAIN:
            - the kubelet on the node stops posting status -> the node goes NotReady -> its pods lose readiness -> the controller marks them for deletion -> ready replicas drop
            RULED_OUT:
            - crash loop: the containers have no restarts
            - probe failure: readiness was lost with the node, not through failing probes
        """),
    ),
    Key(
        "007-missing-secret-config-error", "eks", "identity-prod-use1", "us-east-1", "identity", "auth-service",
        "critical", 1, ("bad_config",), ("the new pods are Pending",), "PEDNGM",
        keywords=("CreateContainerConfigError", "secret"),
        ruled_out=("image_pull_backoff", "pending_pod"),
        forbidden=("pending_pod", "resource_exhaustion"),
        sources=("eks_pods", "eks_events"),
        trajectory=("list_pods", "get_events", "list_deployments"),
        queries=("list_pods", "get_events"),
        ruling=("image",),
        response=_r("""
            ROOT_CAUSE: Revision 65 of auth-service reads the Secret auth-service-jwt-keys-v2, which does not exist in the identity namespace, so the new containers cannot be created (CreateContainerConfigError).
            ROOT_CAUSE_CATEGORY: configuration_error
            FAILURE_MODES: bad_config
            VALIDATED_CLAIMS:
            - The new auth-service pods are Pending with the container waiting in CreateContainerConfigError. [evidence: eks_pods]
            - Failed events on those pods say secret auth-service-jwt-keys-v2 not found. [evidence: eks_events]
            - The deployment wants 3 replicas and has 2 available; its rollout has not finished. [evidence: eks_deployments]
            NON_VALIDATED_CLAIMS:
            - The key rotation never created the new Secret in this namespace.
            CAUSAL_CHAIN:
            - revision 65 references a new Secret -> the Secret is absent -> the kubelet cannot build the container's environment -> the new pods never start -> one replica short
            RULED_OUT:
            - image pull backoff: the image is present; the failure is the absent Secret
            - pending pod: the pods are scheduled; the kubelet waits for the Secret
        """),
    ),
    Key(
        "008-coredns-permissions", "eks", "orders-prod-euc1", "eu-central-1", "orders", "order-api", "critical", 2,
        ("dns_resolution_failure",), ("the errors name the services order-api calls",), "PEDNLGM",
        keywords=("DNS", "CoreDNS"),
        ruled_out=("dependency_unavailable", "node_not_ready"),
        forbidden=("dependency_unavailable",),
        sources=("datadog_logs", "eks_pods"),
        clues=(("dns_resolution_failure", "on 172.20.0.10:53: read udp"),
               ("dns_resolution_failure", "services is forbidden")),
        where=(("dns_resolution_failure", "coredns"),),
        trajectory=("search_logs", "list_pods", "get_events", "query_monitors"),
        queries=("search_logs", "list_pods"),
        ruling=("payments-api",),
        response=_r("""
            ROOT_CAUSE: Cluster DNS is down: both CoreDNS pods lost permission to list Services after the system:coredns ClusterRole was changed, stay unready, and order-api's lookups of in-cluster names time out.
            ROOT_CAUSE_CATEGORY: dependency_failure
            FAILURE_MODES: dns_resolution_failure
            VALIDATED_CLAIMS:
            - order-api logs lookups of payments-api.payments.svc.cluster.local and other service names timing out against 172.20.0.10:53. [evidence: datadog_logs]
            - Both coredns pods in kube-system are Running but not Ready. [evidence: eks_pods]
            - CoreDNS logs that listing services is forbidden to its service account. [evidence: datadog_logs]
            - payments-api and inventory-api keep serving their other clients. [evidence: datadog_logs]
            NON_VALIDATED_CLAIMS:
            - The ClusterRole change came from a cluster add-on upgrade.
            CAUSAL_CHAIN:
            - the system:coredns ClusterRole loses list on services -> the CoreDNS kubernetes plugin never syncs -> readiness fails and kube-dns has no endpoints -> lookups time out -> order-api answers 5xx
            RULED_OUT:
            - dependency unavailable: payments-api and inventory-api are up and serve other clients; only name resolution fails
            - node not ready: every node is Ready
        """),
    ),
    Key(
        "009-redis-refusing-connections", "gke", "sessions-prod-asne1", "asia-northeast1", "sessions", "session-api",
        "critical", 2, ("dependency_unavailable",), ("readiness probes fail on every pod",), "PEDNLGM",
        keywords=("Redis", "connection refused"),
        clues=(("dependency_unavailable", "10.31.0.4:6379: connect: connection refused"),),
        where=(("dependency_unavailable", "session-cache"), ("dependency_unavailable", "10.31.0.4"),
               ("dependency_unavailable", "10.31.0.4:6379")),
        ruled_out=("probe_failure", "dns_resolution_failure"),
        forbidden=("probe_failure", "configuration_error"),
        sources=("datadog_logs", "eks_events"),
        trajectory=("list_pods", "get_events", "search_logs", "query_monitors"),
        queries=("search_logs", "query_monitors"),
        ruling=("readiness",),
        response=_r("""
            ROOT_CAUSE: The Redis instance session-cache at 10.31.0.4:6379, where session-api keeps its sessions, refuses connections, so session-api's readiness check fails and its pods drop out of the Service.
            ROOT_CAUSE_CATEGORY: dependency_failure
            FAILURE_MODES: dependency_unavailable
            VALIDATED_CLAIMS:
            - session-api logs connection refused from the Redis address 10.31.0.4:6379 on session reads and writes. [evidence: datadog_logs]
            - Readiness probe failures with status 503 mark the session-api pods unready; none restarted. [evidence: eks_events]
            - The Memorystore connected-clients monitor of session-cache is in Alert. [evidence: datadog_monitors]
            NON_VALIDATED_CLAIMS:
            - The managed Redis instance is in a maintenance or failover window.
            CAUSAL_CHAIN:
            - session-cache stops accepting connections -> session reads fail -> the readiness endpoint answers 503 -> pods leave the Service -> logins fail
            RULED_OUT:
            - probe failure: the readiness probe is right; it reports that Redis is unreachable
            - dns resolution failure: the logs show the resolved address 10.31.0.4 refusing connections, not a failed lookup
        """),
    ),
    Key(
        "010-liveness-timeout-restarts", "eks", "inventory-prod-cac1", "ca-central-1", "inventory", "stock-service",
        "warning", 2, ("probe_failure",), ("exit code 137 without OOMKilled",), "PEDNLGM",
        keywords=("liveness", "timeout"),
        ruled_out=("oom_killed", "crashloop_backoff"),
        forbidden=("oom_killed", "resource_exhaustion"),
        sources=("eks_events", "eks_pods"),
        trajectory=("list_pods", "get_events", "get_pod_logs"),
        queries=("get_events", "list_pods"),
        ruling=("OOMKilled",),
        response=_r("""
            ROOT_CAUSE: stock-service's liveness probe allows 1 second, but its /health handler now takes 1.5 to 2 seconds because it queries the database, so the kubelet kills working containers and restarts them.
            ROOT_CAUSE_CATEGORY: configuration_error
            FAILURE_MODES: probe_failure
            VALIDATED_CLAIMS:
            - Unhealthy events say the liveness probe on /health exceeded its deadline, and Killing events restart the container after it. [evidence: eks_events]
            - The pods' last termination is exit code 137 with reason Error, not OOMKilled. [evidence: eks_pods]
            - The container log shows /health answered in about 1.4 to 2.1 seconds right before each shutdown. [evidence: eks_pod_logs]
            NON_VALIDATED_CLAIMS:
            - The health check started querying the database in a recent change.
            CAUSAL_CHAIN:
            - /health runs a database query -> it answers slower than the 1 second probe timeout -> three failed probes in a row -> the kubelet kills the container -> restarts
            RULED_OUT:
            - oom killed: exit code 137 comes from the kubelet's kill after failed probes; the reason is Error, not OOMKilled
            - crash loop: the application never fails on its own; the probe has it killed
        """),
    ),
    Key(
        "011-rollout-waits-on-migration", "eks", "notify-prod-usw2", "us-west-2", "notifications", "push-gateway",
        "warning", 2, ("deployment_rollout_stuck",), ("another deployment's pod has old restarts",), "PEDNLGM",
        keywords=("ProgressDeadlineExceeded", "migration"),
        ruled_out=("crashloop_backoff", "image_pull_backoff"),
        forbidden=("crashloop_backoff", "code_defect"),
        sources=("eks_deployments", "eks_pods"),
        trajectory=("list_deployments", "list_pods", "get_events", "get_pod_logs"),
        queries=("list_deployments", "get_pod_logs"),
        ruling=("restarts",),
        response=_r("""
            ROOT_CAUSE: The rollout of push-gateway revision 32 is stuck: its new pod never becomes Ready because the new version refuses traffic until a database migration that was never applied, and the deployment exceeded its progress deadline.
            ROOT_CAUSE_CATEGORY: configuration_error
            FAILURE_MODES: deployment_rollout_stuck
            VALIDATED_CLAIMS:
            - push-gateway reports Progressing False with reason ProgressDeadlineExceeded, with 1 of 4 replicas updated. [evidence: eks_deployments]
            - The new pod is Running with no restarts but not Ready, while the four pods of revision 31 serve. [evidence: eks_pods]
            - The new pod logs that the schema is at version 57 and it needs 58, so it reports not ready. [evidence: eks_pod_logs]
            - Readiness probe failures with status 503 repeat for the new pod. [evidence: eks_events]
            NON_VALIDATED_CLAIMS:
            - The migration job was left out of the release.
            CAUSAL_CHAIN:
            - revision 32 requires schema 58 -> the migration never ran -> readiness answers 503 -> the surge pod never becomes available -> the progress deadline passes
            RULED_OUT:
            - crash loop: the new pod has no restarts, and the old restarts of email-sender are days old
            - image pull backoff: the image was pulled and the container runs
        """),
    ),
    Key(
        "012-disk-pressure-evictions", "aks", "telemetry-prod-weu", "westeurope", "telemetry", "ingest-api",
        "warning", 2, ("evicted_pods",), ("the node stays Ready",), "PEDNLGM",
        keywords=("Evicted", "ephemeral-storage"),
        ruled_out=("node_not_ready", "oom_killed"),
        forbidden=("node_not_ready", "infrastructure"),
        sources=("eks_pods", "eks_node_health"),
        trajectory=("list_pods", "get_events", "get_node_health"),
        queries=("list_pods", "get_node_health"),
        ruling=("Ready",),
        response=_r("""
            ROOT_CAUSE: ingest-api spools data to local ephemeral storage without a limit; node aks-nodepool1-27401956-vmss000002 ran low on disk (DiskPressure) and the kubelet evicted the ingest-api pods on it.
            ROOT_CAUSE_CATEGORY: resource_exhaustion
            FAILURE_MODES: evicted_pods
            VALIDATED_CLAIMS:
            - Three ingest-api pods are Failed with reason Evicted: the node was low on ephemeral-storage and ingest-api used far more than it requested. [evidence: eks_pods]
            - Node aks-nodepool1-27401956-vmss000002 reports disk pressure but stays Ready. [evidence: eks_node_health]
            - Evicted and EvictionThresholdMet events name that node. [evidence: eks_events]
            NON_VALIDATED_CLAIMS:
            - The spool grew because a downstream consumer slowed down.
            CAUSAL_CHAIN:
            - ingest-api writes its spool to the node's disk -> free ephemeral storage falls under the eviction threshold -> DiskPressure -> the kubelet evicts the biggest consumers -> requests fail while replacements start
            RULED_OUT:
            - node not ready: the node stays Ready; it is under disk pressure
            - oom killed: nothing was killed for memory; the evictions name ephemeral-storage
        """),
    ),
    Key(
        "013-oom-model-load-sidecar-restarts", "eks", "recs-prod-usw2", "us-west-2", "recommendations", "ranker",
        "critical", 2, ("oom_killed",), ("the sidecar has old restarts",), "PEDNLGM",
        keywords=("OOMKilled", "model"),
        ruled_out=("crashloop_backoff", "evicted_pods"),
        forbidden=("code_defect",),
        sources=("eks_pods", "eks_pod_logs"),
        trajectory=("list_pods", "get_pod_logs", "get_events"),
        queries=("list_pods", "get_pod_logs"),
        ruling=("sidecar",),
        response=_r("""
            ROOT_CAUSE: The ranker container loads model ranker-v14 of about 3.1 GiB into a container limited to 3Gi and is OOMKilled during the load, so the ranker pods restart again and again.
            ROOT_CAUSE_CATEGORY: resource_exhaustion
            FAILURE_MODES: oom_killed
            VALIDATED_CLAIMS:
            - The ranker container's last termination is OOMKilled with exit code 137 and its memory limit is 3Gi. [evidence: eks_pods]
            - The log shows the load of ranker-v14 (3.1 GiB) just before each kill. [evidence: eks_pod_logs]
            - The istio-proxy sidecar's restarts are four days old and it runs Ready. [evidence: eks_pods]
            NON_VALIDATED_CLAIMS:
            - ranker-v14 is larger than the previous model because of a bigger embedding table.
            CAUSAL_CHAIN:
            - model ranker-v14 published -> pods load it at start -> memory passes 3Gi -> the kernel kills the container -> restart and back-off
            RULED_OUT:
            - crash loop from the code: the application exits only when the kernel kills it at the limit
            - evicted pods: no eviction; the nodes have no memory pressure and the limit is the container's own
            - the sidecar: the istio-proxy restarts are four days old and unrelated
        """),
    ),
    Key(
        "014-image-platform-mismatch", "eks", "partners-prod-eun1", "eu-north-1", "partners", "webhook-relay",
        "critical", 2, ("image_pull_backoff",), ("an old Warning event about another deployment's ConfigMap",),
        "PEDNGM",
        keywords=("ImagePullBackOff", "arm64"),
        ruled_out=("bad_config", "node_not_ready"),
        forbidden=("bad_config", "infrastructure"),
        sources=("eks_pods", "eks_events"),
        trajectory=("list_pods", "get_events", "get_node_health"),
        queries=("get_events", "get_node_health"),
        ruling=("report-exporter",),
        response=_r("""
            ROOT_CAUSE: webhook-relay pods rescheduled onto the new arm64 (m7g) nodes cannot pull image webhook-relay:5.2.0, which is published for linux/amd64 only, so they stay in ImagePullBackOff.
            ROOT_CAUSE_CATEGORY: configuration_error
            FAILURE_MODES: image_pull_backoff
            VALIDATED_CLAIMS:
            - Two of the three webhook-relay pods wait in ImagePullBackOff on arm64 nodes; the one on an amd64 node runs. [evidence: eks_pods]
            - Failed events say there is no match for the node's platform in the manifest of webhook-relay:5.2.0. [evidence: eks_events]
            - The nodes of the new group are m7g instances and all are Ready. [evidence: eks_node_health]
            NON_VALIDATED_CLAIMS:
            - The image build publishes a single-architecture manifest.
            CAUSAL_CHAIN:
            - the node group moves to arm64 instances -> pods are rescheduled there -> the image has no arm64 variant -> pulls fail -> two replicas never start
            RULED_OUT:
            - bad config: the FailedMount warning about a ConfigMap belongs to report-exporter, is two hours old, and report-exporter runs
            - node not ready: the new nodes are Ready
        """),
    ),
    Key(
        "015-recovered-oom-after-limit-raise", "eks", "pricing-prod-use1", "us-east-1", "pricing", "price-engine",
        "warning", 2, ("healthy",), ("recovered: the restarts are before the fix", "the alert is still firing"),
        "PEDNLGM",
        keywords=("OOMKilled", "recovered"),
        ruled_out=("oom_killed",),
        forbidden=("oom_killed", "resource_exhaustion"),
        sources=("eks_pods", "eks_deployments"),
        trajectory=("list_pods", "list_deployments", "get_events", "query_monitors"),
        queries=("list_pods", "list_deployments"),
        ruling=("revision",),
        response=_r("""
            ROOT_CAUSE: No current fault: price-engine was OOMKilled repeatedly about an hour ago, revision 42 raised its memory limit to 2Gi, and since that rollout every pod has run without a restart; the alert still counts the earlier restarts.
            ROOT_CAUSE_CATEGORY: healthy
            FAILURE_MODES: healthy
            VALIDATED_CLAIMS:
            - All price-engine pods belong to revision 42, are Running and Ready, and have not restarted since they started about 40 minutes ago; their memory limit is 2Gi. [evidence: eks_pods]
            - The rollout to revision 42 completed and all replicas are available. [evidence: eks_deployments]
            - The BackOff events stop before the rollout of revision 42. [evidence: eks_events]
            - The memory monitor is back to OK. [evidence: datadog_monitors]
            NON_VALIDATED_CLAIMS: none
            CAUSAL_CHAIN:
            - revision 41 is OOMKilled at its 1Gi limit -> revision 42 raises the limit -> pods stable since -> the restart monitor still counts the old restarts
            RULED_OUT:
            - oom killed now: no container was killed since revision 42 rolled out
        """),
    ),
    Key(
        "016-stale-restart-count", "eks", "shipping-prod-euw2", "eu-west-2", "shipping", "label-printer", "warning", 2,
        ("healthy",), ("stale restart count",), "PEDNLGM",
        keywords=("stale",),
        ruled_out=("crashloop_backoff",),
        forbidden=("crashloop_backoff", "code_defect"),
        sources=("eks_pods",),
        trajectory=("list_pods", "get_pod_logs", "query_monitors"),
        queries=("list_pods",),
        ruling=("days",),
        response=_r("""
            ROOT_CAUSE: No current fault: the seven restarts of the label-printer pod all happened three days ago; it has run Ready since, and the monitor alerts on the total restart count rather than on new restarts.
            ROOT_CAUSE_CATEGORY: healthy
            FAILURE_MODES: healthy
            VALIDATED_CLAIMS:
            - One label-printer pod shows 7 restarts, but its last termination finished three days ago and it has been Running and Ready since. [evidence: eks_pods]
            - The current container log holds routine print jobs and no errors. [evidence: eks_pod_logs]
            - The restart monitor compares the cumulative restart count with a threshold of 5. [evidence: datadog_monitors]
            NON_VALIDATED_CLAIMS:
            - The old restarts came from a printer gateway outage three days ago.
            CAUSAL_CHAIN:
            - restarts three days ago -> the counter never resets -> a gauge monitor on the total keeps alerting -> no current impact
            RULED_OUT:
            - crash loop: the container has not restarted in three days
        """),
    ),
    Key(
        "017-crashloop-poison-message", "eks", "fulfilment-prod-sae1", "sa-east-1", "fulfilment", "order-router",
        "critical", 3, ("crashloop_backoff",), ("a recent benign rollout of another deployment",
                                                "the crashing deployment last rolled out days ago"), "PEDNLGM",
        keywords=("CrashLoopBackOff", "IndexError"),
        ruled_out=("oom_killed", "bad_config"),
        forbidden=("resource_exhaustion", "configuration_error"),
        sources=("eks_pod_logs", "eks_pods"),
        trajectory=("list_pods", "get_pod_logs", "list_deployments", "get_events"),
        queries=("get_pod_logs", "list_deployments"),
        ruling=("rollout",),
        response=_r("""
            ROOT_CAUSE: order-router crashes on one malformed queue message: parsing its address raises an unhandled IndexError, the process exits with code 1, and the message is delivered again, so every replica ends up in CrashLoopBackOff.
            ROOT_CAUSE_CATEGORY: code_defect
            FAILURE_MODES: crashloop_backoff
            VALIDATED_CLAIMS:
            - All three order-router pods wait in CrashLoopBackOff; the last termination is exit code 1 with reason Error. [evidence: eks_pods]
            - The log ends with a Python traceback, IndexError: list index out of range in parse_address, while handling the same message id each time. [evidence: eks_pod_logs]
            - order-router's revision 9 has been unchanged for six days; the only recent rollout is label-service's, which completed. [evidence: eks_deployments]
            NON_VALIDATED_CLAIMS:
            - The message has an empty street line that the parser indexes without a check.
            CAUSAL_CHAIN:
            - a malformed order message arrives -> parse_address indexes an empty list -> an unhandled IndexError ends the process -> the queue delivers the message again -> every replica crashes in turn
            RULED_OUT:
            - oom killed: exit code 1 with reason Error, far below the memory limit
            - bad config: the settings load fine; the failure is in message parsing
            - the label-service rollout: another deployment, and it completed cleanly
        """),
    ),
    Key(
        "018-configmap-typo-crashloop", "gke", "fraud-prod-usc1", "us-central1", "risk", "risk-scorer", "critical", 3,
        ("bad_config",), ("the pods are in CrashLoopBackOff",), "PEDNLGM",
        keywords=("CrashLoopBackOff", "ConfigMap"),
        ruled_out=("crashloop_backoff", "oom_killed"),
        forbidden=("crashloop_backoff", "code_defect"),
        sources=("eks_pod_logs", "eks_pods"),
        trajectory=("list_pods", "get_pod_logs", "list_deployments", "search_logs"),
        queries=("get_pod_logs", "search_logs"),
        ruling=("code",),
        response=_r("""
            ROOT_CAUSE: The risk-scorer ConfigMap was synced with a misspelled key (scoring.treshold instead of scoring.threshold); the pods restarted by that change exit at startup with code 78 because the required setting is absent, and stay in CrashLoopBackOff.
            ROOT_CAUSE_CATEGORY: configuration_error
            FAILURE_MODES: bad_config
            VALIDATED_CLAIMS:
            - risk-scorer pods of revision 13 wait in CrashLoopBackOff; the last termination is exit code 78. [evidence: eks_pods]
            - The container log warns of an unknown key scoring.treshold in its config file, then fails because the required key scoring.threshold is missing. [evidence: eks_pod_logs]
            - Argo CD synced the risk-scorer ConfigMap and the reloader restarted the deployment minutes before the crashes. [evidence: datadog_logs]
            NON_VALIDATED_CLAIMS:
            - The typo came in with the last edit to the GitOps repository.
            CAUSAL_CHAIN:
            - the ConfigMap is synced with a misspelled key -> the reloader rolls risk-scorer -> new pods read the config at start -> the required key is absent -> exit 78 -> back-off
            RULED_OUT:
            - crash loop from a code defect: the code rejects a bad setting as designed; the fault is the ConfigMap
            - oom killed: exit code 78, not 137
        """),
    ),
    Key(
        "019-gpu-taint-unschedulable", "eks", "vision-prod-euw3", "eu-west-3", "vision", "frame-inference", "warning",
        3, ("pending_pod",), ("no events collected", "a node had memory pressure that cleared"), "PDNGM",
        keywords=("taint", "GPU"),
        ruled_out=("resource_quota_exceeded", "node_not_ready"),
        forbidden=("node_not_ready", "infrastructure"),
        sources=("eks_pods", "eks_node_health"),
        trajectory=("list_pods", "get_node_health", "list_deployments"),
        queries=("list_pods", "get_node_health"),
        ruling=("pressure",),
        response=_r("""
            ROOT_CAUSE: The replaced GPU node group carries the taint nvidia.com/gpu=present:NoSchedule, which frame-inference does not tolerate, and no other node matches its GPU node selector, so its pods stay Pending.
            ROOT_CAUSE_CATEGORY: resource_exhaustion
            FAILURE_MODES: pending_pod
            VALIDATED_CLAIMS:
            - The frame-inference pods are Pending with PodScheduled False: 3 nodes had an untolerated taint nvidia.com/gpu and 4 did not match the node selector. [evidence: eks_pods]
            - The three GPU nodes are g5 instances, Ready and without pressure. [evidence: eks_node_health]
            - The memory pressure reported on a general-purpose node cleared two hours ago. [evidence: datadog_logs]
            NON_VALIDATED_CLAIMS:
            - The new node group's template added the taint.
            CAUSAL_CHAIN:
            - the GPU node group is replaced with a taint -> frame-inference lacks the toleration -> the scheduler finds no node -> pods stay Pending -> frames queue up
            RULED_OUT:
            - resource quota exceeded: the pods exist and wait for a node; no quota refused them
            - node not ready: all nodes are Ready, and the earlier memory pressure on a general-purpose node cleared
        """),
    ),
    Key(
        "020-upstream-resolver-timeouts", "aks", "payments-prod-neu", "northeurope", "payments", "payout-service",
        "critical", 3, ("dns_resolution_failure",), ("no pod logs or events collected", "the partner API is up"),
        "PDNGM",
        keywords=("DNS", "CoreDNS"),
        clues=(("dns_resolution_failure", "->10.0.0.4:53: i/o timeout"),
               ("dns_resolution_failure", "lookup api.bankpartner.example")),
        where=(("dns_resolution_failure", "coredns"), ("dns_resolution_failure", "10.0.0.4")),
        ruled_out=("dependency_unavailable",),
        forbidden=("dependency_unavailable",),
        sources=("datadog_logs", "datadog_monitors"),
        trajectory=("search_logs", "query_monitors", "list_pods"),
        queries=("search_logs", "query_monitors"),
        ruling=("synthetic",),
        response=_r("""
            ROOT_CAUSE: CoreDNS cannot reach its upstream resolver 10.0.0.4, so external names such as api.bankpartner.example fail to resolve in the cluster and payout-service cannot send payouts.
            ROOT_CAUSE_CATEGORY: dependency_failure
            FAILURE_MODES: dns_resolution_failure
            VALIDATED_CLAIMS:
            - payout-service logs lookup failures for api.bankpartner.example with server misbehaving. [evidence: datadog_logs]
            - CoreDNS logs i/o timeouts forwarding queries to 10.0.0.4:53. [evidence: datadog_logs]
            - The CoreDNS forward error monitor is in Alert while the external synthetic check of the bank partner API is OK. [evidence: datadog_monitors]
            - payout-service pods are Running and Ready with no restarts. [evidence: eks_pods]
            NON_VALIDATED_CLAIMS:
            - The virtual network's custom DNS server is down.
            CAUSAL_CHAIN:
            - upstream resolver 10.0.0.4 stops answering -> CoreDNS forwards time out -> SERVFAIL for external names -> payout calls fail before connecting
            RULED_OUT:
            - dependency unavailable: the bank partner API answers the external synthetic check; the cluster cannot resolve its name
        """),
    ),
    Key(
        "021-node-lost-sparse-evidence", "gke", "maps-prod-euw1", "europe-west1", "maps", "tile-server", "critical", 3,
        ("node_not_ready",), ("no events, monitors or pod logs collected",), "PDNG",
        keywords=("NotReady", "kubelet"),
        ruled_out=("crashloop_backoff", "oom_killed"),
        forbidden=("code_defect",),
        sources=("eks_node_health", "eks_pods"),
        trajectory=("list_pods", "get_node_health", "search_logs"),
        queries=("get_node_health", "list_pods"),
        ruling=("restarted",),
        response=_r("""
            ROOT_CAUSE: Node gke-maps-prod-default-pool-3f9a1c2e-x7kd stopped posting status (Ready Unknown) and the three tile-server pods on it are unreachable, so half of tile-server's replicas are gone.
            ROOT_CAUSE_CATEGORY: infrastructure
            FAILURE_MODES: node_not_ready
            VALIDATED_CLAIMS:
            - Node gke-maps-prod-default-pool-3f9a1c2e-x7kd reports Ready Unknown; the other nodes are Ready. [evidence: eks_node_health]
            - The three tile-server pods on that node are not Ready with reason NodeLost; the three on other nodes serve. [evidence: eks_pods]
            - The controller manager logs that the kubelet on the node stopped posting node status. [evidence: datadog_logs]
            NON_VALIDATED_CLAIMS:
            - The VM was preempted or lost its network.
            CAUSAL_CHAIN:
            - the kubelet on the node stops reporting -> the node goes NotReady -> its pods are marked lost -> tile requests routed to them fail
            RULED_OUT:
            - crash loop: no container restarted
            - oom killed: no container terminated at all; the pods lost their node
        """),
    ),
    Key(
        "022-vendor-api-outage", "eks", "tickets-prod-usw2", "us-west-2", "tickets", "booking-api", "critical", 3,
        ("dependency_unavailable",), ("no pod logs collected", "an old Warning event about another deployment"),
        "PEDNGM",
        keywords=("seatplan", "503"),
        clues=(("dependency_unavailable", "api.seatplan.example/v3/venues"),),
        where=(("dependency_unavailable", "api.seatplan.example"), ("dependency_unavailable", "seatplan")),
        ruled_out=("dns_resolution_failure", "node_not_ready"),
        forbidden=("dns_resolution_failure", "infrastructure"),
        sources=("datadog_logs",),
        trajectory=("search_logs", "query_monitors", "list_pods", "get_events"),
        queries=("search_logs", "query_monitors"),
        ruling=("resolves",),
        response=_r("""
            ROOT_CAUSE: The seat map vendor API api.seatplan.example is failing: it answers booking-api with HTTP 503 or times out, so seat selection and bookings fail while the booking-api pods themselves are fine.
            ROOT_CAUSE_CATEGORY: dependency_failure
            FAILURE_MODES: dependency_unavailable
            VALIDATED_CLAIMS:
            - booking-api logs HTTP 503 responses and timeouts from api.seatplan.example on seat map calls. [evidence: datadog_logs]
            - The seatplan upstream error-rate monitor is in Alert. [evidence: datadog_monitors]
            - booking-api pods are Running and Ready without restarts. [evidence: eks_pods]
            - The only Warning event is an old readiness failure of promo-banner. [evidence: eks_events]
            NON_VALIDATED_CLAIMS:
            - The vendor is having an outage of its own.
            CAUSAL_CHAIN:
            - seatplan vendor outage -> 503s and timeouts on seat map calls -> booking requests fail -> booking-api's error rate rises
            RULED_OUT:
            - dns resolution failure: the vendor's name resolves and the TLS handshake completes; the vendor answers 503
            - node not ready: every node is Ready
        """),
    ),
    Key(
        "023-recovered-node-flap", "eks", "stream-prod-apse2", "ap-southeast-2", "streaming", "transcode-api",
        "critical", 3, ("healthy",), ("recovered: the node is Ready again", "a node had memory pressure that cleared",
                                      "the alert is still firing"), "PEDNGM",
        keywords=("recovered", "node"),
        ruled_out=("node_not_ready",),
        forbidden=("node_not_ready", "infrastructure"),
        sources=("eks_node_health", "eks_events"),
        trajectory=("get_node_health", "list_pods", "get_events", "query_monitors"),
        queries=("get_node_health", "get_events"),
        ruling=("Ready",),
        response=_r("""
            ROOT_CAUSE: No current fault: node ip-10-88-14-203.ap-southeast-2.compute.internal was NotReady for about five minutes and has been Ready since; the transcode-api pods it lost were replaced and serve again, and the alert's 30-minute average still includes the outage.
            ROOT_CAUSE_CATEGORY: healthy
            FAILURE_MODES: healthy
            VALIDATED_CLAIMS:
            - Every node, including ip-10-88-14-203.ap-southeast-2.compute.internal, reports Ready without pressure now. [evidence: eks_node_health]
            - NodeNotReady was followed by NodeReady for that node minutes later, and the memory pressure on another node cleared. [evidence: eks_events]
            - All transcode-api pods are Running and Ready; the replacements started right after the node came back. [evidence: eks_pods]
            NON_VALIDATED_CLAIMS:
            - The node's network interface flapped.
            CAUSAL_CHAIN:
            - the node flaps NotReady for five minutes -> its pods are replaced -> the node returns Ready -> the 30-minute average of unavailable replicas still exceeds the threshold
            RULED_OUT:
            - node not ready now: the node has been Ready since it came back and all replicas are available
        """),
    ),
    Key(
        "024-liveness-kills-slow-startup", "eks", "claims-prod-use2", "us-east-2", "claims", "claims-processor",
        "warning", 3, ("probe_failure",), ("the pods are in CrashLoopBackOff",), "PEDNLGM",
        keywords=("liveness", "startup"),
        ruled_out=("crashloop_backoff", "oom_killed"),
        forbidden=("crashloop_backoff", "code_defect"),
        sources=("eks_events", "eks_pod_logs"),
        trajectory=("list_pods", "get_events", "get_pod_logs", "list_deployments"),
        queries=("get_events", "get_pod_logs"),
        ruling=("exception",),
        response=_r("""
            ROOT_CAUSE: Revision 27 of claims-processor shortened the liveness probe's initial delay, and the JVM service needs about 75 seconds to start, so the kubelet kills each container during startup (exit code 143) and the pods end up in CrashLoopBackOff.
            ROOT_CAUSE_CATEGORY: configuration_error
            FAILURE_MODES: probe_failure
            VALIDATED_CLAIMS:
            - Unhealthy events report the liveness probe refused on port 8080, then Killing events restart the container for failing its liveness probe. [evidence: eks_events]
            - The log shows a normal startup still initialising after 50 seconds, then a shutdown on SIGTERM, with no exception. [evidence: eks_pod_logs]
            - The pods wait in CrashLoopBackOff and last terminated with exit code 143. [evidence: eks_pods]
            - Revision 27 rolled out shortly before the restarts began. [evidence: eks_deployments]
            NON_VALIDATED_CLAIMS:
            - The initial delay was copied from a smaller service's manifest.
            CAUSAL_CHAIN:
            - revision 27 shortens the liveness initial delay -> the probe runs before the service listens -> three failures -> the kubelet kills the container during startup -> restart loop
            RULED_OUT:
            - crash loop from a code defect: the application never fails; the log shows no exception before SIGTERM
            - oom killed: exit code 143, not OOMKilled
        """),
    ),
    Key(
        "025-rollout-init-container-wait", "eks", "catalog-prod-mec1", "me-central-1", "catalog", "product-indexer",
        "warning", 3, ("deployment_rollout_stuck",), ("no pod logs collected", "the new pod is Pending"), "PEDNGM",
        keywords=("ProgressDeadlineExceeded", "init container"),
        ruled_out=("pending_pod", "image_pull_backoff"),
        forbidden=("pending_pod", "resource_exhaustion"),
        sources=("eks_deployments", "eks_pods"),
        trajectory=("list_deployments", "list_pods", "get_events", "search_logs"),
        queries=("list_deployments", "list_pods"),
        ruling=("scheduled",),
        response=_r("""
            ROOT_CAUSE: The rollout of product-indexer revision 15 is stuck: its new pod's init container wait-for-migrations waits for the Job product-db-migrate-47, which does not exist; the release ran its migration as the Job product-indexer-migrate-47, which completed, so the init container never finishes, the pod never starts and the deployment exceeded its progress deadline.
            ROOT_CAUSE_CATEGORY: configuration_error
            FAILURE_MODES: deployment_rollout_stuck
            VALIDATED_CLAIMS:
            - product-indexer reports Progressing False with ProgressDeadlineExceeded; 1 of 4 replicas is updated and 3 are available. [evidence: eks_deployments]
            - The new pod is scheduled but not initialised: its init container wait-for-migrations is still running. [evidence: eks_pods]
            - The init container logs every ten seconds that job product-db-migrate-47 is not found. [evidence: datadog_logs]
            - The Job product-indexer-migrate-47 created its pod and completed just before the rollout began. [evidence: eks_events]
            NON_VALIDATED_CLAIMS:
            - The chart renamed the migration Job (product-db-migrate to product-indexer-migrate) but not the name the init container waits for.
            CAUSAL_CHAIN:
            - revision 15 adds an init container that waits for the migration Job product-db-migrate-47 -> the release runs the migration as product-indexer-migrate-47 -> the awaited Job is never found -> the init container never finishes -> the new pod stays Pending -> the rollout passes its deadline with one replica fewer
            RULED_OUT:
            - pending pod: the pod is scheduled on a node; it waits on its init container, not for capacity
            - image pull backoff: the init container's image is on the node and it runs; the main container waits for it, not for a pull
        """),
    ),
    Key(
        "026-dual-oom-and-quota", "eks", "ads-prod-use1", "us-east-1", "ads", "bid-server", "critical", 4,
        ("oom_killed", "resource_quota_exceeded"), ("two faults: memory kills and a quota that blocks the scale-up",),
        "PEDNLGM",
        keywords=("OOMKilled", "quota"),
        ruled_out=("pending_pod", "node_not_ready"),
        forbidden=("pending_pod", "infrastructure"),
        sources=("eks_pods", "eks_events"),
        trajectory=("list_pods", "get_events", "list_deployments", "get_pod_logs"),
        queries=("list_pods", "get_events", "list_deployments"),
        ruling=("Pending",),
        loops=4,
        response=_r("""
            ROOT_CAUSE: Two faults on bid-server: its containers exceed their 1Gi memory limit since the targeting cache grew and are OOMKilled, and the HPA's scale-up to 12 replicas is refused by the ads ResourceQuota on limits.memory, so the fleet cannot grow to absorb the load.
            ROOT_CAUSE_CATEGORY: resource_exhaustion
            FAILURE_MODES: oom_killed, resource_quota_exceeded
            VALIDATED_CLAIMS:
            - bid-server containers last terminated OOMKilled with exit code 137 at a 1Gi limit, each after several restarts. [evidence: eks_pods]
            - FailedCreate events say new bid-server pods are forbidden because they exceed quota ads-quota on limits.memory. [evidence: eks_events]
            - The deployment wants 12 replicas and has 8 pods, only some of them available. [evidence: eks_deployments]
            - The log shows the targeting cache loading over a million segments before each kill. [evidence: eks_pod_logs]
            NON_VALIDATED_CLAIMS:
            - The segment count doubled after a new advertiser import.
            CAUSAL_CHAIN:
            - the targeting cache grows -> memory passes the 1Gi limit -> OOM kills and restarts
            - fewer ready pods and higher latency -> the HPA asks for 12 replicas -> the ResourceQuota refuses the extra pods -> the fleet stays short
            RULED_OUT:
            - pending pod: no pod is Pending; the quota stops pods from being created
            - node not ready: all nodes are Ready
        """),
    ),
    Key(
        "027-dual-image-tag-and-configmap", "eks", "crm-prod-usw1", "us-west-1", "crm", "contact-api", "critical", 4,
        ("image_pull_backoff", "bad_config"), ("two faults in one release, on two deployments",), "PEDNGM",
        keywords=("ImagePullBackOff", "ConfigMap"),
        ruled_out=("crashloop_backoff", "pending_pod"),
        forbidden=("code_defect", "resource_exhaustion"),
        sources=("eks_pods", "eks_events"),
        trajectory=("list_pods", "get_events", "list_deployments"),
        queries=("list_pods", "get_events"),
        ruling=("restarts",),
        loops=4,
        response=_r("""
            ROOT_CAUSE: Two configuration faults in one release of the crm namespace: contact-api's new image tag 4.2.O (a letter O) does not exist, so its pods are in ImagePullBackOff, and contact-sync references the ConfigMap contact-sync-settings, which was not created, so its containers fail with CreateContainerConfigError.
            ROOT_CAUSE_CATEGORY: configuration_error
            FAILURE_MODES: image_pull_backoff, bad_config
            VALIDATED_CLAIMS:
            - The new contact-api pods wait in ImagePullBackOff on tag 4.2.O. [evidence: eks_pods]
            - Failed events say contact-api:4.2.O is not found in the registry. [evidence: eks_events]
            - contact-sync pods wait in CreateContainerConfigError, and Failed events say configmap contact-sync-settings not found. [evidence: eks_events]
            - Both deployments are short of available replicas after the release. [evidence: eks_deployments]
            NON_VALIDATED_CLAIMS:
            - The release manifest was edited by hand.
            CAUSAL_CHAIN:
            - a mistyped image tag -> pulls fail -> contact-api's new pods never start
            - a ConfigMap left out of the release -> contact-sync containers cannot be created -> sync stops
            RULED_OUT:
            - crash loop: no container of either deployment started, so there are no restarts
            - pending pod: all pods are scheduled; they wait for an image or a ConfigMap
        """),
    ),
    Key(
        "028-dual-conntrack-dns-and-provider", "gke", "fares-prod-eusw1", "europe-southwest1", "fares", "fare-quoter",
        "critical", 4, ("dns_resolution_failure", "dependency_unavailable"),
        ("two faults: in-cluster lookups time out and an external provider answers 503",), "PEDNLGM",
        keywords=("conntrack", "503"),
        clues=(("dns_resolution_failure", "nf_conntrack: table full"),
               ("dns_resolution_failure", "lookup rates-cache.fares.svc.cluster.local"),
               ("dependency_unavailable", "api.faregrid.example/v1/quotes failed: 503")),
        where=(("dns_resolution_failure", "coredns"), ("dns_resolution_failure", "gke-fares-prod-pool-1-8c2d41aa-q2vm"),
               ("dependency_unavailable", "api.faregrid.example"), ("dependency_unavailable", "faregrid")),
        ruled_out=("node_not_ready", "crashloop_backoff"),
        forbidden=("node_not_ready", "infrastructure"),
        sources=("datadog_logs", "datadog_monitors"),
        trajectory=("search_logs", "query_monitors", "list_pods", "get_node_health"),
        queries=("search_logs", "query_monitors"),
        ruling=("Ready",),
        loops=4,
        response=_r("""
            ROOT_CAUSE: Two faults hit fare-quoter: DNS lookups of in-cluster names time out because the conntrack table of node gke-fares-prod-pool-1-8c2d41aa-q2vm, where both CoreDNS pods run, is full and drops their UDP packets; and the fare provider api.faregrid.example answers HTTP 503 during its maintenance.
            ROOT_CAUSE_CATEGORY: dependency_failure
            FAILURE_MODES: dns_resolution_failure, dependency_unavailable
            VALIDATED_CLAIMS:
            - fare-quoter logs lookups of rates-cache.fares.svc.cluster.local timing out against the cluster DNS address. [evidence: datadog_logs]
            - The kernel of gke-fares-prod-pool-1-8c2d41aa-q2vm logs that the nf_conntrack table is full and packets are dropped. [evidence: datadog_logs]
            - fare-quoter logs HTTP 503 from api.faregrid.example with a maintenance message. [evidence: datadog_logs]
            - The CoreDNS latency monitor and the faregrid upstream error monitor are both in Alert. [evidence: datadog_monitors]
            NON_VALIDATED_CLAIMS:
            - A traffic spike on the node filled the conntrack table.
            CAUSAL_CHAIN:
            - the conntrack table on the CoreDNS node fills -> UDP DNS packets are dropped -> in-cluster lookups time out
            - the fare provider enters maintenance -> it answers 503 -> fare quotes fail
            RULED_OUT:
            - node not ready: the node stays Ready; its conntrack table is full
            - crash loop: fare-quoter pods run without restarts
        """),
    ),
    Key(
        "029-dual-evictions-and-unschedulable", "aks", "warehouse-prod-eus", "eastus", "warehouse", "loader-api",
        "warning", 4, ("evicted_pods", "pending_pod"),
        ("two faults: memory-pressure evictions and replacements that cannot be scheduled",
         "a neighbour without memory limits"), "PEDNGM",
        keywords=("Evicted", "Insufficient memory"),
        where=(("evicted_pods", "adhoc-notebook"),),
        ruled_out=("oom_killed", "resource_quota_exceeded"),
        forbidden=("oom_killed", "infrastructure"),
        sources=("eks_pods", "eks_node_health"),
        trajectory=("list_pods", "get_events", "get_node_health", "list_deployments"),
        queries=("list_pods", "get_node_health", "get_events"),
        ruling=("quota",),
        loops=4,
        response=_r("""
            ROOT_CAUSE: Two faults on loader-api: the adhoc-notebook deployment, which has no memory limit, pushed two nodes into memory pressure and the kubelet evicted the loader-api pods on them, and their replacements cannot be scheduled because no node has enough free memory for their requests.
            ROOT_CAUSE_CATEGORY: resource_exhaustion
            FAILURE_MODES: evicted_pods, pending_pod
            VALIDATED_CLAIMS:
            - Three loader-api pods are Failed with reason Evicted because their node was low on memory. [evidence: eks_pods]
            - Two nodes report memory pressure while staying Ready. [evidence: eks_node_health]
            - The replacement loader-api pods are Pending: no node has enough memory, and the pressured nodes are tainted. [evidence: eks_pods]
            - Evicted and FailedScheduling events name the loader-api pods. [evidence: eks_events]
            NON_VALIDATED_CLAIMS:
            - A notebook user loaded a large dataset into memory.
            CAUSAL_CHAIN:
            - adhoc-notebook grows without a memory limit -> two nodes reach memory pressure -> the kubelet evicts loader-api pods
            - the pressured nodes are tainted and the others lack free memory -> replacements stay Pending
            RULED_OUT:
            - oom killed: the pods were evicted by the kubelet; no container was killed at its own limit
            - resource quota exceeded: the replacement pods were created; they wait for a node
        """),
    ),
)
# fmt: on
"""Every scenario of the pack, in folder order."""


def _log(text: str) -> dict[str, str]:
    return {"kind": "log", "text": text}


def _ev(reason: str, text: str) -> dict[str, str]:
    return {"kind": "event", "reason": reason, "text": text}


CAUSES: dict[str, dict[str, tuple[dict[str, str], ...]]] = {
    "008-coredns-permissions": {
        "dns_resolution_failure": (_log("services is forbidden"), _log("1 resource updated: ClusterRole/system:"))
    },
    "009-redis-refusing-connections": {
        "dependency_unavailable": (_log("10.31.0.4:6379: connect: connection refused"),)
    },
    "010-liveness-timeout-restarts": {
        # The slowest health checks: over the probe's 2 s timeout.
        "probe_failure": (_log("/health 200 2043ms"), _log("/health 200 2007ms"), _log("query took 1985ms"))
    },
    "011-rollout-waits-on-migration": {
        # The new pod's start says why it is not ready (its readiness checks answer 503 without a reason).
        "deployment_rollout_stuck": (_log("this build needs 58"),)
    },
    "012-disk-pressure-evictions": {"evicted_pods": (_log("(spool 11.0 GiB)"), _log("spool 1.9 GiB"))},
    "013-oom-model-load-sidecar-restarts": {
        "oom_killed": (_log("promoted ranker-v14 to production"), _log("loading embedding table"))
    },
    "014-image-platform-mismatch": {
        "image_pull_backoff": (_log("consolidated onto ng-arm64"), _log("(m7g.large, arm64)"))
    },
    "017-crashloop-poison-message": {
        "crashloop_backoff": (_log("IndexError: list index out of range"), _log("delivery_count="))
    },
    "018-configmap-typo-crashloop": {
        # The ConfigMap's misspelled key, which the loader ignores (the missing key it then fails on is the effect).
        "bad_config": (_log('unknown key "scoring.treshold"'),)
    },
    "019-gpu-taint-unschedulable": {
        "pending_pod": (_log("untolerated taint {nvidia.com/gpu: present}"), _log("nodegroup vision-gpu-g5 updated"))
    },
    "020-upstream-resolver-timeouts": {"dns_resolution_failure": (_log("->10.0.0.4:53: i/o timeout"),)},
    "021-node-lost-sparse-evidence": {"node_not_ready": (_log("hasn't been updated for"),)},
    "022-vendor-api-outage": {"dependency_unavailable": (_log("api.seatplan.example/v3/venues"),)},
    "024-liveness-kills-slow-startup": {
        "probe_failure": (
            # The last full startup took 74.6 s: more than the probe now allows (its sync is the stuffer's pick).
            _log("Started ClaimsProcessorApplication in 74.6 seconds"),
        )
    },
    "025-rollout-init-container-wait": {
        # The migration ran as the release's renamed Job; the init container waits for the old name (its NotFound
        # lines are what it does about it).
        "deployment_rollout_stuck": (
            _ev("SuccessfulCreate", "Created pod: product-indexer-migrate-47-"),
            _ev("Completed", "Job completed"),
        )
    },
    "026-dual-oom-and-quota": {
        "oom_killed": (_log("heap 960MiB"),),
        "resource_quota_exceeded": (_ev("SuccessfulRescale", "New size: 12"),),
    },
    "027-dual-image-tag-and-configmap": {
        # The tag's typo (4.2.O) shows only in the pull failure itself: no other record names the cause.
        "image_pull_backoff": (_ev("Failed", 'contact-api:4.2.O"'),),
        "bad_config": (_ev("Failed", 'configmap "contact-sync-settings" not found'),),
    },
    "028-dual-conntrack-dns-and-provider": {
        "dns_resolution_failure": (_log("nf_conntrack: table full"),),
        "dependency_unavailable": (_log("scheduled maintenance until 16:30 UTC"),),
    },
    "029-dual-evictions-and-unschedulable": {
        "evicted_pods": (_log("loaded dataset shipments_2025"),),
        "pending_pod": (
            _log("loaded dataset shipments_2025"),
            _ev("NodeHasInsufficientMemory", "NodeHasInsufficientMemory"),
        ),
    },
}
"""Scenario -> mode -> the items that show the fault's CAUSE (the panic, the missing key, the taint, the
dependency's answer, the neighbour's load), in words no failure mode's name uses. For difficulty >= 2 they
replace the derived `decisive` selectors, whose records (OOMKilled, ImagePullBackOff, FailedScheduling, exceeded
quota, Evicted) carry the mode's own words: a labeller that greps for them must not pass."""

REFUTES: dict[str, dict[str, tuple[dict[str, str], ...]]] = {
    "020-upstream-resolver-timeouts": {
        "dependency_unavailable": (
            _log("posted via ledger-api.payments.svc.cluster.local 200"),
            _log("->10.0.0.4:53: i/o timeout"),
        )
    },
    "024-liveness-kills-slow-startup": {
        "crashloop_backoff": (
            _ev("Killing", "failed liveness probe, will be restarted"),
            _log("Started ClaimsProcessorApplication: not reached"),
        ),
        "oom_killed": (_ev("Killing", "failed liveness probe, will be restarted"), _log("Graceful shutdown complete")),
    },
    "027-dual-image-tag-and-configmap": {
        "crashloop_backoff": (
            _ev("Failed", 'configmap "contact-sync-settings" not found'),
            _ev("Failed", 'contact-api:4.2.O"'),
        ),
    },
}
"""Scenario -> ruled-out hypothesis -> items specific to it that contradict it (they replace the derived ones)."""
