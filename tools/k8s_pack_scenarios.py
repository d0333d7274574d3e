"""The scenarios of the built-in `k8s` pack as cluster snapshots (`k8s_drill.py`): 000-014 and shared helpers.

Each function builds one scenario to match its row in `k8s_pack_keys.py`: the same workload, nodes, numbers and
trap. Names, images, log lines and numbers are sredrill's own.
"""

from __future__ import annotations

from datetime import UTC, datetime

from k8s_drill import Drill, Json, background
from k8s_pack_keys import KEYS

_BY_FOLDER = {k.folder: k for k in KEYS}


def drill(folder: str, day: int, hour: int, minute: int) -> Drill:
    """A scenario whose alert fires on 2026-05-`day` at `hour`:`minute` UTC."""
    return Drill(_BY_FOLDER[folder], datetime(2026, 5, day, hour, minute, 17, tzinfo=UTC))


def back_off(d: Drill, pod: Json, first: float, count: int) -> None:
    """The kubelet's BackOff warning for a container that keeps exiting."""
    c = pod["containers"][0]["name"]
    d.event(f"Pod/{pod['name']}", "BackOff", f"Back-off restarting failed container {c} in pod {pod['name']}_"
            f"{pod['namespace']}({d.suffix(8)}-{d.suffix(4)})", first=first, last=d.rng.uniform(0, 1.5),
            count=count)  # fmt: skip


def crash_waiting(d: Drill, pod_name: str, container: str) -> Json:
    return d.waiting("CrashLoopBackOff", f"back-off 5m0s restarting failed container={container} pod={pod_name}")


def caller_errors(d: Drill, caller: str, target: str, path: str, span: tuple[float, float], every: float,
                  status: int = 503) -> None:  # fmt: skip
    """A calling service's warnings about the workload's answers."""
    r = d.rng
    host = f"{caller}-{d.rs_hash()}-{d.suffix()}"
    at = span[0]
    while at > span[1]:
        d.dd(at, "warn", caller, host, f"upstream {target} answered {status} on {path} after "
             f"{r.randint(2, 40)}ms (attempt {r.randint(1, 3)}/3)", pod=host, deployment=caller)  # fmt: skip
        at -= every * r.uniform(0.6, 1.4)


def s000() -> Drill:
    d = drill("000-healthy-baseline", 4, 8, 0)
    d.add_nodes(4, instance_type="m6i.2xlarge")
    rs, image = d.rs_hash(), d.image("catalog-api", "4.31.2")
    d.add_deployment("catalog-api", 4, revision=57, image=image, rs=rs)
    pods = d.healthy_pods("catalog-api", rs, 4, image, started=(12_950, 12_990), limits=("1", "1Gi"),
                          sidecar="log-forwarder")  # fmt: skip
    background(d, others=3)
    for p in pods:
        d.requests_log(p, "catalog-api", (58, 0.5), 3, paths=("/api/v1/products", "/api/v1/categories", "/healthz"))
    d.workload_monitors("digest")
    d.set_alert("digest", value="0", state="normal")
    return d


def s001() -> Drill:
    d = drill("001-crashloop-startup-panic", 5, 14, 22)
    nodes = d.add_nodes(4)
    rs, old_rs = d.rs_hash(), d.rs_hash()
    image = d.image("invoice-renderer", "2.14.0")
    d.add_deployment("invoice-renderer", 4, revision=18, image=image, rs=rs, ready=0, available=0, updated=4)
    pods = []
    for i in range(4):
        started, restarts = 34.5 - i * 0.4, d.rng.randint(8, 11)
        last = d.terminated("Error", 2, d.rng.uniform(0.3, 3.5), 0.75)
        name = f"invoice-renderer-{rs}-{d.suffix()}"
        c = d.container("invoice-renderer", image, restarts=restarts, last=last, ready=False,
                        state=crash_waiting(d, name, "invoice-renderer"))  # fmt: skip
        pods.append(d.add_pod("invoice-renderer", rs, nodes[i % 4], [c], started=started, name=name))
    d.scaled("invoice-renderer", rs, 4, 35.2)
    d.scaled("invoice-renderer", old_rs, 0, 34.0, down=True)
    for p in pods:
        back_off(d, p, 31.5, d.rng.randint(28, 44))
    background(d, others=2)
    crashed = pods[1]
    crashed["containers"][0]["last_state"] = d.terminated("Error", 2, 1.65, 0.75)
    lines = [(2.4, "INFO", "starting invoice-renderer version=2.14.0 commit=9f3c2ab go=go1.22.5"),
             (2.39, "INFO", "loaded 214 invoice templates from s3://billing-templates-prod/v7/"),
             (2.38, "INFO", "http server listening on :8080"),
             (2.2, "INFO", "GET /healthz 200 1ms"), (2.0, "INFO", "POST /render 200 182ms tenant=t-4410"),
             (1.9, "INFO", "POST /render 200 203ms tenant=t-0291"),
             (1.66, "INFO", "template cache refresh started (interval=45s)")]  # fmt: skip
    text = "".join(f"{d.ago(m)} {lvl} {msg}\n" for m, lvl, msg in lines) + (
        "panic: assignment to entry in nil map\n\ngoroutine 41 [running]:\n"
        "github.com/ledgerline/invoice-renderer/internal/templates.(*Cache).Refresh(0xc0001a4000, {0x1b3e6c8, "
        "0xc00019e0a0})\n\t/src/internal/templates/cache.go:88 +0x1c5\n"
        "github.com/ledgerline/invoice-renderer/internal/templates.(*Cache).Run(0xc0001a4000)\n"
        "\t/src/internal/templates/cache.go:61 +0x9e\ncreated by main.main in goroutine 1\n"
        "\t/src/cmd/server/main.go:74 +0x4f2\n"
    )
    d.pod_log = {"pod_name": crashed["name"], "namespace": d.ns, "logs": text, "container": "invoice-renderer"}
    for p in pods:
        at = d.rng.uniform(0.4, 3.0)
        d.dd(at + 0.8, "info", "invoice-renderer", p["name"], "starting invoice-renderer version=2.14.0 "
             "commit=9f3c2ab", pod=p["name"], deployment="invoice-renderer")  # fmt: skip
        d.dd(at, "error", "invoice-renderer", p["name"], "panic: assignment to entry in nil map "
             "(internal/templates/cache.go:88)", pod=p["name"], deployment="invoice-renderer")  # fmt: skip
    caller_errors(d, "billing-api", "invoice-renderer", "/render", (30, 0.2), 2.5)
    d.workload_monitors("restarts", unavailable="Alert", errors="Alert")
    d.set_alert("restarts", value="4", pod=pods[2]["name"])
    return d


def s002() -> Drill:
    d = drill("002-oom-killed-worker", 6, 3, 41)
    nodes = d.add_nodes(5, instance_type="r6i.xlarge")
    rs = d.rs_hash()
    image = d.image("thumbnail-worker", "1.9.3")
    d.add_deployment("thumbnail-worker", 4, revision=12, image=image, rs=rs, ready=3, available=3)
    pods = []
    for i in range(4):
        restarts = d.rng.randint(4, 7)
        last = d.terminated("OOMKilled", 137, d.rng.uniform(0.5, 9), d.rng.uniform(2, 8))
        name = f"thumbnail-worker-{rs}-{d.suffix()}"
        state = crash_waiting(d, name, "thumbnail-worker") if i == 3 else None
        c = d.container(
            "thumbnail-worker",
            image,
            restarts=restarts,
            last=last,
            state=state,
            ready=i != 3,
            limits=("1", "512Mi"),
            requests=("500m", "384Mi"),
            started=d.rng.uniform(0.2, 0.45),
        )
        pods.append(d.add_pod("thumbnail-worker", rs, nodes[i], [c], started=8_640 + i * 0.3, name=name))
    back_off(d, pods[3], 38, 9)
    for p in pods[:3]:
        d.event(f"Pod/{p['name']}", "Pulled", f'Container image "{image}" already present on machine',
                first=44, last=p["containers"][0]["restart_count"] * 0.1, count=p["containers"][0]["restart_count"],
                type="Normal")  # fmt: skip
    background(d, others=2)
    victim = pods[1]
    lines = [(7.9, "INFO", "worker started concurrency=4 queue=thumbnails prefetch=8")]
    at = 7.8
    while at > 3.2:
        w, h = d.rng.choice(((4032, 3024), (3000, 4000), (1920, 1080), (6000, 4000)))
        lines.append(
            (
                at,
                "INFO",
                f"job {d.rng.randint(8_800_000, 8_899_999)} resized upload/u-{d.rng.randint(10_000, 99_999)}"
                f"/IMG_{d.rng.randint(1000, 9999)}.jpg {w}x{h} -> 3 sizes in {d.rng.randint(180, 640)}ms",
            )
        )
        at -= d.rng.uniform(0.15, 0.5)
    lines.append((3.1, "INFO", "job 8812359 decoding upload/u-90117/scan-0042.tiff 14000x9800 16-bit RGBA"))
    lines.append((3.08, "WARN", "decoder buffer for scan-0042.tiff: 1.02 GiB"))
    d.set_pod_log(victim, lines)
    for p in pods:
        for _ in range(3):
            at = d.rng.uniform(1, 45)
            d.dd(at, "info", "thumbnail-worker", p["name"], f"job {d.rng.randint(8_800_000, 8_899_999)} decoding "
                 f"upload/u-{d.rng.randint(10_000, 99_999)}/scan-{d.rng.randint(1, 99):04d}.tiff "
                 f"{d.rng.choice((12000, 14000, 16000))}x{d.rng.choice((8000, 9800, 11000))} 16-bit RGBA",
                 pod=p["name"], deployment="thumbnail-worker")  # fmt: skip
    d.dd(20, "warn", "thumbnail-scheduler", "thumbnail-scheduler-6c9d5-x2kqp", "queue thumbnails depth 4812 "
         "(oldest 19m)", deployment="thumbnail-scheduler")  # fmt: skip
    d.workload_monitors("restarts", memory="Alert")
    d.set_alert("restarts", value="5", pod=pods[0]["name"])
    return d


def s003() -> Drill:
    d = drill("003-image-pull-missing-tag", 7, 16, 5)
    nodes = d.add_nodes(4)
    new_rs, old_rs = d.rs_hash(), d.rs_hash()
    new_image, old_image = d.image("cart-service", "3.8.1"), d.image("cart-service", "3.8.0")
    d.add_deployment("cart-service", 4, revision=23, image=new_image, rs=new_rs, ready=3, available=3, updated=2,
                     progressing=("True", "ReplicaSetUpdated",
                                  f'ReplicaSet "cart-service-{new_rs}" is progressing.'))  # fmt: skip
    d.healthy_pods("cart-service", old_rs, 3, old_image, started=(4_300, 4_310), limits=("1", "768Mi"))
    for i in range(2):
        name = f"cart-service-{new_rs}-{d.suffix()}"
        c = d.container("cart-service", new_image, ready=False, limits=("1", "768Mi"),
                        state=d.waiting("ImagePullBackOff", f'Back-off pulling image "{new_image}"'))  # fmt: skip
        pod = d.add_pod("cart-service", new_rs, nodes[i + 1], [c], started=7 - i * 0.5, phase="Pending", name=name)
        obj = f"Pod/{name}"
        d.event(obj, "Scheduled", f"Successfully assigned checkout/{name} to {pod['node_name']}", first=7 - i * 0.5,
                type="Normal")  # fmt: skip
        d.event(obj, "Pulling", f'Pulling image "{new_image}"', first=6.9 - i * 0.5, last=1.2, count=5, type="Normal")
        d.event(obj, "Failed", f'Failed to pull image "{new_image}": rpc error: code = NotFound desc = failed to pull '
                f'and unpack image "{new_image}": failed to resolve reference "{new_image}": {new_image}: not found',
                first=6.8 - i * 0.5, last=1.1, count=5)  # fmt: skip
        d.event(obj, "Failed", "Error: ErrImagePull", first=6.8 - i * 0.5, last=1.1, count=5)
        d.event(obj, "BackOff", f'Back-off pulling image "{new_image}"', first=6.7 - i * 0.5, last=0.4, count=19,
                type="Normal")  # fmt: skip
        d.event(obj, "Failed", "Error: ImagePullBackOff", first=6.7 - i * 0.5, last=0.4, count=19)
    d.scaled("cart-service", new_rs, 1, 7.1)
    d.scaled("cart-service", old_rs, 3, 7.0, down=True)
    d.scaled("cart-service", new_rs, 2, 6.6)
    background(d, others=3)
    for p in [p for p in d.pods if p["labels"]["pod-template-hash"] == old_rs]:
        d.requests_log(p, "cart-service", (50, 0.3), 2, paths=("/cart", "/cart/items", "/healthz"), ms=(8, 140))
    d.dd(7.4, "info", "argocd-application-controller", "argocd-application-controller-0", "Sync operation to "
         "5e1c2a7 succeeded (application checkout-cart-service, 1 resource updated: Deployment/cart-service)",
         namespace="argocd")  # fmt: skip
    d.workload_monitors("unavailable", latency="Warn")
    d.set_alert("unavailable", value="1")
    return d


def s004() -> Drill:
    d = drill("004-pending-insufficient-memory", 8, 10, 48)
    d.add_nodes(5)
    rs = d.rs_hash()
    image = d.image("report-builder", "6.2.0")
    d.add_deployment("report-builder", 8, revision=31, image=image, rs=rs, ready=5, available=5)
    running = d.healthy_pods("report-builder", rs, 5, image, started=(5_700, 5_900), limits=("2", "4Gi"))
    for p in running:
        p["containers"][0]["resources"]["requests"] = {"cpu": "1", "memory": "3Gi"}
    message = ("0/5 nodes are available: 5 Insufficient memory. preemption: 0/5 nodes are available: 5 No "
               "preemption victims found for incoming pod.")  # fmt: skip
    pending = []
    for i in range(3):
        c = d.container("report-builder", image, ready=False, limits=("2", "4Gi"), requests=("1", "3Gi"),
                        state={"waiting": True, "reason": "", "message": ""})  # fmt: skip
        pod = d.add_pod("report-builder", rs, "unscheduled", [c], started=12 - i * 0.1, phase="Pending",
                        conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                     "message": message}])  # fmt: skip
        pending.append(pod)
        d.event(f"Pod/{pod['name']}", "FailedScheduling", message, first=12 - i * 0.1, last=0.8, count=9)
        d.event(f"Pod/{pod['name']}", "NotTriggerScaleUp", "pod didn't trigger scale-up: 1 max node group size "
                "reached", first=11.5, last=1.0, count=12, type="Normal")  # fmt: skip
    d.event("HorizontalPodAutoscaler/report-builder", "SuccessfulRescale", "New size: 8; reason: cpu resource "
            "utilization (percentage of request) above target", first=12.3, type="Normal")  # fmt: skip
    d.event("Deployment/report-builder", "ScalingReplicaSet", f"Scaled up replica set report-builder-{rs} to 8 from 5",
            first=12.2, type="Normal")  # fmt: skip
    background(d, others=2)
    ca = f"cluster-autoscaler-{d.rs_hash()}-{d.suffix()}"
    for at in (11.8, 8.4, 5.1, 1.9):
        p = pending[int(at) % 3]
        d.dd(at, "info", "cluster-autoscaler", ca, f"Pod reporting/{p['name']} is unschedulable",
             namespace="kube-system", pod=ca)  # fmt: skip
        d.dd(at - 0.01, "warn", "cluster-autoscaler", ca, "Scale-up: node group eks-reporting-ng-7ac2 is at its "
             "maximum size (5); no expansion options", namespace="kube-system", pod=ca)  # fmt: skip
    for p in running:
        d.requests_log(p, "report-builder", (40, 0.2), 4, paths=("/reports/run", "/reports/status"), ms=(900, 4200),
                       level="info")  # fmt: skip
    d.workload_monitors("latency", unavailable="Alert")
    d.set_monitor(f"Pods not ready in {d.ns}", "Alert")
    d.set_alert("latency", value="3.8")
    return d


def s005() -> Drill:
    d = drill("005-quota-blocks-scale-up", 9, 2, 12)
    d.add_nodes(6, instance_type="c6i.2xlarge")
    rs = d.rs_hash()
    image = d.image("query-frontend", "12.4.1")
    message = (f'pods "query-frontend-{rs}-{d.suffix()}" is forbidden: exceeded quota: search-compute, requested: '
               "limits.cpu=2, used: limits.cpu=24, limited: limits.cpu=24")  # fmt: skip
    dep = d.add_deployment("query-frontend", 10, revision=44, image=image, rs=rs, ready=6, available=6, updated=6)
    dep["conditions"].append({"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": message})
    d.healthy_pods("query-frontend", rs, 6, image, started=(3_100, 3_400), limits=("2", "2Gi"))
    d.event("HorizontalPodAutoscaler/query-frontend", "SuccessfulRescale", "New size: 10; reason: cpu resource "
            "utilization (percentage of request) above target", first=14.2, type="Normal")  # fmt: skip
    d.event("Deployment/query-frontend", "ScalingReplicaSet", f"Scaled up replica set query-frontend-{rs} to 10 from 6",
            first=14.1, type="Normal")  # fmt: skip
    d.event(f"ReplicaSet/query-frontend-{rs}", "FailedCreate", f"Error creating: {message}", first=14.0, last=0.6,
            count=17)  # fmt: skip
    background(d, others=3)
    for p in [p for p in d.pods if p["labels"]["app.kubernetes.io/name"] == "query-frontend"]:
        d.requests_log(p, "query-frontend", (45, 0.2), 1.5, paths=("/search", "/suggest"), ms=(40, 2900))
    d.dd(6, "warn", "query-frontend", d.pods[0]["name"], "search backlog 184 requests, p99 2.3s")
    d.workload_monitors("latency", unavailable="Alert")
    d.add_monitor("ResourceQuota search-compute usage", "max(last_5m):max:kubernetes_state.resourcequota.limits.cpu"
                  f".used{{{d.scope()},resourcequota:search-compute}} / max:kubernetes_state.resourcequota.limits.cpu"
                  f".limit{{{d.scope()},resourcequota:search-compute}} > 0.95", "Alert")  # fmt: skip
    d.set_alert("latency", value="2.7")
    return d


def s006() -> Drill:
    d = drill("006-node-not-ready-kubelet", 10, 19, 30)
    bad = d.add_node(name="ip-10-61-22-87.ec2.internal", ip="10.61.22.87", instance_type="m5.xlarge", ready="Unknown")
    good = d.add_nodes(3, instance_type="m5.xlarge")
    rs = d.rs_hash()
    image = d.image("ledger-sync", "3.2.7")
    d.add_deployment("ledger-sync", 4, revision=14, image=image, rs=rs, ready=2, available=2)
    lost = []
    for _ in range(2):
        c = d.container("ledger-sync", image, limits=("1", "1Gi"), started=4_410)
        cond = [{"type": "PodScheduled", "status": "True", "reason": "", "message": ""},
                {"type": "Initialized", "status": "True", "reason": "", "message": ""},
                {"type": "ContainersReady", "status": "True", "reason": "", "message": ""},
                {"type": "Ready", "status": "False", "reason": "", "message": ""}]  # fmt: skip
        lost.append(d.add_pod("ledger-sync", rs, bad, [c], started=4_410, conditions=cond,
                              extra={"deletion_timestamp": d.ago(1.9)}))  # fmt: skip
    d.healthy_pods("ledger-sync", rs, 2, image, started=(4_400, 4_420), limits=("1", "1Gi"), nodes=good[:2])
    for i in range(2):
        c = d.container("ledger-sync", image, limits=("1", "1Gi"), ready=False, started=1.3)
        pod = d.add_pod("ledger-sync", rs, good[2 - i], [c], started=1.8)
        d.event(f"ReplicaSet/ledger-sync-{rs}", "SuccessfulCreate", f"Created pod: {pod['name']}", first=1.85,
                type="Normal")  # fmt: skip
        d.normal_start(pod, 1.8)
    d.event(f"Node/{bad}", "NodeNotReady", f"Node {bad} status is now: NodeNotReady", first=7.2, type="Normal")
    for p in lost:
        d.event(f"Pod/{p['name']}", "NodeNotReady", "Node is not ready", first=7.1)
        d.event(f"Pod/{p['name']}", "TaintManagerEviction", f"Marking for deletion Pod ledger/{p['name']}",
                first=1.9, type="Normal")  # fmt: skip
    background(d, others=2)
    for p in d.pods:
        if p["labels"]["app.kubernetes.io/name"] == "ledger-sync" and p["start_time"] < d.ago(100):
            end = 7.6 if p in lost else 0.3
            at = 50.0
            while at > end:
                d.dd(at, "info", "ledger-sync", p["name"], f"synced batch {d.rng.randint(100_000, 999_999)}: "
                     f"{d.rng.randint(40, 400)} entries, lag {d.rng.randint(1, 9)}s", pod=p["name"],
                     deployment="ledger-sync")  # fmt: skip
                at -= d.rng.uniform(1.5, 4)
    agent = f"datadog-cluster-agent-{d.rs_hash()}-{d.suffix()}"
    for at in (6.5, 4.5, 2.5, 0.5):
        d.dd(at, "error", "datadog-agent", agent, "unable to reach kubelet on 10.61.22.87:10250: dial tcp "
             "10.61.22.87:10250: i/o timeout", namespace="kube-system", pod=agent)  # fmt: skip
    d.workload_monitors("unavailable")
    d.add_monitor(f"Nodes not ready in {d.key.cluster}", "max(last_5m):sum:kubernetes_state.node.by_condition"
                  f"{{kube_cluster_name:{d.key.cluster},condition:ready,status:unknown}} > 0", "Alert")  # fmt: skip
    d.set_alert("unavailable", value="2")
    return d


def s007() -> Drill:
    d = drill("007-missing-secret-config-error", 11, 9, 3)
    nodes = d.add_nodes(3)
    new_rs, old_rs = d.rs_hash(), d.rs_hash()
    new_image, old_image = d.image("auth-service", "7.3.0"), d.image("auth-service", "7.2.4")
    d.add_deployment("auth-service", 3, revision=65, image=new_image, rs=new_rs, ready=2, available=2, updated=2,
                     progressing=("True", "ReplicaSetUpdated",
                                  f'ReplicaSet "auth-service-{new_rs}" is progressing.'))  # fmt: skip
    d.healthy_pods("auth-service", old_rs, 2, old_image, started=(10_100, 10_200), limits=("1", "1Gi"))
    message = 'secret "auth-service-jwt-keys-v2" not found'
    for i in range(2):
        name = f"auth-service-{new_rs}-{d.suffix()}"
        c = d.container("auth-service", new_image, ready=False, limits=("1", "1Gi"),
                        state=d.waiting("CreateContainerConfigError", message))  # fmt: skip
        pod = d.add_pod("auth-service", new_rs, nodes[i], [c], started=6.2 - i * 0.3, phase="Pending", name=name)
        obj = f"Pod/{name}"
        d.event(obj, "Scheduled", f"Successfully assigned identity/{name} to {pod['node_name']}", first=6.2 - i * 0.3,
                type="Normal")  # fmt: skip
        d.event(obj, "Pulled", f'Successfully pulled image "{new_image}" in 2.811s (2.811s including waiting)',
                first=6.1 - i * 0.3, type="Normal")  # fmt: skip
        d.event(obj, "Failed", f"Error: {message}", first=6.1 - i * 0.3, last=0.3, count=27)
        d.event(obj, "Pulled", f'Container image "{new_image}" already present on machine', first=5.9 - i * 0.3,
                last=0.3, count=26, type="Normal")  # fmt: skip
    d.scaled("auth-service", new_rs, 1, 6.3)
    d.scaled("auth-service", old_rs, 2, 6.25, down=True)
    d.scaled("auth-service", new_rs, 2, 6.0)
    background(d, others=3)
    for p in [p for p in d.pods if p["labels"]["pod-template-hash"] == old_rs]:
        d.requests_log(p, "auth-service", (50, 0.2), 1.2, paths=("/oauth/token", "/userinfo", "/.well-known/jwks.json"),
                       ms=(4, 90))  # fmt: skip
    d.workload_monitors("unavailable")
    d.set_alert("unavailable", value="1")
    return d


def s008() -> Drill:
    d = drill("008-coredns-permissions", 12, 13, 37)
    nodes = d.add_nodes(4, instance_type="m6i.2xlarge")
    rs = d.rs_hash()
    image = d.image("order-api", "9.12.3")
    d.add_deployment("order-api", 4, revision=88, image=image, rs=rs)
    api = d.healthy_pods("order-api", rs, 4, image, started=(2_900, 3_000), limits=("1", "1Gi"))
    # CoreDNS: both pods restarted 16 minutes ago and cannot sync the kubernetes plugin since.
    dns_rs = d.rs_hash()
    dns_image = "602401143452.dkr.ecr.eu-central-1.amazonaws.com/eks/coredns:v1.11.1-eksbuild.9"
    d.add_deployment("coredns", 2, revision=3, image=dns_image, rs=dns_rs, ready=0, available=0,
                     namespace="kube-system")  # fmt: skip
    dns = []
    for i in range(2):
        c = d.container("coredns", dns_image, ready=False, limits=("", "170Mi"), requests=("100m", "70Mi"),
                        started=16.2 - i * 0.2)  # fmt: skip
        c["resources"]["limits"] = {"memory": "170Mi"}
        pod = d.add_pod("coredns", dns_rs, nodes[i], [c], started=16.2 - i * 0.2, namespace="kube-system")
        dns.append(pod)
        d.event(f"Pod/{pod['name']}", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503",
                first=16, last=0.1, count=94, namespace="kube-system")  # fmt: skip
    d.dd(41, "info", "argocd-application-controller", "argocd-application-controller-0", "Sync operation to "
         "a41be07 succeeded (application cluster-rbac, 1 resource updated: ClusterRole/system:coredns)",
         namespace="argocd")  # fmt: skip
    for pod in dns:
        at = 15.9
        while at > 0.2:
            d.dd(at, "error", "coredns", pod["name"], "plugin/kubernetes: pkg/mod/k8s.io/client-go@v0.29.3/tools/cache/"
                 'reflector.go:229: Failed to watch *v1.Service: failed to list *v1.Service: services is forbidden: '
                 'User "system:serviceaccount:kube-system:coredns" cannot list resource "services" in API group "" '
                 "at the cluster scope", pod=pod["name"], deployment="coredns", namespace="kube-system")  # fmt: skip
            d.dd(at - 0.05, "info", "coredns", pod["name"], 'plugin/ready: Still waiting on: "kubernetes"',
                 pod=pod["name"], deployment="coredns", namespace="kube-system")  # fmt: skip
            at -= d.rng.uniform(0.8, 1.6)
    targets = ("payments-api.payments.svc.cluster.local", "inventory-api.inventory.svc.cluster.local",
               "customer-profile.customers.svc.cluster.local")  # fmt: skip
    lines = []
    for p in api:
        at = 14.5
        while at > 0.1:
            host = d.rng.choice(targets)
            msg = (f'POST /v1/orders 502: dial tcp: lookup {host} on 172.20.0.10:53: read udp '
                   f"{d.ip()}:{d.rng.randint(30_000, 60_000)}->172.20.0.10:53: i/o timeout")  # fmt: skip
            d.dd(at, "error", "order-api", p["name"], msg, pod=p["name"], deployment="order-api")
            if p is api[0]:
                lines.append((at, "ERROR", msg))
            at -= d.rng.uniform(0.3, 1.2)
        d.requests_log(p, "order-api", (55, 16.5), 1.5, paths=("/v1/orders", "/v1/orders/status"), ms=(20, 180))
    lines += [(m, "INFO", f"POST /v1/orders 201 {d.rng.randint(40, 160)}ms") for m in (30, 25.2, 21.9, 18.4)]
    d.set_pod_log(api[0], lines)
    for svc in ("payments-api", "inventory-api"):
        host = f"{svc}-{d.rs_hash()}-{d.suffix()}"
        at = 40.0
        while at > 0.5:
            d.dd(at, "info", svc, host, f"POST /v1/{'authorize' if svc == 'payments-api' else 'reserve'} 200 "
                 f"{d.rng.randint(5, 60)}ms client=checkout-web", pod=host, deployment=svc,
                 namespace=svc.split("-")[0] if svc == "payments-api" else "inventory")  # fmt: skip
            at -= d.rng.uniform(2, 5)
    background(d, others=2)
    d.workload_monitors("errors", latency="Alert")
    d.add_monitor("CoreDNS available replicas", "max(last_5m):sum:kubernetes_state.deployment.replicas_available"
                  f"{{{d.scope('coredns', 'kube-system')}}} < 1", "Alert")  # fmt: skip
    d.add_monitor(
        "5xx error rate on payments-api",
        "sum(last_5m):sum:trace.http.request.errors{service:payments-api,"
        "env:prod}.as_count() / sum:trace.http.request.hits{service:payments-api,env:prod}.as_count() > 0.05",
    )
    d.set_alert("errors", value="0.41")
    return d


def s009() -> Drill:
    d = drill("009-redis-refusing-connections", 13, 6, 52)
    d.add_nodes(4)
    rs = d.rs_hash()
    image = d.image("session-api", "2.9.0")
    d.add_deployment("session-api", 4, revision=21, image=image, rs=rs, ready=0, available=0)
    pods = []
    for _ in range(4):
        c = d.container("session-api", image, ready=False, limits=("500m", "512Mi"), started=8_000)
        pods.append(d.add_pod("session-api", rs, d.rng.choice(d.node_names), [c], started=8_000))
    for p in pods:
        d.event(f"Pod/{p['name']}", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503",
                first=11.2, last=0.2, count=d.rng.randint(62, 70))  # fmt: skip
    refused = "dial tcp 10.31.0.4:6379: connect: connection refused"
    lines = [(m, "INFO", f"GET /v1/session 200 {d.rng.randint(1, 9)}ms") for m in (16, 14.2, 13.1, 12.4)]
    at = 11.4
    while at > 0.05:
        lines.append((at, "ERROR", f"session store: {d.rng.choice(('GET', 'SETEX'))} sess:{d.suffix(12)}: {refused}"))
        lines.append((at - 0.02, "WARN", f"readiness: redis PING failed: {refused}; answering 503"))
        at -= d.rng.uniform(0.15, 0.6)
    d.set_pod_log(pods[0], lines)
    for p in pods:
        at, n = 11.3, 0
        while at > 0.1:
            op = ("GET", "SETEX")[n % 2]
            d.dd(at, "error", "session-api", p["name"], f"session store: {op} sess:{d.suffix(12)}: {refused}",
                 pod=p["name"], deployment="session-api")  # fmt: skip
            at, n = at - d.rng.uniform(0.5, 1.5), n + 1
        d.requests_log(p, "session-api", (50, 11.6), 2, paths=("/v1/session", "/v1/session/refresh"), ms=(1, 12))
    caller_errors(d, "login-web", "session-api", "/v1/session", (10.5, 0.1), 0.8)
    background(d, others=2)
    d.workload_monitors("unavailable", errors="Alert")
    d.add_monitor("Memorystore session-cache connected clients", "avg(last_5m):avg:gcp.redis.clients.connected"
                  "{instance_id:session-cache} < 1", "Alert")  # fmt: skip
    d.set_alert("unavailable", value="4")
    return d


def s010() -> Drill:
    d = drill("010-liveness-timeout-restarts", 14, 15, 9)
    nodes = d.add_nodes(3, instance_type="m6i.2xlarge")
    rs = d.rs_hash()
    image = d.image("stock-service", "5.6.1")
    d.add_deployment("stock-service", 3, revision=52, image=image, rs=rs, ready=2, available=2)
    pods = []
    for i in range(3):
        last = d.terminated("Error", 137, d.rng.uniform(0.3, 5), d.rng.uniform(3, 7))
        c = d.container(
            "stock-service",
            image,
            restarts=d.rng.randint(5, 8),
            last=last,
            ready=i != 0,
            limits=("1", "1Gi"),
            started=d.rng.uniform(0.1, 0.25) if i == 0 else d.rng.uniform(1, 3),
        )
        pods.append(d.add_pod("stock-service", rs, nodes[i], [c], started=2_950 + i))
    for p in pods:
        ip = d.ip()
        obj = f"Pod/{p['name']}"
        d.event(
            obj,
            "Unhealthy",
            f'Liveness probe failed: Get "http://{ip}:8080/health": context deadline exceeded '
            "(Client.Timeout exceeded while awaiting headers)",
            first=52,
            last=d.rng.uniform(0, 1),
            count=24,
        )
        d.event(obj, "Killing", "Container stock-service failed liveness probe, will be restarted", first=51,
                last=d.rng.uniform(0.5, 4), count=p["containers"][0]["restart_count"], type="Normal")  # fmt: skip
        d.event(obj, "Pulled", f'Container image "{image}" already present on machine', first=51, last=0.3,
                count=p["containers"][0]["restart_count"], type="Normal")  # fmt: skip
    victim = pods[1]
    lines = [(6.5, "INFO", "stock-service 5.6.1 listening on :8080 (db pool 20)")]
    at = 6.4
    while at > 1.3:
        if d.rng.random() < 0.35:
            lines.append((at, "INFO", f"GET /health 200 {d.rng.randint(1400, 2100)}ms db_check=inventory"))
        else:
            lines.append((at, "INFO", f"GET /api/stock/sku-{d.rng.randint(10_000, 99_999)} 200 "
                          f"{d.rng.randint(8, 60)}ms"))  # fmt: skip
        at -= d.rng.uniform(0.05, 0.25)
    lines += [(1.25, "INFO", "received SIGTERM, draining connections (grace 30s)"),
              (1.0, "WARN", "shutdown: 11 requests still in flight")]  # fmt: skip
    d.set_pod_log(victim, lines)
    d.set_last_run(victim, 6.55, 0.75)
    for p in pods:
        c, obj = p["containers"][0], f"Pod/{p['name']}"
        finished = d.age(c["last_state"]["finished_at"])
        restarted = min(d.age(c["state"]["started_at"]), finished - 0.15)
        c["state"]["started_at"] = d.ago(restarted)
        d.retime(obj, "Killing", finished + 0.5)  # the SIGTERM; the kill follows the 30 s grace period
        d.retime(obj, "Pulled", restarted)
    for p in pods:
        for _ in range(6):
            d.dd(d.rng.uniform(1, 50), "warn", "stock-service", p["name"], f"health check: inventory database query "
                 f"took {d.rng.randint(1300, 2100)}ms", pod=p["name"], deployment="stock-service")  # fmt: skip
        d.requests_log(p, "stock-service", (55, 0.5), 2.5, paths=("/api/stock", "/api/stock/reserve"), ms=(8, 70))
    background(d, others=2)
    d.workload_monitors("restarts", latency="Warn")
    d.set_alert("restarts", value="4", pod=pods[2]["name"])
    return d


def s011() -> Drill:
    d = drill("011-rollout-waits-on-migration", 15, 11, 26)
    nodes = d.add_nodes(4)
    new_rs, old_rs = d.rs_hash(), d.rs_hash()
    new_image, old_image = d.image("push-gateway", "5.0.0"), d.image("push-gateway", "4.12.3")
    d.add_deployment(
        "push-gateway",
        4,
        revision=32,
        image=new_image,
        rs=new_rs,
        ready=4,
        available=4,
        unavailable=1,
        updated=1,
        progressing=(
            "False",
            "ProgressDeadlineExceeded",
            f'ReplicaSet "push-gateway-{new_rs}" has timed out progressing.',
        ),
    )
    d.healthy_pods("push-gateway", old_rs, 4, old_image, started=(9_800, 9_900), limits=("500m", "512Mi"))
    c = d.container("push-gateway", new_image, ready=False, limits=("500m", "512Mi"), started=24.2)
    new = d.add_pod("push-gateway", new_rs, nodes[3], [c], started=24.4)
    d.scaled("push-gateway", new_rs, 1, 24.5)
    d.normal_start(new, 24.4)
    d.event(f"Pod/{new['name']}", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503",
            first=23.9, last=0.1, count=142)  # fmt: skip
    d.event("Deployment/push-gateway", "ProgressDeadlineExceeded", 'Deployment "push-gateway" has timed out '
            "progressing", first=14.4)  # fmt: skip
    # Only the start says why: the readiness checks that follow answer 503 without a reason, more of them than
    # the default tail holds. Datadog collects the start too (the readiness access lines are filtered out).
    start = [(24.2, "info", "push-gateway 5.0.0 starting (apns, fcm, webpush)"),
             (24.15, "info", "connected to postgres notify-db.notifications.svc:5432"),
             (24.1, "warn", "database schema at version 57, this build needs 58; the readiness check fails until the "
              "migration is applied")]  # fmt: skip
    lines = [(at, level.upper(), text) for at, level, text in start]
    at = 24.0
    while at > 0.1:
        lines.append((at, "INFO", "GET /ready 503 0ms"))
        at -= 1 / 6
    d.set_pod_log(new, lines)
    for at, level, text in start:
        d.dd(at, level, "push-gateway", new["name"], text, pod=new["name"], deployment="push-gateway")
    # The red herring: a sibling deployment with restarts from days ago.
    rs, image = d.rs_hash(), d.image("email-sender", "2.3.1")
    d.add_deployment("email-sender", 2, revision=9, image=image, rs=rs)
    for i, p in enumerate(d.healthy_pods("email-sender", rs, 2, image, started=(11_000, 11_100))):
        if i == 0:
            p["containers"][0]["restart_count"] = 2
            p["containers"][0]["last_state"] = d.terminated("Error", 1, 4_310, 600)
            p["containers"][0]["state"]["started_at"] = d.ago(4_309.9)
    background(d, others=2)
    for p in [p for p in d.pods if p["labels"]["pod-template-hash"] == old_rs]:
        d.requests_log(p, "push-gateway", (50, 0.2), 1.5, paths=("/v1/push", "/v1/push/batch"), status=202, ms=(4, 40))
    d.workload_monitors("unavailable")
    d.set_alert("unavailable", value="1")
    return d


def s012() -> Drill:
    d = drill("012-disk-pressure-evictions", 16, 22, 14)
    names = [f"aks-nodepool1-27401956-vmss00000{i}" for i in range(4)]
    bad = names[2]
    for name in names:
        d.add_node(name=name, instance_type="Standard_D8s_v5", disk_pressure="True" if name == bad else "False")
    rs = d.rs_hash()
    image = d.image("ingest-api", "8.1.4")
    d.add_deployment("ingest-api", 6, revision=19, image=image, rs=rs, ready=5, available=5)
    d.healthy_pods("ingest-api", rs, 3, image, started=(7_000, 7_200), limits=("2", "2Gi"), nodes=[names[0], names[1]])
    message = ("The node was low on resource: ephemeral-storage. Threshold quantity: 10%, available: 6%. Container "
               "ingest-api was using 14Gi, request is 0, has larger consumption of ephemeral-storage.")  # fmt: skip
    evicted = []
    for i in range(3):
        state = d.terminated("Evicted", 137, 9.5 - i * 0.6, 7_100, message=message)
        c = d.container("ingest-api", image, ready=False, limits=("2", "2Gi"), state=state)
        cond = [{"type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet", "message": message},
                {"type": "PodScheduled", "status": "True", "reason": "", "message": ""},
                {"type": "Ready", "status": "False", "reason": "PodFailed", "message": ""}]  # fmt: skip
        pod = d.add_pod("ingest-api", rs, bad, [c], started=7_110 + i, phase="Failed", conditions=cond,
                        extra={"reason": "Evicted", "message": message})  # fmt: skip
        evicted.append(pod)
        d.event(f"Pod/{pod['name']}", "Evicted", message, first=9.6 - i * 0.6)
    d.event(f"Node/{bad}", "NodeHasDiskPressure", f"Node {bad} status is now: NodeHasDiskPressure", first=10.4,
            type="Normal")  # fmt: skip
    d.event(f"Node/{bad}", "EvictionThresholdMet", "Attempting to reclaim ephemeral-storage", first=10.3, last=0.5,
            count=6)  # fmt: skip
    for i in range(3):
        c = d.container("ingest-api", image, ready=i != 2, limits=("2", "2Gi"), started=8.9 - i * 3)
        pod = d.add_pod("ingest-api", rs, names[(0, 1, 3)[i]], [c], started=9.2 - i * 3)
        d.event(f"ReplicaSet/ingest-api-{rs}", "SuccessfulCreate", f"Created pod: {pod['name']}", first=9.3 - i * 3,
                type="Normal")  # fmt: skip
        d.normal_start(pod, 9.2 - i * 3)
        if i == 0:
            d.set_pod_log(pod, [(8.8, "INFO", "ingest-api 8.1.4 starting, spool dir /var/spool/ingest (emptyDir)"),
                                (8.7, "INFO", "spool empty, replaying 0 segments"),
                                *[(m, "INFO", f"accepted batch of {d.rng.randint(200, 900)} events, spool "
                                   f"{(8.6 - m) * 0.4 + 0.1:.1f} GiB, downstream ack lag {d.rng.randint(20, 45)}s")
                                  for m in (8.5, 7.0, 5.5, 4.0, 2.5, 1.0)]])  # fmt: skip
    for p in evicted:
        for m in (40, 30, 20, 12):
            d.dd(m + d.rng.uniform(0, 2), "warn", "ingest-api", p["name"], "downstream ack lag "
                 f"{d.rng.randint(30, 55)}s, spooling to disk (spool {14 - m * 0.25:.1f} GiB)", pod=p["name"],
                 deployment="ingest-api")  # fmt: skip
    caller_errors(d, "edge-collector", "ingest-api", "/v1/events", (9.5, 0.2), 0.7)
    background(d, others=2)
    d.workload_monitors("errors", unavailable="Alert")
    d.add_monitor(f"Disk pressure on {d.key.cluster} nodes", "max(last_5m):max:kubernetes_state.node.by_condition"
                  f"{{kube_cluster_name:{d.key.cluster},condition:diskpressure,status:true}} > 0", "Alert")  # fmt: skip
    d.set_alert("errors", value="0.12")
    return d


def s013() -> Drill:
    d = drill("013-oom-model-load-sidecar-restarts", 17, 7, 33)
    nodes = d.add_nodes(4, instance_type="r6i.xlarge")
    rs = d.rs_hash()
    image = d.image("ranker", "3.4.2")
    d.add_deployment("ranker", 3, revision=33, image=image, rs=rs, ready=0, available=0)
    pods = []
    for i in range(3):
        name = f"ranker-{rs}-{d.suffix()}"
        last = d.terminated("OOMKilled", 137, d.rng.uniform(0.5, 4), 1.1)
        state = None if i == 0 else crash_waiting(d, name, "ranker")
        ranker = d.container("ranker", image, restarts=d.rng.randint(6, 9), last=last, state=state, ready=False,
                             limits=("2", "3Gi"), requests=("1", "3Gi"), started=0.4)  # fmt: skip
        proxy = d.sidecar("istio-proxy", 5_900, restarts=3, last=d.terminated("Completed", 0, 5_800, 90))
        proxy["state"]["started_at"] = d.ago(5_799.9)
        pods.append(d.add_pod("ranker", rs, nodes[i], [ranker, proxy], started=5_900 + i, name=name))
    for p in pods[1:]:
        back_off(d, p, 47, d.rng.randint(14, 20))
    d.set_pod_log(pods[0], [(1.2, "INFO", "ranker 3.4.2 starting (workers=4)"),
                            (1.19, "INFO", "fetching model ranker-v14 from s3://recs-models-prod/ranker/v14/ "
                             "(3.1 GiB)"),
                            (0.85, "INFO", "model download complete in 21.4s"),
                            (0.84, "INFO", "loading embedding table (2.3 GiB)"),
                            (0.5, "INFO", "loading dense layers (0.8 GiB)")], container="ranker")  # fmt: skip
    d.set_last_run(pods[0], 1.22, 0.45, restarted=0.4)
    d.dd(55, "info", "model-registry", "model-registry-0", "promoted ranker-v14 to production (3.1 GiB; previous "
         "ranker-v13 2.2 GiB)", namespace="mlops")  # fmt: skip
    caller_errors(d, "feed-api", "ranker", "/v1/rank", (48, 0.2), 2.0)
    background(d, others=2)
    d.workload_monitors("restarts", memory="Alert", errors="Alert", unavailable="Alert")
    d.set_alert("restarts", value="6", pod=pods[1]["name"])
    return d


def s014() -> Drill:
    d = drill("014-image-platform-mismatch", 18, 12, 58)
    old = d.add_node(instance_type="m6i.xlarge")
    arm = d.add_nodes(3, instance_type="m7g.large", pool="ng-arm64")
    rs = d.rs_hash()
    image = d.image("webhook-relay", "5.2.0")
    d.add_deployment("webhook-relay", 3, revision=7, image=image, rs=rs, ready=1, available=1)
    d.healthy_pods("webhook-relay", rs, 1, image, started=(17_300, 17_300), nodes=[old])
    for i in range(2):
        name = f"webhook-relay-{rs}-{d.suffix()}"
        c = d.container("webhook-relay", image, ready=False,
                        state=d.waiting("ImagePullBackOff", f'Back-off pulling image "{image}"'))  # fmt: skip
        pod = d.add_pod("webhook-relay", rs, arm[i], [c], started=22 - i, phase="Pending", name=name)
        obj = f"Pod/{name}"
        d.event(obj, "Scheduled", f"Successfully assigned partners/{name} to {pod['node_name']}", first=22 - i,
                type="Normal")  # fmt: skip
        d.event(obj, "Failed", f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and '
                f'unpack image "{image}": no match for platform in manifest: not found', first=21.8 - i, last=1.5,
                count=8)  # fmt: skip
        d.event(obj, "Failed", "Error: ErrImagePull", first=21.8 - i, last=1.5, count=8)
        d.event(obj, "BackOff", f'Back-off pulling image "{image}"', first=21.7 - i, last=0.2, count=88,
                type="Normal")  # fmt: skip
        d.event(obj, "Failed", "Error: ImagePullBackOff", first=21.7 - i, last=0.2, count=88)
    # The red herring: an old mount warning of another deployment, which has run fine since.
    ers, eimage = d.rs_hash(), d.image("report-exporter", "1.4.0")
    d.add_deployment("report-exporter", 1, revision=3, image=eimage, rs=ers)
    (exporter,) = d.healthy_pods("report-exporter", ers, 1, eimage, started=(128.5, 128.5), nodes=[old])
    exporter["containers"][0]["state"]["started_at"] = d.ago(118.6)  # once the ConfigMap existed
    d.event(f"Pod/{exporter['name']}", "FailedMount", 'MountVolume.SetUp failed for volume '
            '"templates" : configmap "report-exporter-templates" not found', first=128, last=119, count=4)  # fmt: skip
    karpenter = f"karpenter-{d.rs_hash()}-{d.suffix()}"
    for n in arm:
        d.dd(24 + d.rng.uniform(0, 2), "info", "karpenter", karpenter, f"launched nodeclaim for nodepool ng-arm64: "
             f"{n} (m7g.large, arm64)", namespace="kube-system", pod=karpenter)  # fmt: skip
    d.dd(23, "info", "karpenter", karpenter, "disrupting 2 nodes of nodepool general (drifted: consolidated onto "
         "ng-arm64)", namespace="kube-system", pod=karpenter)  # fmt: skip
    background(d, others=2)
    d.requests_log(exporter, "report-exporter", (110, 0.5), 12, paths=("/export/daily",), ms=(300, 900))
    d.workload_monitors("unavailable")
    d.set_alert("unavailable", value="2")
    return d


BASICS = (s000, s001, s002, s003, s004, s005, s006, s007, s008, s009, s010, s011, s012, s013, s014)
