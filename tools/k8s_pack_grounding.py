"""The grounded part of the `k8s` pack's answer keys, derived from each scenario's generated evidence.

For every failure mode of a row (`k8s_pack_keys.py`), `grounding(key, drill)` reads the records the scenario's
drill injected (`k8s_pack_scenarios*.py`) in Kubernetes' own words: the pods whose containers wait in
CrashLoopBackOff or ImagePullBackOff, last terminated OOMKilled or with EX_CONFIG (78), stay unscheduled or were
evicted; the events that say so (BackOff, Failed, FailedScheduling, FailedCreate "exceeded quota", Unhealthy,
NodeNotReady, ProgressDeadlineExceeded, Evicted); the nodes not Ready or under pressure; the monitors in Alert
that measure the fault. From them come:

- `location`: the faulty pods, their deployments, the nodes at fault (a lost node alone: the pods it took down
  are its victims), and the row's `where` (a dependency's host);
- `decisive`: per mode, 1-3 `ItemSelector`s naming those items by the identity fields of `domains/k8s/payloads.py`
  (plus the row's `clues`, log text only a log can show), with the fact a citation must state where one fits and
  the least informative bound it may state, read off the data (`bounds`): restarts above 2 (or above the most any
  pod not at fault has) for a crash loop, a deployment's ready replicas below its desired ones, a node's
  readiness below 0.5, a monitor above 0.5 (Alert, not Warn). The pods of one replica set are named by its
  prefix (`checkout-7d9f-*`) when every pod with that prefix is at fault. From difficulty 2 on, a mode with
  `k8s_pack_keys.CAUSES` entries is decided by those instead: the items showing its cause (the exception, the
  missing key, the taint, the dependency's answer) in words no mode's name uses, since the records above carry
  the mode's own words (OOMKilled, ImagePullBackOff, FailedScheduling, exceeded quota) and a labeller's grep
  finds them;
- `refuting`: per ruled-out hypothesis, the items `k8s_pack_keys.REFUTES` names for it, else the items that
  contradict it (a Ready node refutes `node_not_ready`, a scheduled pod `pending_pod`), else the records of the
  true modes found above, since evidence of the real fault is what dismisses the alternative.

A healthy scenario has no location; its decisive items show health (the workload's deployment with every
replica ready, its pods below one restart, the node that came back Ready). `test_pack_keys.py` checks every
selector against the loaded scenario's items.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from k8s_drill import Drill, Json
from k8s_pack_keys import CAUSES, REFUTES, Key

MAX_SELECTORS = 3
"""Per mode and per ruled-out hypothesis."""
CAUSE_DIFFICULTY = 2
"""From this difficulty on, a mode's decisive items are its cause's (`k8s_pack_keys.CAUSES`), not the
records that carry the mode's own words."""
EX_CONFIG = 78
CRASH_RESTARTS = 2
"""A crash loop's pods restarted more than this (and more than any pod not at fault): one or two restarts are
the noise every namespace has."""
READY = 0.5
"""A node's point is 1 Ready, 0 not; a monitor's 1 Alert, 0.5 Warn, 0 OK (`domains/k8s/payloads.py`)."""
_QUOTA = re.compile(r"exceeded quota: ([a-z0-9.-]+)")

Selector = dict[str, Any]


@dataclass
class Grounding:
    """What one scenario's answer key says about its evidence items."""

    location: list[str] = field(default_factory=list)
    decisive: dict[str, list[Selector]] = field(default_factory=dict)
    refuting: dict[str, list[Selector]] = field(default_factory=dict)


def _sel(
    kind: str, shows: Iterable[str] = (), *, above: float | None = None, below: float | None = None, **identity: str
) -> Selector:
    """A selector: the item's kind and identity, the facts a citation must state, the bound it must clear."""
    out: Selector = {"kind": kind, **identity}
    if shows:
        out["shows"] = list(shows)
    for name, bound in (("above", above), ("below", below)):
        if bound is not None:
            out[name] = int(bound) if float(bound).is_integer() else bound
    return out


def _deployment(pod: Json) -> str:
    return str((pod.get("labels") or {}).get("app.kubernetes.io/name") or pod["name"].rsplit("-", 2)[0])


def _waiting(pod: Json) -> set[str]:
    return {c["state"].get("reason", "") for c in pod["containers"] if c["state"].get("waiting")}


def _last(pod: Json) -> list[Json]:
    return [c["last_state"] for c in pod["containers"] if c.get("last_state")]


def _pod_sel(pod: Json, shows: Iterable[str] = (), **bound: float) -> Selector:
    return _sel("pod", shows, namespace=pod["namespace"], pod=pod["name"], **bound)


def _restarts(pod: Json) -> int:
    return sum(c["restart_count"] for c in pod["containers"])


class _Reader:
    """The drill's records, and the choices every rule shares."""

    def __init__(self, key: Key, d: Drill) -> None:
        self.key, self.d = key, d
        alert_pod = d.alert.get("commonAnnotations", {}).get("kube_pod")
        logged = (d.pod_log or {}).get("pod_name")
        # The pod an investigation meets first: the alert's, then the one whose log was collected.
        self._first = [n for n in (alert_pod, logged) if n]

    def has(self, letter: str) -> bool:
        return letter in self.key.evidence

    @property
    def pods(self) -> list[Json]:
        return sorted(self.d.pods, key=lambda p: p["name"]) if self.has("P") else []

    @property
    def events(self) -> list[Json]:
        return self.d.events if self.has("E") else []

    @property
    def nodes(self) -> list[Json]:
        return sorted(self.d.nodes, key=lambda n: n["name"]) if self.has("N") else []

    @property
    def alerting(self) -> list[Json]:
        return [m for m in self.d.monitors if m["overall_state"] == "Alert"] if self.has("M") else []

    def ordered(self, pods: list[Json]) -> list[Json]:
        """The pods with the ones an investigation meets first in front."""
        return sorted(pods, key=lambda p: (p["name"] not in self._first, p["name"]))

    def pods_sel(
        self, pods: list[Json], shows: Iterable[str] = (), ok: Callable[[Json], bool] | None = None, **bound: float
    ) -> Selector:
        """One selector for the first of these pods: by its replica set's prefix (`name-hash-*`) when every pod
        with that prefix is one of them and `ok` (the fact the selector asks for holds on it), else by its name."""
        first = pods[0]
        prefix = first["name"].rsplit("-", 1)[0] + "-"
        names = {p["name"] for p in pods if ok is None or ok(p)}
        members = [p["name"] for p in self.pods if p["name"].startswith(prefix)]
        if len(members) > 1 and set(members) <= names:
            return _sel("pod", shows, namespace=first["namespace"], pod=prefix + "*", **bound)
        return _pod_sel(first, shows, **bound)

    def restart_bound(self, pods: list[Json]) -> int:
        """What a faulty pod's restarts must be said to be above: `CRASH_RESTARTS`, or the most a pod not at
        fault has restarted when that is more.

        Raises:
            ValueError: no faulty pod restarted more than that (the scenario does not show a crash loop).
        """
        faulty = {p["name"] for p in pods}
        bound = max([CRASH_RESTARTS, *(_restarts(p) for p in self.pods if p["name"] not in faulty)])
        if not any(_restarts(p) > bound for p in pods):
            raise ValueError(f"{self.key.folder}: no faulty pod restarted more than {bound} times")
        return bound

    def events_about(self, pods: list[Json], reason: str, text: str = "") -> list[Json]:
        names = {f"Pod/{p['name']}" for p in pods}
        return [
            e for e in self.events if e["reason"] == reason and e["involved_object"] in names and text in e["message"]
        ]

    def monitor(self, words: str) -> list[Selector]:
        """The first monitor in Alert whose name has these words (case-insensitive), as a selector."""
        hits = [m for m in self.alerting if words.casefold() in m["name"].casefold()]
        return [_sel("monitor", ["above"], above=READY, monitor=hits[0]["name"])] if hits else []

    def service_error(self, deployments: Iterable[str]) -> list[Selector]:
        """The workload's own first error record (Datadog), as a log selector."""
        names = set(deployments)
        if not self.has("G"):
            return []
        for r in sorted(self.d.logs, key=lambda r: (r["timestamp"], r["message"])):
            if r["status"] == "error" and r["service"] in names:
                return [_sel("log", service=r["service"], text=r["message"])]
        return []


@dataclass
class _Found:
    """One mode's evidence: the decisive selectors and the location names they point at."""

    selectors: list[Selector]
    pods: list[Json] = field(default_factory=list)
    places: list[str] = field(default_factory=list)


def _pod_fault(
    r: _Reader, pods: list[Json], events: list[Selector], extra: list[Selector], *, crashing: bool
) -> _Found:
    """The faulty pods (one selector: their replica set's, or the first met), then the events and the rest.
    `crashing`: the pods restart, so a citation must say they restarted more than `restart_bound`."""
    pods = r.ordered(pods)
    first: list[Selector] = []
    if pods and crashing:
        bound = r.restart_bound(pods)
        # The pod met first must itself be citable: the ones that restarted more than the bound, it leading.
        over = [p for p in pods if _restarts(p) > bound]
        first = [r.pods_sel(over, ["above"], lambda p: _restarts(p) > bound, above=bound)]
    elif pods:
        first = [r.pods_sel(pods)]
    return _Found(first + events + extra, pods)


def _event(reason: str, found: list[Json], *, text: str | None = None) -> list[Selector]:
    """A selector for the events found, by reason and a text they share (default: the first one's message; ""
    for none), or no selector when none was found."""
    if not found:
        return []
    text = found[0]["message"] if text is None else text
    return [_sel("event", reason=reason, text=text) if text else _sel("event", reason=reason)]


def _crashloop(r: _Reader) -> _Found:
    pods = [p for p in r.pods if "CrashLoopBackOff" in _waiting(p) and not _oom(p) and not _ex_config(p)]
    deps = sorted({_deployment(p) for p in pods})
    backoff = _event("BackOff", r.events_about(pods, "BackOff"), text=f"in pod {deps[0]}-" if deps else None)
    return _pod_fault(r, pods, backoff, r.service_error(deps), crashing=True)


def _oom(pod: Json) -> bool:
    return any(s.get("reason") == "OOMKilled" for s in _last(pod))


def _ex_config(pod: Json) -> bool:
    return any(s.get("exit_code") == EX_CONFIG for s in _last(pod))


def _oom_killed(r: _Reader) -> _Found:
    pods = [p for p in r.pods if _oom(p)]
    kills = [e for e in r.events if e["reason"] == "OOMKilling"]
    deps = sorted({_deployment(p) for p in pods})
    memory = next((s for d in deps for s in r.monitor(f"memory near limit on {d}")), None)
    return _pod_fault(r, pods, _event("OOMKilling", kills), [memory] if memory else [], crashing=True)


def _image_pull(r: _Reader) -> _Found:
    pods = [p for p in r.pods if _waiting(p) & {"ImagePullBackOff", "ErrImagePull"}]
    image = pods[0]["containers"][0]["image"] if pods else ""
    failed = r.events_about(pods, "Failed", "Failed to pull image")
    return _pod_fault(r, pods, _event("Failed", failed, text=f'Failed to pull image "{image}"'), [], crashing=False)


def _bad_config(r: _Reader) -> _Found:
    pods = [p for p in r.pods if "CreateContainerConfigError" in _waiting(p) or _ex_config(p)]
    failed = r.events_about(pods, "Failed", "not found")
    deps = sorted({_deployment(p) for p in pods})
    # A config error that exits (EX_CONFIG) restarts the pods; one that stops the container starting does not.
    return _pod_fault(r, pods, _event("Failed", failed), r.service_error(deps), crashing=any(map(_ex_config, pods)))


def _pending(r: _Reader) -> _Found:
    pods = [p for p in r.pods if p["phase"] == "Pending" and p["node_name"] == "unscheduled"]
    events = r.events_about(pods, "FailedScheduling")
    found = _pod_fault(r, pods, _event("FailedScheduling", events, text=""), [], crashing=False)
    if found.selectors and not str(found.selectors[0].get("pod", "")).endswith("*"):
        found.selectors += [_pod_sel(p) for p in found.pods[1:2]]  # a second pending pod, when there is one
    return found


def _quota(r: _Reader) -> _Found:
    refused = [e for e in r.events if e["reason"] == "FailedCreate" and "exceeded quota" in e["message"]]
    places = []
    for e in refused:
        replica_set = e["involved_object"].partition("/")[2]
        places.append(replica_set.rsplit("-", 1)[0])
        places += _QUOTA.findall(e["message"])
    deployments = [
        _sel("deploy", ["below"], below=d["desired"], namespace=d["namespace"], deployment=d["name"])
        for d in r.d.deployments
        if d["name"] in places and r.has("D") and d["ready"] < d["desired"]
    ]
    quota = r.monitor("resourcequota")
    return _Found(_event("FailedCreate", refused, text="exceeded quota") + deployments[:1] + quota, [], places)


def _probe(r: _Reader) -> _Found:
    unhealthy = [e for e in r.events if e["reason"] == "Unhealthy" and "probe failed" in e["message"]]
    workload = [p for p in r.pods if _deployment(p) == r.key.workload]
    failing = r.events_about(workload, "Unhealthy")
    names = {e["involved_object"].partition("/")[2] for e in failing}
    pods = [p for p in workload if p["name"] in names] or [p for p in workload if _restarts(p) > 0]
    probe = next((e["message"].split(":")[0] for e in failing or unhealthy), "")
    found = _pod_fault(r, pods, _event("Unhealthy", failing, text=probe), [], crashing=True)
    found.selectors += _event("Killing", r.events_about(pods, "Killing", "probe"), text="probe")
    return found


def _node_not_ready(r: _Reader) -> _Found:
    nodes = [n for n in r.nodes if n["ready"] != "True"]
    names = [n["name"] for n in nodes]
    selectors = [_sel("node", ["below"], below=READY, node=n) for n in names[:1]]
    # The node's own NodeNotReady event (its pods' say "Node is not ready" of each victim).
    own = [
        e for e in r.events if e["reason"] == "NodeNotReady" and e["involved_object"] in {f"Node/{n}" for n in names}
    ]
    selectors += [_sel("event", reason="NodeNotReady", object=e["involved_object"]) for e in own[:1]]
    if not names and r.has("P"):  # no node file: the pods' node is the lost one
        names = sorted({p["node_name"] for p in r.pods if p["phase"] == "Unknown"})
    if r.has("G"):
        said = [x for x in sorted(r.d.logs, key=lambda x: x["timestamp"]) if any(n in x["message"] for n in names)]
        selectors += [_sel("log", text=names[0])] if said and names else []
    # The fault is the node: the pods lost with it, and their deployment, are its victims, not its location.
    return _Found(selectors, [], names)


def _rollout(r: _Reader) -> _Found:
    stuck = [
        d
        for d in r.d.deployments
        if any(c["reason"] == "ProgressDeadlineExceeded" for c in d["conditions"]) and r.has("D")
    ]
    names = [d["name"] for d in stuck] or [r.key.workload]
    events = [e for e in r.events if e["reason"] == "ProgressDeadlineExceeded"]
    selectors = _event("ProgressDeadlineExceeded", events, text="has timed out progressing")
    # The deployment shows it only when replicas are missing: a rollout held by its new pods keeps the old ready.
    selectors += [
        _sel("deploy", ["below"], below=d["desired"], namespace=d["namespace"], deployment=d["name"])
        for d in stuck[:1]
        if d["ready"] < d["desired"]
    ]
    new = [p for p in r.pods if _deployment(p) in names and not all(c["ready"] for c in p["containers"])]
    new = r.ordered(new)
    return _Found(selectors + ([r.pods_sel(new)] if new else []), new[:1], names)


def _evicted(r: _Reader) -> _Found:
    pods = [
        p for p in r.pods if p["phase"] == "Failed" and "Evicted" in {c["state"].get("reason") for c in p["containers"]}
    ]
    pressured = [n["name"] for n in r.nodes if "True" in (n["memory_pressure"], n["disk_pressure"], n["pid_pressure"])]
    evicted = _event("Evicted", r.events_about(pods, "Evicted"), text="The node was low on")
    found = _pod_fault(r, pods, evicted, [], crashing=False)
    found.selectors += [_sel("node", node=n) for n in pressured[:1]]
    found.places = pressured
    return found


def _dns(r: _Reader) -> _Found:
    dns = [p for p in r.pods if p["namespace"] == "kube-system" and _deployment(p) == "coredns"]
    unready = [p for p in dns if not all(c["ready"] for c in p["containers"])]
    return _Found(
        ([r.pods_sel(unready)] if unready else []) + _clues(r, "dns_resolution_failure") + r.monitor("coredns"), unready
    )


def _dependency(r: _Reader) -> _Found:
    monitors = next((m for w in _where(r, "dependency_unavailable") for m in r.monitor(w)), None)
    return _Found(_clues(r, "dependency_unavailable") + ([monitors] if monitors else []))


def _where(r: _Reader, mode: str) -> list[str]:
    return [name for m, name in r.key.where if m == mode]


def _clues(r: _Reader, mode: str) -> list[Selector]:
    return [_sel("log", text=text) for m, text in r.key.clues if m == mode]


def _healthy(r: _Reader) -> _Found:
    # Every replica ready: ready above desired - 1.
    selectors = [
        _sel("deploy", ["above"], above=d["desired"] - 1, namespace=d["namespace"], deployment=d["name"])
        for d in r.d.deployments
        if d["name"] == r.key.workload and r.has("D") and d["ready"] == d["desired"]
    ]
    workload = [p for p in r.pods if _deployment(p) == r.key.workload]
    calm = sorted((p for p in workload if _restarts(p) == 0), key=lambda p: p["name"])
    selectors += [r.pods_sel(calm, ["below"], lambda p: _restarts(p) == 0, below=1)] if calm else []
    flapped = [e["involved_object"].partition("/")[2] for e in r.events if e["reason"] == "NodeReady"]
    selectors += [
        _sel("node", ["above"], above=READY, node=n) for n in flapped[:1] if any(x["name"] == n for x in r.nodes)
    ]
    return _Found(selectors)


RULES: dict[str, Callable[[_Reader], _Found]] = {
    "crashloop_backoff": _crashloop,
    "oom_killed": _oom_killed,
    "image_pull_backoff": _image_pull,
    "bad_config": _bad_config,
    "pending_pod": _pending,
    "resource_quota_exceeded": _quota,
    "probe_failure": _probe,
    "node_not_ready": _node_not_ready,
    "deployment_rollout_stuck": _rollout,
    "evicted_pods": _evicted,
    "dns_resolution_failure": _dns,
    "dependency_unavailable": _dependency,
    "healthy": _healthy,
}


def _some_pods(r: _Reader, pods: list[Json]) -> list[Selector]:
    """The pods' replica set by its prefix, or the first two pods."""
    first = r.pods_sel(pods)
    return [first] if str(first["pod"]).endswith("*") else [_pod_sel(p) for p in pods[:2]]


def _refuting(r: _Reader, hypothesis: str, found: dict[str, _Found]) -> list[Selector]:
    """The items that contradict a ruled-out hypothesis (see the module docstring)."""
    pods = [p for f in found.values() for p in f.pods]
    if hypothesis == "node_not_ready":
        where = {p["node_name"] for p in pods}
        ready = [n for n in r.nodes if n["ready"] == "True"]
        ready.sort(key=lambda n: (n["name"] not in where, n["name"]))
        if ready:
            return [_sel("node", ["above"], above=READY, node=n["name"]) for n in ready[:2]]
    if hypothesis == "pending_pod":
        scheduled = [p for p in pods if p["node_name"] != "unscheduled"]
        if scheduled:
            return _some_pods(r, scheduled)
    if hypothesis == "resource_quota_exceeded" and pods:  # the pods exist: no quota refused them
        return _some_pods(r, sorted(pods, key=lambda p: (p["phase"] != "Pending", p["name"])))
    out: list[Selector] = []
    for f in found.values():
        out += [s for s in f.selectors if s not in out]
    return out[:MAX_SELECTORS]


def grounding(key: Key, d: Drill) -> Grounding:
    """The location, decisive and refuting entries of one scenario's answer key (module docstring).

    Raises:
        ValueError: a mode whose evidence no rule finds in the scenario (fix the rule or the scenario).
    """
    r = _Reader(key, d)
    found = {mode: RULES[mode](r) for mode in key.modes}
    out = Grounding()
    causes = CAUSES.get(key.folder, {}) if key.difficulty >= CAUSE_DIFFICULTY else {}
    for mode, f in found.items():
        if not f.selectors:
            raise ValueError(f"{key.folder}: no evidence item shows {mode}; add a rule or a clue")
        cause = [dict(s) for s in causes.get(mode, ())]
        out.decisive[mode] = (cause or f.selectors)[:MAX_SELECTORS]
    if key.modes != ("healthy",):
        names = [n for f in found.values() for n in (*f.places, *sorted({_deployment(p) for p in f.pods}))]
        names += [p["name"] for f in found.values() for p in f.pods] + [n for m in key.modes for n in _where(r, m)]
        out.location = list(dict.fromkeys(names))
        if not out.location:
            raise ValueError(f"{key.folder}: no location found for {', '.join(key.modes)}")
    refutes = REFUTES.get(key.folder, {})
    for hypothesis in key.ruled_out:
        specific = [dict(s) for s in refutes.get(hypothesis, ())]
        out.refuting[hypothesis] = (specific or _refuting(r, hypothesis, found))[:MAX_SELECTORS]
    return out
