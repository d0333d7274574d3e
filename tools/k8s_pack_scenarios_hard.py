"""The scenarios of the built-in `k8s` pack, 015-029: recovered and healthy traps, red herrings, missing
evidence and the dual faults (the helpers are `k8s_pack_scenarios.py`'s)."""

from __future__ import annotations

from k8s_drill import Drill, Json, background
from k8s_pack_scenarios import back_off, caller_errors, crash_waiting, drill


def _pending(d: Drill, deployment: str, rs: str, image: str, message: str, started: float,
             limits: tuple[str, str], requests: tuple[str, str]) -> Json:  # fmt: skip
    c = d.container(deployment, image, ready=False, limits=limits, requests=requests,
                    state={"waiting": True, "reason": "", "message": ""})  # fmt: skip
    cond = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}]
    return d.add_pod(deployment, rs, "unscheduled", [c], started=started, phase="Pending", conditions=cond)


def s015() -> Drill:
    d = drill("015-recovered-oom-after-limit-raise", 19, 17, 44)
    d.add_nodes(4)
    new_rs, old_rs = d.rs_hash(), d.rs_hash()
    image = d.image("price-engine", "2.7.5")
    d.add_deployment("price-engine", 3, revision=42, image=image, rs=new_rs)
    pods = d.healthy_pods("price-engine", new_rs, 3, image, started=(41, 44), limits=("1", "2Gi"))
    old_names = [f"price-engine-{old_rs}-{d.suffix()}" for _ in range(3)]
    agent = f"datadog-agent-{d.suffix()}"
    kills = 0
    killed: dict[str, list[float]] = {}
    for name in old_names:
        for _ in range(d.rng.randint(4, 6)):
            at = d.rng.uniform(46.5, 58)
            kills += 1
            killed.setdefault(name, []).append(at)
            d.dd(at, "warn", "datadog-agent", agent, f"container price-engine of pod pricing/{name} terminated: "
                 "OOMKilled (exit code 137, memory limit 1Gi)", namespace="kube-system", pod=agent)  # fmt: skip
    d.event(f"ReplicaSet/price-engine-{old_rs}", "SuccessfulDelete", f"Deleted pod: {old_names[0]}", first=43.5,
            type="Normal")  # fmt: skip
    for i, name in enumerate(old_names[1:]):
        d.event(f"ReplicaSet/price-engine-{old_rs}", "SuccessfulDelete", f"Deleted pod: {name}", first=42.5 - i,
                type="Normal")  # fmt: skip
    d.scaled("price-engine", new_rs, 1, 44.2)
    d.scaled("price-engine", old_rs, 2, 43.6, down=True)
    d.scaled("price-engine", new_rs, 3, 42.8)
    d.scaled("price-engine", old_rs, 0, 41.2, down=True)
    for p in pods:
        d.normal_start(p, d.age(p["start_time"]))
        d.requests_log(p, "price-engine", (40, 0.3), 1.2, paths=("/v1/price", "/v1/price/batch"), ms=(6, 80))
    first = pods[0]
    lines = [(d.age(first["start_time"]) - 0.2, "INFO", "price-engine 2.7.5 started (workers=6, heap limit from "
              "cgroup: 2048MiB)")]  # fmt: skip
    at = d.age(first["start_time"]) - 1
    while at > 0.3:
        lines.append((at, "INFO", f"repriced {d.rng.randint(800, 4000)} offers in {d.rng.randint(90, 400)}ms; heap "
                      f"{d.rng.randint(690, 860)}MiB"))  # fmt: skip
        at -= d.rng.uniform(1.5, 4)
    d.set_pod_log(first, lines)
    d.dd(45, "info", "argocd-application-controller", "argocd-application-controller-0", "Sync operation to 77b0e4d "
         "succeeded (application pricing-price-engine, 1 resource updated: Deployment/price-engine)",
         namespace="argocd")  # fmt: skip
    background(d, others=2)
    d.workload_monitors("restarts_1h")
    d.set_alert("restarts_1h", value=str(kills))
    _old_oom_history(d, killed)
    d.dd(44.9, "info", "argocd-notifications-controller", f"argocd-notifications-controller-{d.rs_hash()}-"
         f"{d.suffix()}", 'Sent on-sync-succeeded for application pricing-price-engine: revision 77b0e4d "price-engine:'
         ' raise the memory limit from 1Gi to 2Gi (OOMKilled at 1Gi under the evening load)"',
         namespace="argocd")  # fmt: skip
    return d


def _old_oom_history(d: Drill, killed: dict[str, list[float]]) -> None:
    """The events the kills of revision 41's pods left (`killed`: pod -> minutes before the alert of each kill):
    the kubelet's BackOff per pod and the node problem detector's OOMKilling per node."""
    by_node: dict[str, list[tuple[float, str]]] = {}
    for name, kills in killed.items():
        node = d.rng.choice(d.node_names)
        by_node.setdefault(node, []).extend((at, name) for at in kills)
        d.event(f"Pod/{name}", "BackOff", f"Back-off restarting failed container price-engine in pod {name}_"
                f"{d.ns}({d.suffix(8)}-{d.suffix(4)})", first=max(kills) - 0.1, last=min(kills) - 0.4,
                count=2 * len(kills))  # fmt: skip
    for node, kills in sorted(by_node.items()):
        pid = d.rng.randint(20_000, 90_000)
        d.event(f"Node/{node}", "OOMKilling", f"Memory cgroup out of memory: Killed process {pid} (price-engine) "
                f"total-vm:{d.rng.randint(2_300_000, 2_600_000)}kB, anon-rss:{1_048_576 - d.rng.randint(0, 900)}kB, "
                f"file-rss:{d.rng.randint(20_000, 40_000)}kB, shmem-rss:0kB, UID:10001 pgtables:"
                f"{d.rng.randint(2_400, 2_900)}kB oom_score_adj:{d.rng.choice((985, 987, 992))}",
                first=max(k for k, _ in kills), last=min(k for k, _ in kills), count=len(kills))  # fmt: skip


def s016() -> Drill:
    d = drill("016-stale-restart-count", 20, 4, 19)
    d.add_nodes(3)
    rs = d.rs_hash()
    image = d.image("label-printer", "1.12.0")
    d.add_deployment("label-printer", 2, revision=11, image=image, rs=rs)
    pods = d.healthy_pods("label-printer", rs, 2, image, started=(12_900, 13_000), limits=("250m", "256Mi"))
    c = pods[0]["containers"][0]
    c["restart_count"] = 7
    c["last_state"] = d.terminated("Error", 1, 4_330, 14)
    c["state"]["started_at"] = d.ago(4_329.8)
    lines = []
    at = 58.0
    while at > 0.2:
        lines.append(
            (
                at,
                "INFO",
                f"printed label for shipment SHP-{d.rng.randint(1_000_000, 9_999_999)} (zpl 4x6, "
                f"carrier {d.rng.choice(('dhl', 'ups', 'royalmail', 'dpd'))}) in {d.rng.randint(120, 400)}ms",
            )
        )
        at -= d.rng.uniform(0.6, 2.5)
    d.set_pod_log(pods[0], lines)
    for m, level, msg in lines[::3]:
        d.dd(m, level.lower(), "label-printer", pods[0]["name"], msg, pod=pods[0]["name"], deployment="label-printer")
    background(d, others=2)
    d.add_monitor("Container restarts on label-printer", "change(max(last_15m),last_15m):sum:kubernetes.containers."
                  f"restarts{{{d.scope('label-printer')}}} by {{kube_pod}} > 3")  # fmt: skip
    d.workload_monitors("restart_total")
    d.set_alert("restart_total", value="7", pod=pods[0]["name"])
    return d


def s017() -> Drill:
    d = drill("017-crashloop-poison-message", 21, 10, 7)
    nodes = d.add_nodes(4)
    rs = d.rs_hash()
    image = d.image("order-router", "4.0.2")
    d.add_deployment("order-router", 3, revision=9, image=image, rs=rs, ready=0, available=0)
    message_id = "8f3a9c1e-5b27-4d0e-9a61-2c4f7e0b13d8"
    pods = []
    for i in range(3):
        name = f"order-router-{rs}-{d.suffix()}"
        last = d.terminated("Error", 1, d.rng.uniform(0.3, 3), 0.1)
        c = d.container("order-router", image, restarts=d.rng.randint(9, 12), last=last, ready=False,
                        state=crash_waiting(d, name, "order-router"), limits=("500m", "768Mi"))  # fmt: skip
        pods.append(d.add_pod("order-router", rs, nodes[i], [c], started=8_650 + i, name=name))
    for p in pods[1:]:
        back_off(d, p, 24, d.rng.randint(30, 40))
    lines = [(1.4, "INFO", "consumer started queue=orders-routing prefetch=10 workers=4")]
    for m in (1.35, 1.3, 1.26):
        lines.append((m, "INFO", f"routed order ORD-{d.rng.randint(2_200_000, 2_299_999)} to warehouse "
                      f"{d.rng.choice(('gru-1', 'gru-2', 'vcp-1'))}"))  # fmt: skip
    lines.append((1.25, "INFO", f"received message id={message_id} order=ORD-2291847 delivery_count=13"))
    lines.append((1.25, "ERROR", f"unhandled exception while processing message id={message_id}"))
    tb = ("Traceback (most recent call last):\n"
          '  File "/app/router/consumer.py", line 88, in handle\n    route = plan_route(order)\n'
          '  File "/app/router/planner.py", line 23, in plan_route\n    address = parse_address(order["ship_to"])\n'
          '  File "/app/router/address.py", line 41, in parse_address\n    street = lines[0]\n'
          "IndexError: list index out of range\n")  # fmt: skip
    text = "".join(f"{d.ago(m)} {lvl} {msg}\n" for m, lvl, msg in lines) + tb
    d.pod_log = {"pod_name": pods[1]["name"], "namespace": d.ns, "logs": text, "container": "order-router"}
    d.set_last_run(pods[1], 1.41, 1.24)
    for p in pods:
        for _ in range(4):
            at = d.rng.uniform(0.3, 24)
            d.dd(at, "error", "order-router", p["name"], f"unhandled exception while processing message id={message_id}"
                 ": IndexError: list index out of range (router/address.py:41)", pod=p["name"],
                 deployment="order-router")  # fmt: skip
    # The red herrings: a recent, clean rollout of another deployment; order-router itself last rolled out days ago.
    lrs, old_lrs, limage = d.rs_hash(), d.rs_hash(), d.image("label-service", "2.18.0")
    d.add_deployment("label-service", 2, revision=15, image=limage, rs=lrs)
    for p in d.healthy_pods("label-service", lrs, 2, limage, started=(29, 30.5)):
        d.normal_start(p, d.age(p["start_time"]))
        d.requests_log(p, "label-service", (28, 0.3), 3, paths=("/v1/labels",), ms=(20, 90))
    d.scaled("label-service", lrs, 1, 30.6)
    d.scaled("label-service", old_lrs, 1, 30.0, down=True)
    d.scaled("label-service", lrs, 2, 29.8)
    d.scaled("label-service", old_lrs, 0, 29.0, down=True)
    background(d, others=2)
    d.workload_monitors("restarts", unavailable="Alert")
    d.set_alert("restarts", value="5", pod=pods[2]["name"])
    return d


def s018() -> Drill:
    d = drill("018-configmap-typo-crashloop", 22, 20, 31)
    nodes = d.add_nodes(3)
    rs = d.rs_hash()
    image = d.image("risk-scorer", "3.2.0")
    d.add_deployment(
        "risk-scorer",
        3,
        revision=13,
        image=image,
        rs=rs,
        ready=0,
        available=0,
        progressing=("True", "ReplicaSetUpdated", f'ReplicaSet "risk-scorer-{rs}" is progressing.'),
    )
    pods = []
    for i in range(3):
        name = f"risk-scorer-{rs}-{d.suffix()}"
        last = d.terminated("Error", 78, d.rng.uniform(0.2, 2.5), 0.05)
        c = d.container("risk-scorer", image, restarts=d.rng.randint(5, 6), last=last, ready=False,
                        state=crash_waiting(d, name, "risk-scorer"), limits=("2", "2Gi"))  # fmt: skip
        pods.append(d.add_pod("risk-scorer", rs, nodes[i], [c], started=8.6 - i * 0.1, name=name))
        back_off(d, pods[-1], 8.2, d.rng.randint(24, 30))
    d.scaled("risk-scorer", rs, 3, 8.7)
    config = "/etc/risk-scorer/config.yaml"
    # The loader warns of the key it does not know (the ConfigMap's misspelling) before it fails on the one it
    # needs: the warning shows the cause, the fatal line what it does.
    unknown = f'config: unknown key "scoring.treshold" in {config}, ignoring it'
    missing = f'config: required key "scoring.threshold" is missing from {config}'
    d.set_pod_log(pods[0], [(1.2, "INFO", f"risk-scorer 3.2.0 loading config {config}"),
                            (1.195, "WARN", unknown),
                            (1.19, "FATAL", missing),
                            (1.19, "INFO", "exiting with status 78")])  # fmt: skip
    d.set_last_run(pods[0], 1.2, 1.18)
    for p in pods:
        for _ in range(3):
            at = d.rng.uniform(0.2, 8)
            d.dd(at + 0.005, "warn", "risk-scorer", p["name"], unknown, pod=p["name"], deployment="risk-scorer")
            d.dd(at, "error", "risk-scorer", p["name"], missing, pod=p["name"], deployment="risk-scorer")
    d.dd(9.4, "info", "argocd-application-controller", "argocd-application-controller-0", "Sync operation to c81d2f0 "
         "succeeded (application risk-scorer, 1 resource updated: ConfigMap/risk-scorer-config)")  # fmt: skip
    d.dd(8.9, "info", "reloader", "reloader-reloader-0", "Changes detected in 'risk-scorer-config' of type "
         "'CONFIGMAP' in namespace 'risk'; updated 'risk-scorer' of type 'Deployment' in namespace 'risk'")  # fmt: skip
    caller_errors(d, "payments-gateway", "risk-scorer", "/v1/score", (8.5, 0.1), 0.4)
    background(d, others=2)
    d.workload_monitors("errors", unavailable="Alert")
    d.set_alert("errors", value="0.93")
    return d


def s019() -> Drill:
    d = drill("019-gpu-taint-unschedulable", 23, 8, 55)
    general = d.add_nodes(4)
    d.add_nodes(3, instance_type="g5.xlarge", pool="gpu")
    rs = d.rs_hash()
    image = d.image("frame-inference", "1.6.3")
    d.add_deployment("frame-inference", 3, revision=8, image=image, rs=rs, ready=0, available=0)
    message = ("0/7 nodes are available: 3 node(s) had untolerated taint {nvidia.com/gpu: present}, 4 node(s) didn't "
               "match Pod's node affinity/selector. preemption: 0/7 nodes are available: 7 Preemption is not helpful "
               "for scheduling.")  # fmt: skip
    pods = [_pending(d, "frame-inference", rs, image, message, 35 - i * 0.2, ("4", "12Gi"), ("2", "10Gi"))
            for i in range(3)]  # fmt: skip
    ca = f"cluster-autoscaler-{d.rs_hash()}-{d.suffix()}"
    for at in (30, 20, 10, 2):
        p = pods[int(at) % 3]
        d.dd(at, "info", "cluster-autoscaler", ca, f"Pod vision/{p['name']} is unschedulable",
             namespace="kube-system", pod=ca)  # fmt: skip
        d.dd(at - 0.01, "info", "cluster-autoscaler", ca, "pod didn't trigger scale-up: 3 node(s) had untolerated "
             "taint {nvidia.com/gpu: present}, 4 node(s) didn't match Pod's node affinity/selector",
             namespace="kube-system", pod=ca)  # fmt: skip
    d.dd(36, "info", "eks-nodegroup", "eks-control-plane", "nodegroup vision-gpu-g5 updated to launch template "
         "version 12; 3 nodes replaced")  # fmt: skip
    busy = general[1]
    d.dd(128, "warn", "kubelet", busy, "eviction manager: node is under memory pressure (memory.available 412Mi < "
         "threshold 500Mi)")  # fmt: skip
    d.dd(121, "info", "kubelet", busy, "eviction manager: memory pressure condition cleared")
    caller_errors(d, "frame-dispatcher", "frame-inference", "/v1/infer", (34, 0.2), 3, status=503)
    background(d, others=2)
    d.workload_monitors("unavailable")
    d.set_monitor(f"Pods not ready in {d.ns}", "Alert")
    d.set_alert("unavailable", value="3")
    return d


def s020() -> Drill:
    d = drill("020-upstream-resolver-timeouts", 24, 13, 2)
    nodes = d.add_nodes(3)
    rs = d.rs_hash()
    image = d.image("payout-service", "6.0.8")
    d.add_deployment("payout-service", 3, revision=30, image=image, rs=rs)
    pods = d.healthy_pods("payout-service", rs, 3, image, started=(5_100, 5_200), limits=("1", "1Gi"))
    dns_rs = d.rs_hash()
    dns_image = "mcr.microsoft.com/oss/kubernetes/coredns:v1.9.4-hotfix.20240704"
    d.add_deployment("coredns", 2, revision=6, image=dns_image, rs=dns_rs, namespace="kube-system")
    dns = d.healthy_pods("coredns", dns_rs, 2, dns_image, started=(20_000, 20_100), limits=("3", "500Mi"),
                         nodes=nodes[:2], namespace="kube-system")  # fmt: skip
    for p in pods:
        at = 18.0
        while at > 0.1:
            d.dd(at, "error", "payout-service", p["name"], f"payout batch {d.rng.randint(70_000, 79_999)} failed: "
                 'Post "https://api.bankpartner.example/v2/payouts": dial tcp: lookup api.bankpartner.example on '
                 "10.0.0.10:53: server misbehaving", pod=p["name"], deployment="payout-service")  # fmt: skip
            at -= d.rng.uniform(1, 3)
        at = 50.0
        while at > 0.5:
            d.dd(
                at,
                "info",
                "payout-service",
                p["name"],
                f"ledger entry {d.rng.randint(1_000_000, 9_999_999)} "
                "posted via ledger-api.payments.svc.cluster.local 200",
                pod=p["name"],
                deployment="payout-service",
            )
            at -= d.rng.uniform(3, 7)
    for p in dns:
        at = 18.2
        while at > 0.1:
            d.dd(at, "error", "coredns", p["name"], f"[ERROR] plugin/errors: 2 api.bankpartner.example. A: read udp "
                 f"10.244.{d.rng.randint(0, 3)}.{d.rng.randint(2, 60)}:{d.rng.randint(30_000, 60_000)}->10.0.0.4:53: "
                 "i/o timeout", pod=p["name"], deployment="coredns", namespace="kube-system")  # fmt: skip
            at -= d.rng.uniform(0.5, 2)
    background(d, others=2)
    d.workload_monitors("errors")
    d.add_monitor("CoreDNS forward errors", "sum(last_5m):sum:coredns.forward_healthcheck_failure_count"
                  f"{{{d.scope(namespace='kube-system')}}}.as_count() > 10", "Alert")  # fmt: skip
    d.add_monitor("Synthetics: api.bankpartner.example /v2/health", "synthetics(\"api.bankpartner.example "
                  "health\").over(\"*\").last(2).count_by_status()", type="synthetics alert")  # fmt: skip
    d.set_alert("errors", value="0.64")
    return d


def s021() -> Drill:
    d = drill("021-node-lost-sparse-evidence", 25, 5, 46)
    bad = d.add_node(name="gke-maps-prod-default-pool-3f9a1c2e-x7kd", ready="Unknown")
    good = d.add_nodes(3)
    rs = d.rs_hash()
    image = d.image("tile-server", "2.21.1")
    d.add_deployment("tile-server", 6, revision=40, image=image, rs=rs, ready=3, available=3)
    d.healthy_pods("tile-server", rs, 3, image, started=(6_200, 6_300), limits=("2", "3Gi"), nodes=good)
    lost = []
    for _ in range(3):
        c = d.container("tile-server", image, limits=("2", "3Gi"), started=6_250)
        cond = [{"type": "PodScheduled", "status": "True", "reason": "", "message": ""},
                {"type": "Ready", "status": "False", "reason": "NodeLost",
                 "message": f"Node {bad} which was running pod tile-server is unresponsive"}]  # fmt: skip
        lost.append(d.add_pod("tile-server", rs, bad, [c], started=6_250, phase="Unknown", conditions=cond))
    for p in lost:
        p["conditions"][1]["message"] = f"Node {bad} which was running pod {p['name']} is unresponsive"
    d.dd(8.4, "warn", "kube-controller-manager", "gke-control-plane", f"Node {bad} hasn't been updated for "
         "1m40.003s. Last Ready is: &NodeCondition{Type:Ready,Status:Unknown,Reason:NodeStatusUnknown,"
         "Message:Kubelet stopped posting node status.,}")  # fmt: skip
    for p in d.pods:
        if p["labels"]["app.kubernetes.io/name"] != "tile-server":
            continue
        end = 9.8 if p in lost else 0.2
        d.requests_log(p, "tile-server", (55, end), 1.2, paths=("/tiles/12", "/tiles/13", "/tiles/14"), ms=(3, 40))
    gw = f"tile-gateway-{d.rs_hash()}-{d.suffix()}"
    for _ in range(14):
        d.dd(d.rng.uniform(0.2, 9.5), "error", "tile-gateway", gw, "upstream timed out (110: Connection timed out) "
             f"while connecting to upstream, upstream: \"http://{d.ip()}:8080/tiles/14/{d.rng.randint(8000, 9000)}/"
             f'{d.rng.randint(5000, 6000)}.png"', pod=gw, deployment="tile-gateway")  # fmt: skip
    background(d, others=2)
    d.set_alert("unavailable", value="3")
    return d


def s022() -> Drill:
    d = drill("022-vendor-api-outage", 26, 18, 40)
    d.add_nodes(4)
    rs = d.rs_hash()
    image = d.image("booking-api", "10.3.2")
    d.add_deployment("booking-api", 4, revision=77, image=image, rs=rs)
    pods = d.healthy_pods("booking-api", rs, 4, image, started=(3_800, 3_900), limits=("1", "1Gi"))
    for p in pods:
        at = 16.0
        while at > 0.1:
            venue = d.rng.randint(1000, 9999)
            if d.rng.random() < 0.7:
                msg = (f"seat map request failed: GET https://api.seatplan.example/v3/venues/{venue}/seats: 503 "
                       f"Service Unavailable ({d.rng.randint(900, 1400)}ms)")  # fmt: skip
            else:
                msg = (f"seat map request failed: GET https://api.seatplan.example/v3/venues/{venue}/seats: context "
                       "deadline exceeded (Client.Timeout exceeded while awaiting headers) after 5000ms")  # fmt: skip
            d.dd(at, "error", "booking-api", p["name"], msg, pod=p["name"], deployment="booking-api")
            d.dd(at - 0.01, "warn", "booking-api", p["name"], "POST /v1/bookings 502 seat hold failed",
                 pod=p["name"], deployment="booking-api")  # fmt: skip
            at -= d.rng.uniform(0.4, 1.5)
        d.requests_log(p, "booking-api", (55, 16.5), 1.5, paths=("/v1/bookings", "/v1/events"), ms=(30, 200))
    # The red herring: an old readiness warning of another deployment, which is Ready now.
    brs, bimage = d.rs_hash(), d.image("promo-banner", "0.9.4")
    d.add_deployment("promo-banner", 1, revision=6, image=bimage, rs=brs)
    (banner,) = d.healthy_pods("promo-banner", brs, 1, bimage, started=(3_000, 3_000))
    d.event(
        f"Pod/{banner['name']}",
        "Unhealthy",
        'Readiness probe failed: Get "http://10.52.7.19:3000/ready": '
        "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
        first=58,
        last=52,
        count=3,
    )
    background(d, others=2)
    d.workload_monitors("errors", latency="Alert")
    d.add_monitor("seatplan upstream error rate (booking-api)", "sum(last_5m):sum:trace.http.request.errors{service:"
                  "booking-api,peer.hostname:api.seatplan.example}.as_count() / sum:trace.http.request.hits{service:"
                  "booking-api,peer.hostname:api.seatplan.example}.as_count() > 0.2", "Alert")  # fmt: skip
    d.set_alert("errors", value="0.38")
    return d


def s023() -> Drill:
    d = drill("023-recovered-node-flap", 27, 1, 15)
    flap = d.add_node(name="ip-10-88-14-203.ap-southeast-2.compute.internal", ip="10.88.14.203")
    others = d.add_nodes(3)
    rs = d.rs_hash()
    image = d.image("transcode-api", "3.0.11")
    d.add_deployment("transcode-api", 6, revision=25, image=image, rs=rs)
    d.healthy_pods("transcode-api", rs, 3, image, started=(7_000, 7_100), limits=("4", "6Gi"), nodes=others)
    replacements = []
    for i in range(3):
        c = d.container("transcode-api", image, limits=("4", "6Gi"), started=18.9 - i * 0.2)
        pod = d.add_pod("transcode-api", rs, others[i], [c], started=19.1 - i * 0.2)
        replacements.append(pod)
        d.event(f"ReplicaSet/transcode-api-{rs}", "SuccessfulCreate", f"Created pod: {pod['name']}",
                first=19.2 - i * 0.2, type="Normal")  # fmt: skip
        d.normal_start(pod, 19.1 - i * 0.2)
    d.event(f"Node/{flap}", "NodeNotReady", f"Node {flap} status is now: NodeNotReady", first=24.3, type="Normal")
    d.event(f"Node/{flap}", "NodeReady", f"Node {flap} status is now: NodeReady", first=19.3, type="Normal")
    busy = others[1]
    d.event(f"Node/{busy}", "NodeHasInsufficientMemory", f"Node {busy} status is now: NodeHasInsufficientMemory",
            first=27.1, type="Normal")  # fmt: skip
    d.event(f"Node/{busy}", "NodeHasSufficientMemory", f"Node {busy} status is now: NodeHasSufficientMemory",
            first=21.0, type="Normal")  # fmt: skip
    for p in d.pods:
        if p["labels"]["app.kubernetes.io/name"] == "transcode-api":
            start = min(50.0, d.age(p["start_time"]) - 0.3)
            d.requests_log(p, "transcode-api", (start, 0.2), 2.5, paths=("/v1/jobs", "/v1/jobs/status"), ms=(15, 120))
    background(d, others=2)
    d.workload_monitors("unavailable_30m")
    d.set_alert("unavailable_30m", value="0.56")
    for _ in range(3):  # the lost pods: gone, their events kept
        lost = f"transcode-api-{rs}-{d.suffix()}"
        d.event(f"Pod/{lost}", "NodeNotReady", "Node is not ready", first=24.2)
        d.event(f"Pod/{lost}", "TaintManagerEviction", f"Marking for deletion Pod {d.ns}/{lost}", first=19.35,
                type="Normal")  # fmt: skip
    return d


def s024() -> Drill:
    d = drill("024-liveness-kills-slow-startup", 28, 14, 50)
    nodes = d.add_nodes(3, instance_type="m6i.2xlarge")
    rs, old_rs = d.rs_hash(), d.rs_hash()
    image = d.image("claims-processor", "11.4.0")
    d.add_deployment(
        "claims-processor",
        2,
        revision=27,
        image=image,
        rs=rs,
        ready=0,
        available=0,
        progressing=("True", "ReplicaSetUpdated", f'ReplicaSet "claims-processor-{rs}" is progressing.'),
    )
    pods = []
    for i in range(2):
        name = f"claims-processor-{rs}-{d.suffix()}"
        last = d.terminated("Error", 143, d.rng.uniform(0.3, 1.5), 0.85)
        c = d.container("claims-processor", image, restarts=d.rng.randint(4, 5), last=last, ready=False,
                        state=crash_waiting(d, name, "claims-processor"), limits=("2", "3Gi"))  # fmt: skip
        pod = d.add_pod("claims-processor", rs, nodes[i], [c], started=9.3 - i * 0.1, name=name)
        pods.append(pod)
        ip = d.ip()
        obj = f"Pod/{name}"
        d.event(obj, "Unhealthy", f'Liveness probe failed: Get "http://{ip}:8080/actuator/health/liveness": dial tcp '
                f"{ip}:8080: connect: connection refused", first=8.9, last=1.4, count=15)  # fmt: skip
        d.event(obj, "Killing", "Container claims-processor failed liveness probe, will be restarted", first=8.6,
                last=1.4, count=c["restart_count"], type="Normal")  # fmt: skip
        back_off(d, pod, 7.5, d.rng.randint(6, 9))
    d.scaled("claims-processor", old_rs, 0, 9.6, down=True)
    d.scaled("claims-processor", rs, 2, 9.4)
    log = [(2.3, "INFO", "Starting ClaimsProcessorApplication v11.4.0 using Java 21.0.3 with PID 1"),
           (2.29, "INFO", "The following 2 profiles are active: \"prod\", \"kafka\""),
           (2.2, "INFO", "Bootstrapping Spring Data JPA repositories in DEFAULT mode."),
           (2.1, "INFO", "HikariPool-1 - Starting..."), (2.05, "INFO", "HikariPool-1 - Start completed."),
           (1.9, "INFO", "Initialized JPA EntityManagerFactory for persistence unit 'default'"),
           (1.75, "INFO", "Loading rules catalogue: 48211 rules from claims_rules"),
           (1.5, "INFO", "Warming rule cache (12 partitions)"),
           (1.45, "INFO", "Rule cache partition 4/12 warmed"),
           (1.41, "INFO", "Commencing graceful shutdown. Waiting for active requests to complete"),
           (1.4, "INFO", "Graceful shutdown complete")]  # fmt: skip
    d.set_pod_log(pods[0], log)
    d.set_last_run(pods[0], 2.3, 1.39)
    for p in pods:
        d.dd(d.rng.uniform(1.5, 8), "info", "claims-processor", p["name"], "Started ClaimsProcessorApplication: not "
             "reached; Warming rule cache (12 partitions)", pod=p["name"], deployment="claims-processor")  # fmt: skip
    d.dd(9.8, "info", "argocd-application-controller", "argocd-application-controller-0", "Sync operation to 3d9e10a "
         "succeeded (application claims-processor, 1 resource updated: Deployment/claims-processor)",
         namespace="argocd")  # fmt: skip
    background(d, others=2)
    d.workload_monitors("restarts", unavailable="Alert")
    d.set_alert("restarts", value="4", pod=pods[1]["name"])
    d.dd(9.75, "info", "argocd-notifications-controller", f"argocd-notifications-controller-{d.rs_hash()}-"
         f"{d.suffix()}", 'Sent on-sync-succeeded for application claims-processor: revision 3d9e10a "claims-processor'
         ' 11.4.0; livenessProbe.initialDelaySeconds 90 -> 20"', namespace="argocd")  # fmt: skip
    # A pod of revision 26, restarted on a node drain earlier in the hour, logged how long a start takes.
    old = f"claims-processor-{old_rs}-{d.suffix()}"
    d.dd(52.4, "info", "claims-processor", old, "Starting ClaimsProcessorApplication v11.3.2 using Java 21.0.3 "
         "with PID 1", pod=old, deployment="claims-processor")  # fmt: skip
    d.dd(51.1, "info", "claims-processor", old, "Started ClaimsProcessorApplication in 74.6 seconds (process running "
         "for 76.2)", pod=old, deployment="claims-processor")  # fmt: skip
    return d


def s025() -> Drill:
    d = drill("025-rollout-init-container-wait", 29, 9, 21)
    nodes = d.add_nodes(4)
    new_rs, old_rs = d.rs_hash(), d.rs_hash()
    new_image, old_image = d.image("product-indexer", "8.0.0"), d.image("product-indexer", "7.9.4")
    d.add_deployment("product-indexer", 4, revision=15, image=new_image, rs=new_rs, ready=3, available=3, updated=1,
                     progressing=("False", "ProgressDeadlineExceeded",
                                  f'ReplicaSet "product-indexer-{new_rs}" has timed out progressing.'))  # fmt: skip
    d.healthy_pods("product-indexer", old_rs, 3, old_image, started=(8_400, 8_500), limits=("1", "2Gi"))
    wait_image = "docker.io/bitnami/kubectl:1.30.2"
    init = d.container("wait-for-migrations", wait_image, ready=False, limits=("100m", "64Mi"), started=26.4)
    main = d.container("product-indexer", new_image, ready=False, limits=("1", "2Gi"),
                       state=d.waiting("PodInitializing", ""))  # fmt: skip
    cond = [{"type": "PodScheduled", "status": "True", "reason": "", "message": ""},
            {"type": "Initialized", "status": "False", "reason": "ContainersNotInitialized",
             "message": "containers with incomplete status: [wait-for-migrations]"},
            {"type": "ContainersReady", "status": "False", "reason": "ContainersNotReady",
             "message": "containers with unready status: [product-indexer]"},
            {"type": "Ready", "status": "False", "reason": "ContainersNotReady",
             "message": "containers with unready status: [product-indexer]"}]  # fmt: skip
    pod = d.add_pod("product-indexer", new_rs, nodes[2], [init, main], started=26.6, phase="Pending", conditions=cond)
    obj = f"Pod/{pod['name']}"
    d.event(obj, "Scheduled", f"Successfully assigned catalog/{pod['name']} to {nodes[2]}", first=26.6, type="Normal")
    d.event(obj, "Pulled", f'Container image "{wait_image}" already present on machine', first=26.5, type="Normal")
    d.event(obj, "Created", "Created container wait-for-migrations", first=26.5, type="Normal")
    d.event(obj, "Started", "Started container wait-for-migrations", first=26.4, type="Normal")
    d.scaled("product-indexer", new_rs, 1, 26.7)
    d.scaled("product-indexer", old_rs, 3, 26.65, down=True)
    d.event("Deployment/product-indexer", "ProgressDeadlineExceeded", 'Deployment "product-indexer" has timed out '
            "progressing", first=16.6)  # fmt: skip
    at = 26.3
    while at > 0.05:
        d.dd(at, "warn", "product-indexer", pod["name"], 'Error from server (NotFound): jobs.batch '
             '"product-db-migrate-47" not found; waiting 10s', ["container_name:wait-for-migrations"],
             pod=pod["name"], deployment="product-indexer")  # fmt: skip
        at -= 1 / 6
    for p in [p for p in d.pods if p["labels"]["pod-template-hash"] == old_rs]:
        d.requests_log(p, "product-indexer", (50, 0.2), 3, paths=("/index/batch",), status=202, ms=(100, 900))
    background(d, others=2)
    d.workload_monitors("unavailable")
    d.add_monitor("Catalog index freshness", "max(last_15m):max:catalog.index.lag_seconds{env:prod} > 900", "Warn")
    d.set_alert("unavailable", value="1")
    # The release's migration ran before the rollout, under the Job's new name; the Job and its pod are gone
    # since (ttlSecondsAfterFinished), their events stay. The init container still waits for the old name.
    job = "Job/product-indexer-migrate-47"
    d.event(job, "SuccessfulCreate", "Created pod: product-indexer-migrate-47-rps6f", first=28.9, type="Normal")
    d.event(job, "Completed", "Job completed", first=27.6, type="Normal")
    return d


def s026() -> Drill:
    d = drill("026-dual-oom-and-quota", 30, 19, 12)
    nodes = d.add_nodes(5, instance_type="m6i.2xlarge")
    rs = d.rs_hash()
    image = d.image("bid-server", "14.2.0")
    message = (f'pods "bid-server-{rs}-{d.suffix()}" is forbidden: exceeded quota: ads-quota, requested: '
               "limits.memory=1Gi, used: limits.memory=10Gi, limited: limits.memory=10Gi")  # fmt: skip
    dep = d.add_deployment("bid-server", 12, revision=61, image=image, rs=rs, ready=5, available=5, updated=8)
    dep["conditions"].append({"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": message})
    pods = []
    for i in range(8):
        name = f"bid-server-{rs}-{d.suffix()}"
        last = d.terminated("OOMKilled", 137, d.rng.uniform(0.4, 12), d.rng.uniform(2, 6))
        crash = i >= 5
        c = d.container("bid-server", image, restarts=d.rng.randint(3, 6), last=last, ready=not crash,
                        state=crash_waiting(d, name, "bid-server") if crash else None, limits=("1", "1Gi"),
                        started=d.rng.uniform(0.5, 3))  # fmt: skip
        pods.append(d.add_pod("bid-server", rs, nodes[i % 5], [c], started=6_000 + i, name=name))
    for p in pods[5:]:
        back_off(d, p, 36, d.rng.randint(10, 16))
    d.event("HorizontalPodAutoscaler/bid-server", "SuccessfulRescale", "New size: 12; reason: cpu resource "
            "utilization (percentage of request) above target", first=21, type="Normal")  # fmt: skip
    d.event("Deployment/bid-server", "ScalingReplicaSet", f"Scaled up replica set bid-server-{rs} to 12 from 8",
            first=20.9, type="Normal")  # fmt: skip
    d.event(f"ReplicaSet/bid-server-{rs}", "FailedCreate", f"Error creating: {message}", first=20.8, last=0.4, count=21)
    lines = [
        (3.6, "INFO", "bid-server 14.2.0 starting (workers=8)"),
        (3.55, "INFO", "loading targeting cache: 1148220 segments from s3://ads-targeting-prod/segments/"),
    ]
    for k, m in enumerate((3.3, 3.0, 2.7, 2.4)):
        lines.append((m, "INFO", f"targeting cache at {(k + 1) * 260}k segments, heap {480 + k * 160}MiB"))
    d.set_pod_log(pods[0], lines)
    for p in pods[:5]:
        c = p["containers"][0]
        finished = d.age(c["last_state"]["finished_at"])
        c["state"]["started_at"] = d.ago(min(d.age(c["state"]["started_at"]), finished - 0.2))
    d.set_last_run(pods[0], 3.65, 2.3, restarted=2.0)
    for p in pods[:5]:
        d.requests_log(p, "bid-server", (30, 0.2), 1.0, paths=("/bid", "/win"), ms=(40, 900))
    background(d, others=2)
    d.workload_monitors("latency", memory="Alert", unavailable="Alert")
    d.add_monitor("ResourceQuota ads-quota usage", "max(last_5m):max:kubernetes_state.resourcequota.limits.memory.used"
                  f"{{{d.scope()},resourcequota:ads-quota}} / max:kubernetes_state.resourcequota.limits.memory.limit"
                  f"{{{d.scope()},resourcequota:ads-quota}} > 0.95", "Alert")  # fmt: skip
    d.set_alert("latency", value="2.2")
    return d


def s027() -> Drill:
    d = drill("027-dual-image-tag-and-configmap", 31, 7, 28)
    nodes = d.add_nodes(3)
    new_rs, old_rs = d.rs_hash(), d.rs_hash()
    new_image, old_image = d.image("contact-api", "4.2.O"), d.image("contact-api", "4.1.9")
    d.add_deployment(
        "contact-api",
        3,
        revision=19,
        image=new_image,
        rs=new_rs,
        ready=2,
        available=2,
        updated=2,
        progressing=("True", "ReplicaSetUpdated", f'ReplicaSet "contact-api-{new_rs}" is progressing.'),
    )
    api = d.healthy_pods("contact-api", old_rs, 2, old_image, started=(9_000, 9_100), limits=("1", "1Gi"))
    for i in range(2):
        name = f"contact-api-{new_rs}-{d.suffix()}"
        c = d.container("contact-api", new_image, ready=False, limits=("1", "1Gi"),
                        state=d.waiting("ImagePullBackOff", f'Back-off pulling image "{new_image}"'))  # fmt: skip
        d.add_pod("contact-api", new_rs, nodes[i], [c], started=8 - i * 0.4, phase="Pending", name=name)
        obj = f"Pod/{name}"
        d.event(obj, "Failed", f'Failed to pull image "{new_image}": rpc error: code = NotFound desc = failed to pull '
                f'and unpack image "{new_image}": failed to resolve reference "{new_image}": {new_image}: not found',
                first=7.8 - i * 0.4, last=1.3, count=6)  # fmt: skip
        d.event(obj, "Failed", "Error: ImagePullBackOff", first=7.7 - i * 0.4, last=0.3, count=31)
    srs, simage = d.rs_hash(), d.image("contact-sync", "2.6.0")
    d.add_deployment(
        "contact-sync",
        2,
        revision=8,
        image=simage,
        rs=srs,
        ready=0,
        available=0,
        progressing=("True", "ReplicaSetUpdated", f'ReplicaSet "contact-sync-{srs}" is progressing.'),
    )
    missing = 'configmap "contact-sync-settings" not found'
    for i in range(2):
        name = f"contact-sync-{srs}-{d.suffix()}"
        c = d.container("contact-sync", simage, ready=False, limits=("500m", "512Mi"),
                        state=d.waiting("CreateContainerConfigError", missing))  # fmt: skip
        d.add_pod("contact-sync", srs, nodes[2 - i], [c], started=7.9 - i * 0.2, phase="Pending", name=name)
        d.event(f"Pod/{name}", "Failed", f"Error: {missing}", first=7.7 - i * 0.2, last=0.2, count=36)
    d.scaled("contact-api", new_rs, 1, 8.1)
    d.scaled("contact-api", old_rs, 2, 8.05, down=True)
    d.scaled("contact-api", new_rs, 2, 7.6)
    d.event("Deployment/contact-sync", "ScalingReplicaSet", f"Scaled up replica set contact-sync-{srs} to 2",
            first=8.0, type="Normal")  # fmt: skip
    d.dd(
        8.3,
        "info",
        "argocd-application-controller",
        "argocd-application-controller-0",
        "Sync operation to 0b7c55e "
        "succeeded (application crm-2026-05, 2 resources updated: Deployment/contact-api, Deployment/contact-sync)",
    )
    for p in api:
        d.requests_log(p, "contact-api", (45, 0.2), 1.5, paths=("/v1/contacts", "/v1/contacts/search"), ms=(10, 90))
    background(d, others=2)
    d.workload_monitors("unavailable", errors="Warn")
    d.add_monitor("Unavailable replicas on contact-sync", "max(last_10m):max:kubernetes_state.deployment."
                  f"replicas_unavailable{{{d.scope('contact-sync')}}} > 0", "Alert")  # fmt: skip
    d.set_alert("unavailable", value="1")
    return d


def s028() -> Drill:
    d = drill("028-dual-conntrack-dns-and-provider", 12, 15, 49)
    hot = d.add_node(name="gke-fares-prod-pool-1-8c2d41aa-q2vm")
    d.add_nodes(3, pool="pool-1")
    rs = d.rs_hash()
    image = d.image("fare-quoter", "5.9.1")
    d.add_deployment("fare-quoter", 4, revision=36, image=image, rs=rs)
    pods = d.healthy_pods("fare-quoter", rs, 4, image, started=(4_000, 4_100), limits=("1", "1Gi"))
    dns_rs, dns_image = d.rs_hash(), "registry.k8s.io/coredns/coredns:v1.11.3"
    d.add_deployment("coredns", 2, revision=4, image=dns_image, rs=dns_rs, namespace="kube-system")
    d.healthy_pods("coredns", dns_rs, 2, dns_image, started=(15_000, 15_100), limits=("1", "256Mi"), nodes=[hot],
                   namespace="kube-system")  # fmt: skip
    at = 22.0
    while at > 0.1:
        d.dd(at, "warn", "kernel", hot, "nf_conntrack: nf_conntrack: table full, dropping packet")
        at -= d.rng.uniform(0.1, 0.6)
    lines = []
    for p in pods:
        at = 21.0
        while at > 0.1:
            if d.rng.random() < 0.5:
                msg = ("rates lookup failed: dial tcp: lookup rates-cache.fares.svc.cluster.local on 10.96.0.10:53: "
                       f"read udp {d.ip()}:{d.rng.randint(30_000, 60_000)}->10.96.0.10:53: i/o timeout")  # fmt: skip
            else:
                msg = ('fare request to https://api.faregrid.example/v1/quotes failed: 503 Service Unavailable: '
                       '{"error":"scheduled maintenance until 16:30 UTC"}')  # fmt: skip
            d.dd(at, "error", "fare-quoter", p["name"], msg, pod=p["name"], deployment="fare-quoter")
            if p is pods[0]:
                lines.append((at, "ERROR", msg))
            at -= d.rng.uniform(0.3, 1.2)
        d.requests_log(p, "fare-quoter", (50, 21.5), 1.5, paths=("/v1/quote", "/v1/quote/batch"), ms=(20, 160))
    lines += [(m, "INFO", f"GET /v1/quote 200 {d.rng.randint(30, 150)}ms") for m in (29.0, 26.4, 24.1, 22.2)]
    d.set_pod_log(pods[0], lines)
    background(d, others=2)
    d.workload_monitors("errors", latency="Alert")
    d.add_monitor("CoreDNS p99 latency", "percentile(last_5m):p99:coredns.request_duration.seconds"
                  f"{{{d.scope(namespace='kube-system')}}} > 0.5", "Alert")  # fmt: skip
    d.add_monitor("faregrid upstream error rate (fare-quoter)", "sum(last_5m):sum:trace.http.request.errors{service:"
                  "fare-quoter,peer.hostname:api.faregrid.example}.as_count() / sum:trace.http.request.hits{service:"
                  "fare-quoter,peer.hostname:api.faregrid.example}.as_count() > 0.2", "Alert")  # fmt: skip
    d.set_alert("errors", value="0.47")
    return d


def s029() -> Drill:
    d = drill("029-dual-evictions-and-unschedulable", 14, 23, 3)
    names = [f"aks-nodepool1-58213377-vmss00000{i}" for i in range(4)]
    for i, name in enumerate(names):
        d.add_node(name=name, memory_pressure="True" if i < 2 else "False")
    rs = d.rs_hash()
    image = d.image("loader-api", "3.3.0")
    d.add_deployment("loader-api", 6, revision=22, image=image, rs=rs, ready=3, available=3)
    running = d.healthy_pods("loader-api", rs, 3, image, started=(6_500, 6_600), limits=("1", "2Gi"),
                             nodes=names[2:])  # fmt: skip
    for p in running:
        p["containers"][0]["resources"]["requests"] = {"cpu": "500m", "memory": "1Gi"}
    for i in range(3):
        node = names[i % 2]
        message = ("The node was low on resource: memory. Threshold quantity: 100Mi, available: "
                   f"{d.rng.randint(48, 90)}Mi. Container loader-api was using {d.rng.randint(1300, 1600)}Mi, request "
                   "is 1Gi, has larger consumption of memory.")  # fmt: skip
        state = d.terminated("Evicted", 137, 14 - i * 2, 6_000, message=message)
        c = d.container("loader-api", image, ready=False, limits=("1", "2Gi"), requests=("500m", "1Gi"), state=state)
        cond = [{"type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet", "message": message},
                {"type": "PodScheduled", "status": "True", "reason": "", "message": ""},
                {"type": "Ready", "status": "False", "reason": "PodFailed", "message": ""}]  # fmt: skip
        pod = d.add_pod("loader-api", rs, node, [c], started=6_020 + i, phase="Failed", conditions=cond,
                        extra={"reason": "Evicted", "message": message})  # fmt: skip
        d.event(f"Pod/{pod['name']}", "Evicted", message, first=14.1 - i * 2)
    unschedulable = ("0/4 nodes are available: 2 Insufficient memory, 2 node(s) had untolerated taint "
                     "{node.kubernetes.io/memory-pressure: }. preemption: 0/4 nodes are available: 2 No preemption "
                     "victims found for incoming pod, 2 Preemption is not helpful for scheduling.")  # fmt: skip
    for i in range(3):
        pod = _pending(d, "loader-api", rs, image, unschedulable, 13.9 - i * 2, ("1", "2Gi"), ("500m", "1Gi"))
        d.event(f"Pod/{pod['name']}", "FailedScheduling", unschedulable, first=13.9 - i * 2, last=0.5, count=7)
    for node in names[:2]:
        d.event(f"Node/{node}", "NodeHasInsufficientMemory", f"Node {node} status is now: NodeHasInsufficientMemory",
                first=16.5, type="Normal")  # fmt: skip
        d.event(f"Node/{node}", "EvictionThresholdMet", "Attempting to reclaim memory", first=16.4, last=1.2, count=5)
    nrs, nimage = d.rs_hash(), d.image("adhoc-notebook", "2024.10")
    d.add_deployment("adhoc-notebook", 2, revision=4, image=nimage, rs=nrs)
    notebooks = []
    for node in names[:2]:
        c = d.container("adhoc-notebook", nimage, started=300)
        c["resources"] = {"requests": {"cpu": "250m", "memory": "512Mi"}}
        notebooks.append(d.add_pod("adhoc-notebook", nrs, node, [c], started=300))
    nb = notebooks[0]["name"]
    d.dd(19, "info", "adhoc-notebook", nb, "kernel 3f1c: loaded dataset shipments_2025 (11.8 GiB) into memory",
         pod=nb, deployment="adhoc-notebook")  # fmt: skip
    for p in running:
        d.requests_log(p, "loader-api", (45, 0.2), 1.5, paths=("/v1/loads", "/v1/loads/status"), ms=(30, 700))
    caller_errors(d, "warehouse-web", "loader-api", "/v1/loads", (13, 0.2), 1.0)
    background(d, others=2)
    d.workload_monitors("errors", unavailable="Alert", latency="Alert")
    d.add_monitor(
        f"Memory pressure on {d.key.cluster} nodes",
        "max(last_5m):max:kubernetes_state.node.by_condition"
        f"{{kube_cluster_name:{d.key.cluster},condition:memorypressure,status:true}} > 0",
        "Alert",
    )
    d.set_monitor(f"Pods not ready in {d.ns}", "Alert")
    d.set_alert("errors", value="0.09")
    return d


HARD = (s015, s016, s017, s018, s019, s020, s021, s022, s023, s024, s025, s026, s027, s028, s029)
