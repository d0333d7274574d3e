"""The container hypotheses: OOM kills, image pull failures, a bad config or secret, crash loops, failing probes.

Each reads the workload's containers (current state and last termination), the events about its pods and the
log lines of its pods, in Kubernetes' own terms:

- **OOM kill**: a termination `OOMKilled` (exit code 137 from the kernel's OOM killer), or an out-of-memory
  message about the workload's pods, while it still restarts or recently did.
- **image pull failure**: containers `waiting` in `ErrImagePull` / `ImagePullBackOff` / `InvalidImageName`, or
  `Failed to pull image` events.
- **bad config**: `CreateContainerConfigError` (a missing Secret or ConfigMap, a missing key), `FailedMount` of
  one, or a failing container whose log says its configuration is missing or invalid.
- **crash loop**: containers that exit with an error (`CrashLoopBackOff`, a non-zero exit code, `Back-off
  restarting failed container`) for no reason the other hypotheses explain: a code defect.
- **probe failure**: `Unhealthy` events (`Liveness probe failed` with `Killing … failed liveness probe`
  restarts, or `Readiness probe failed` with pods not ready) while the pods are affected now.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from sredrill.agents.k8s_reference.casefile import CaseFile, ago
from sredrill.agents.k8s_reference.facts import (
    clip,
    clip_middle,
    container_fact,
    event_fact,
    line_fact,
    log_fact,
    plural,
    termination,
)
from sredrill.agents.k8s_reference.findings import Fact, Finding, Verdict
from sredrill.agents.k8s_reference.observations import ContainerView, EventView, LogRecord
from sredrill.agents.k8s_reference.scan import Hits, scan
from sredrill.agents.k8s_reference.signals import Signal, exit_meaning, signals_of

__all__ = ["assess_bad_config", "assess_crash", "assess_image_pull", "assess_oom", "assess_probes", "hit_facts"]

_IMAGE = re.compile(r"image\s+(?:[\"“']([^\"”']+)[\"”']|([\w./@-]+(?::[\w.-]+)?))", re.IGNORECASE)
_KEEP = 3  # facts of one kind shown per finding
_PODS = 2  # containers shown per finding: the pods met first (each a cited item of the budget)
_MIN_FAILURES = 5
_SUSTAINED = timedelta(minutes=3)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _workload(case: CaseFile) -> str:
    return f"deployment {case.workload}" if case.workload else "the workload"


def hit_facts(case: CaseFile, hits: Hits) -> list[Fact]:
    """The facts of where a signal shows now: containers, events, log records, pod log lines."""
    first = sorted(hits.containers, key=lambda c: case.met_first(c.pod))  # stable: otherwise as listed
    facts = [container_fact(case, c) for c in first[:_PODS]]
    facts += [event_fact(case, e) for e in _strongest(hits.events)[:_KEEP]]
    if hits.logs:
        facts.append(log_fact(case, hits.logs))
    by_pod: dict[str, list[LogRecord]] = {}
    for r in hits.lines:
        by_pod.setdefault(r.host, []).append(r)
    facts += [line_fact(pod, lines) for pod, lines in list(by_pod.items())[:2]]
    return facts


def history_facts(case: CaseFile, hits: Hits) -> list[Fact]:
    facts = [container_fact(case, c) for c in hits.old_containers[:_KEEP]]
    facts += [event_fact(case, e) for e in _strongest(hits.old_events)[:_KEEP]]
    if hits.old_logs:
        facts.append(log_fact(case, hits.old_logs, "(history)"))
    return facts


def _strongest(events: Sequence[EventView]) -> list[EventView]:
    """Warnings before Normal events, the most repeated first; the most telling message (the longest) is
    moved up to third place at worst, so `Failed to pull image …: no match for platform` is not lost behind
    `Error: ErrImagePull`."""
    ranked = sorted(events, key=lambda e: (not e.is_warning, -e.count, e.reason))
    telling = max(ranked, key=lambda e: len(e.message), default=None)
    if telling is not None and ranked.index(telling) >= _KEEP:
        ranked.remove(telling)
        ranked.insert(_KEEP - 1, telling)
    return ranked


def _affected(case: CaseFile) -> bool:
    """The workload is hurting now: a failing container, a pod not ready, a deployment short of replicas."""
    d = case.our_deployment
    return any(not p.healthy for p in case.our_pods) or (d is not None and (d.short or d.stalled))


_ERROR_LEVELS = frozenset({"error", "err", "fatal", "critical", "crit", "panic"})
_SHUTDOWN = re.compile(r"shut(ting)? ?down|sigterm|received signal|terminating|stopping", re.IGNORECASE)
_STARTED_IN = re.compile(r"\bstarted\b.*?\bin (\d+(?:\.\d+)?) ?(?:s|sec|secs|seconds)\b", re.IGNORECASE)
_PROBE_SETTING = re.compile(
    r"(liveness|readiness|startup)probe|initialdelayseconds|timeoutseconds|failurethreshold", re.IGNORECASE
)


def _error_lines(case: CaseFile, pods: frozenset[str] | set[str]) -> list[LogRecord]:
    """The lines of the pods' own logs that report a failure: an error level, an exception, a panic."""
    return [
        r
        for log in case.pod_logs
        if log.pod in pods
        for r in log.lines
        if r.status in _ERROR_LEVELS or Signal.CRASH in signals_of(r.message)
    ]


def _stopped_cleanly(case: CaseFile, pods: frozenset[str] | set[str]) -> tuple[str, LogRecord] | None:
    """(pod, its shutdown line) when a pod's log ends in a shutdown with no error before it: the process was
    stopped from outside (SIGTERM), it did not fail."""
    for log in case.pod_logs:
        if log.pod not in pods or not log.lines:
            continue
        if _error_lines(case, {log.pod}):
            continue
        stop = next((r for r in log.lines[-3:] if _SHUTDOWN.search(r.message)), None)
        if stop is not None:
            return log.pod, stop
    return None


def _history(mode: str, what: str, case: CaseFile, hits: Hits) -> Finding:
    """A recovered incident: what happened, the last record of it (quoted), and that it is over."""
    dated = [(e.last, e.message) for e in hits.old_events if e.last] + [
        (r.time, r.message) for r in hits.old_logs if r.time
    ]
    last = max(dated, key=lambda tm: tm[0], default=None)
    when = f" (the last {case.age(last[0])}: “{clip(last[1], 120)}”)" if last else ""
    return Finding(
        mode,
        Verdict.RECOVERED,
        f"{what} happened before, but it is over{when}: the containers have run ready since",
        facts=tuple(history_facts(case, hits)),
    )


def _image_of(case: CaseFile, hits: Hits) -> str:
    for text in [*(c.message for c in hits.containers), *(e.message for e in hits.events)]:
        m = _IMAGE.search(text)
        if m:
            return m.group(1) or m.group(2)
    image = next((c.image for c in hits.containers if c.image), "")
    d = case.our_deployment
    return image or (d.image if d is not None else "")


def _registry_answer(events: Sequence[EventView], image: str) -> str:
    """What the registry answered the pull (`code = NotFound desc = … no match for platform in manifest: not
    found`), with the image reference (already named) shortened."""
    pulls = [e.message for e in events if "failed to pull" in e.message.lower()]
    if not pulls:
        return ""
    text = max(pulls, key=len)
    text = text.split('": ', 1)[1] if text.lower().startswith("failed to pull image") and '": ' in text else text
    if image:
        text = text.replace(f'"{image}"', "…").replace(image, "…")
    return clip_middle(text, 170)


def assess_image_pull(case: CaseFile) -> Finding:
    hits = scan(case, Signal.IMAGE)
    mode = "image_pull_backoff"
    if not hits.current:
        if hits.history:
            return _history(mode, "an image pull failure", case, hits)
        pulled = [c for c in case.containers() if c.state == "running"]
        why = (
            f"not an image pull problem: {plural(len(pulled), 'container')} of {_workload(case)} run, so their "
            "images were pulled, and no ErrImagePull or ImagePullBackOff shows"
            if pulled
            else "no container waits in ErrImagePull or ImagePullBackOff and no event reports a failed pull"
        )
        return Finding(mode, Verdict.ABSENT, why)
    image = _image_of(case, hits)
    reasons = {c.reason for c in hits.containers if c.reason}
    if any("errimagepull" in e.text.lower() or "failed to pull" in e.text.lower() for e in hits.events):
        reasons.add("ErrImagePull")
    named = f"image {image}" if image else "its container image"
    pods = hits.pods
    waiting = f"{plural(len(pods), 'pod')} {'waits' if len(pods) == 1 else 'wait'}"
    answer = _registry_answer(hits.events, image)
    said = f"; the pull fails with “{answer}”" if answer else ""
    summary = (
        f"the kubelet cannot pull {named} for {_workload(case)}: "
        f"{waiting} in {' / '.join(sorted(reasons)) or 'ImagePullBackOff'} and never "
        f"{'starts' if len(pods) == 1 else 'start'}{said}"
    )
    chain = (
        f"{named} cannot be pulled (a wrong tag or repository, or no pull access)",
        "the kubelet retries with back-off (ErrImagePull, then ImagePullBackOff)",
        "the pods never start",
        "replicas unavailable",
    )
    return Finding(mode, Verdict.CAUSE, summary, chain, tuple(hit_facts(case, hits)), pods, weight=hits.weight + 5)


def assess_bad_config(case: CaseFile) -> Finding:
    hits = scan(case, Signal.CONFIG)
    mode = "bad_config"
    # Exit code 78 is EX_CONFIG (sysexits.h): the program itself says its configuration is wrong.
    config_exits = tuple(c for c in case.containers() if 78 in (c.exit_code, c.last_exit_code) and c.failing)
    if config_exits:
        hits = Hits(tuple(dict.fromkeys((*hits.containers, *config_exits))), hits.old_containers, hits.events,
                    hits.old_events, hits.logs, hits.old_logs, hits.lines)  # fmt: skip
    # A log line about configuration counts only while the workload fails; a mount or config error always does.
    strong = bool(hits.containers or hits.events)
    if not hits.current or (not strong and not _affected(case)):
        if hits.history:
            return _history(mode, "a configuration error", case, hits)
        return Finding(
            mode,
            Verdict.ABSENT,
            "no CreateContainerConfigError, no failed mount of a Secret or ConfigMap, and no container reports a "
            "missing or invalid configuration",
        )
    texts = [*(c.message or c.reason for c in hits.containers), *(e.message for e in hits.events)]
    texts += [r.message for r in (*hits.logs, *hits.lines)]
    what = _missing_object(texts)
    exits = "; its containers exit with code 78 (EX_CONFIG: a configuration error)" if config_exits else ""
    summary = f"{_workload(case)} starts with a bad configuration: {what}{exits}"
    unknown = _unknown_setting(case)
    if unknown is not None:
        # A key the program does not know, beside one it misses: most often the same key, misspelt or renamed.
        summary += f"; the configuration holds a setting the program does not know (“{clip(unknown.message, 140)}”)"
    chain = (
        f"{what}",
        "the kubelet cannot create the containers (or they exit at start)",
        "pods never become ready",
        "replicas unavailable",
    )
    return Finding(mode, Verdict.CAUSE, summary, chain, tuple(hit_facts(case, hits)), hits.pods, weight=hits.weight + 4)


_UNKNOWN_SETTING = re.compile(
    r"\b(unknown|unrecogni[sz]ed|unexpected|unsupported) (config(uration)? )?(key|field|setting|option|property)s?\b",
    re.IGNORECASE,
)


def _unknown_setting(case: CaseFile) -> LogRecord | None:
    """The workload's latest current record (a Datadog record or a pod log line) reporting a configuration
    setting the program does not know (a config loader's `unknown key "x"`), or None."""
    records = [r for r in case.logs if case.log_is_ours(r) and case.is_recent(r.time)]
    records += [r for log in case.pod_logs if case.is_ours(log.pod) for r in log.lines if case.is_recent(r.time)]
    found = [r for r in records if _UNKNOWN_SETTING.search(r.message)]
    dated = [r for r in found if r.time is not None]
    return max(dated, key=lambda r: r.time or _EPOCH) if dated else (found[-1] if found else None)


_OBJECT = re.compile(r"(secret|configmap)s?\s+\\?[\"“']?([\w.-]+)\\?[\"”']?\s+not found", re.IGNORECASE)


def _missing_object(texts: Sequence[str]) -> str:
    for text in texts:
        m = _OBJECT.search(text)
        if m:
            kind = "Secret" if m.group(1).lower() == "secret" else "ConfigMap"
            return f"the {kind} {m.group(2)} it references is missing (“{clip(text, 140)}”)"
    # The text that says what is wrong with the configuration, not the back-off it causes.
    example = next((t for t in texts if Signal.CONFIG in signals_of(t)), next((t for t in texts if t), ""))
    return f"its configuration (from its ConfigMap or Secret) is missing or wrong (“{clip(example, 160)}”)"


def _oom_containers(case: CaseFile) -> tuple[list[ContainerView], list[ContainerView]]:
    """Containers killed for memory now, and in the past only; exit code 137 counts with an OOM word nearby."""
    oom_pods = {
        e.name for e in case.events if e.kind == "Pod" and Signal.OOM in signals_of(e.message) and e.reason != "Evicted"
    }
    oom_pods |= {log.pod for log in case.pod_logs if any(Signal.OOM in signals_of(r.message) for r in log.lines)}
    now: list[ContainerView] = []
    old: list[ContainerView] = []
    for c in case.containers():
        said = Signal.OOM in signals_of(c.reason, c.message, c.last_reason, c.last_message)
        killed = 137 in (c.exit_code, c.last_exit_code) and c.pod in oom_pods
        if not (said or killed):
            continue
        current = c.failing or c.state != "running" or case.is_recent(c.last_end)
        (now if current else old).append(c)
    return now, old


def assess_oom(case: CaseFile) -> Finding:
    mode = "oom_killed"
    hits = scan(case, Signal.OOM, events=lambda e: case.event_scope(e) != "other" and e.reason != "Evicted")
    now_c, old_c = _oom_containers(case)
    current = bool(now_c or hits.events or hits.logs or hits.lines) and (bool(now_c) or _affected(case))
    if not current:
        if old_c or hits.history or hits.current:
            hits = Hits(old_containers=tuple(old_c), old_events=hits.old_events, old_logs=hits.old_logs)
            return _history(mode, "an OOM kill", case, hits)
        ends = sorted({termination(c) for c in case.containers() if termination(c)})
        why = "no container was OOMKilled and no log reports running out of memory"
        if ends:
            why += f" (terminations seen: {'; '.join(ends[:2])})"
        return Finding(mode, Verdict.ABSENT, why)
    hits = Hits(tuple(now_c), (), hits.events, (), hits.logs, (), hits.lines)
    limit = next((c.memory_limit for c in now_c if c.memory_limit), None)
    names = sorted({c.name for c in now_c})
    restarts = sum(c.restarts for c in now_c)
    who = f"container {', '.join(names[:2])} of {_workload(case)}" if names else f"the containers of {_workload(case)}"
    where = f"its {limit} memory limit" if limit else "its memory limit"
    loop = "; it restarts in CrashLoopBackOff" if any(c.reason == "CrashLoopBackOff" for c in now_c) else ""
    summary = (
        f"{who} is OOMKilled: it runs out of memory at {where} and the kernel kills it (exit code 137), "
        f"{plural(restarts, 'restart')} so far{loop}"
    )
    chain = (
        f"memory use grows past {where}",
        "the kernel's OOM killer ends the container (OOMKilled, exit code 137)",
        "the kubelet restarts it with back-off (CrashLoopBackOff)",
        "replicas flap and become unavailable",
    )
    pods = frozenset(c.pod for c in now_c) | hits.pods
    return Finding(mode, Verdict.CAUSE, summary, chain, tuple(hit_facts(case, hits)), pods, weight=hits.weight + 6)


def _crashing(case: CaseFile) -> tuple[list[ContainerView], list[ContainerView]]:
    """Containers exiting with an error now (CrashLoopBackOff, a non-zero exit), and ones that did only before."""
    now: list[ContainerView] = []
    old: list[ContainerView] = []
    for c in case.containers():
        looping = c.reason == "CrashLoopBackOff" or (c.state == "terminated" and c.exit_code not in (0, None))
        code = c.last_exit_code if c.last_exit_code is not None else c.exit_code
        errored = code not in (0, None) or c.last_reason in ("Error", "OOMKilled")
        if looping or (errored and c.restarts > 0 and (c.failing or case.is_recent(c.last_end))):
            now.append(c)
        elif errored and c.restarts > 0:
            old.append(c)
    return now, old


def assess_crash(case: CaseFile) -> Finding:
    mode = "crashloop_backoff"
    hits = scan(case, Signal.CRASH)
    now_c, old_c = _crashing(case)
    backoff = [e for e in hits.events if e.reason == "BackOff" or "restarting failed" in e.message.lower()]
    if not now_c and not backoff:
        if old_c or hits.old_events:
            when = max((c.last_end for c in old_c if c.last_end), default=None)
            since = f" (the last one {case.age(when)})" if when else ""
            return Finding(
                mode,
                Verdict.RECOVERED,
                f"earlier restarts{since} are a stale restart count: the containers have run ready since",
                facts=tuple(container_fact(case, c) for c in old_c[:_KEEP]),
            )
        return Finding(mode, Verdict.ABSENT, "no container exits with an error or waits in CrashLoopBackOff")
    hits = Hits(tuple(now_c), (), tuple(backoff) or hits.events, (), hits.logs, (), hits.lines)
    code = next((c.last_exit_code or c.exit_code for c in now_c if (c.last_exit_code or c.exit_code)), None)
    exits = f"exits with code {code} ({exit_meaning(code)})" if code is not None else "exits with an error"
    errors = [r.message for r in (*hits.lines, *hits.logs)]
    said = f"; its log says “{clip(errors[-1], 140)}”" if errors else ""
    stopped = _stopped_cleanly(case, {c.pod for c in now_c}) if code in (137, 143) and not errors else None
    if stopped is not None:
        said = (
            f"; the log of pod {stopped[0]} shows no exception or error before it ends in "
            f"“{clip(stopped[1].message, 100)}”: the process was stopped, it did not fail"
        )
    names = sorted({c.name for c in now_c})
    who = f"container {', '.join(names[:2])} of {_workload(case)}" if names else f"the containers of {_workload(case)}"
    verb = "is stopped and restarted in a loop" if stopped is not None else "crashes on start"
    summary = f"{who} {verb}: it {exits}{said}, and the kubelet restarts it in CrashLoopBackOff"
    chain = (
        "the container is stopped from outside (its log shows no error)"
        if stopped is not None
        else "the application fails at start (a code defect)",
        f"the container {exits}",
        "the kubelet restarts it with growing back-off (CrashLoopBackOff)",
        "replicas unavailable",
    )
    pods = frozenset(c.pod for c in now_c) | hits.pods
    return Finding(mode, Verdict.CAUSE, summary, chain, tuple(hit_facts(case, hits)), pods, weight=hits.weight + 2)


def assess_probes(case: CaseFile) -> Finding:
    mode = "probe_failure"
    hits = scan(case, Signal.PROBE)
    liveness = [e for e in hits.events if Signal.LIVENESS in signals_of(e.message)]
    failures = sum(e.count for e in hits.events)
    probed = {e.name for e in hits.events if e.kind == "Pod"}
    unready = [p for p in case.our_pods if p.name in probed and not p.ready] or (
        [p for p in case.our_pods if not p.ready and p.phase.lower() == "running"] if hits.events else []
    )
    restarted = [c for c in case.containers() if c.pod in probed and c.restarts > 0]
    firsts = [t for t in (e.first or e.last for e in hits.events) if t is not None]
    lasts = [e.last for e in hits.events if e.last is not None]
    span = (max(lasts) - min(firsts)) if firsts and lasts else _SUSTAINED  # undated: cannot be shown brief
    # A pod failing its readiness probe a few times while it starts is normal; a probe failing for minutes is not.
    sustained = failures >= _MIN_FAILURES and span >= _SUSTAINED
    hurting = (bool(liveness) and bool(restarted)) or (bool(unready) and sustained)
    if not hits.events or not hurting:
        if hits.events:
            return Finding(
                mode,
                Verdict.ABSENT,
                f"{plural(failures, 'probe failure')} reported, but briefly (a pod starting) or on pods ready now: "
                "transient",
                facts=tuple(event_fact(case, e) for e in hits.events[:2]),
            )
        if hits.old_events:
            return _history(mode, "a probe failure", case, hits)
        return Finding(mode, Verdict.ABSENT, "no Unhealthy event: liveness and readiness probes pass")
    kind = "liveness" if liveness else "readiness"
    example = _strongest(hits.events)[0].message
    effect = (
        "the kubelet kills and restarts the containers"
        if liveness
        else f"{plural(len(unready), 'pod')} are taken out of service (not ready)"
    )
    summary = (
        f"the {kind} probe of {_workload(case)} fails ({plural(failures, 'failure')}: “{clip_middle(example, 130)}”), "
        f"so {effect}"
    )
    chain: tuple[str, ...] = (
        f"the {kind} probe fails (the endpoint it checks does not answer in time, or answers an error)",
        effect,
        "fewer replicas serve",
        "errors and the alert",
    )
    facts = hit_facts(case, hits)
    startup = _killed_starting(case, probed, hits.events) if liveness else None
    if startup is not None:
        summary, chain, more = startup
        facts += more
    for c in restarted[:2]:
        facts.append(container_fact(case, c))
    pods = frozenset(p.name for p in unready) | hits.pods
    tags = frozenset({kind})
    return Finding(mode, Verdict.CAUSE, summary, chain, tuple(facts), pods, weight=hits.weight + 1, tags=tags)


def _killed_starting(
    case: CaseFile, pods: set[str], events: Sequence[EventView]
) -> tuple[str, tuple[str, ...], list[Fact]] | None:
    """Liveness kills of containers that are still starting: the probe is refused (nothing listens on its port
    yet) and the pod's log shows a startup with no error, cut short by a shutdown. Then the probe checks before
    the service can be up: its initial delay is shorter than the startup. None when the evidence does not say so."""
    refused = [e for e in events if "connection refused" in e.message.lower()]
    stopped = _stopped_cleanly(case, pods)
    if not refused or stopped is None:
        return None
    pod, stop = stopped
    log = next(log for log in case.pod_logs if log.pod == pod)
    first = log.lines[0]
    ran = f" {ago(stop.time - first.time)} after it started" if stop.time and first.time else ""
    step = next((r for r in reversed(log.lines) if r is not stop and not _SHUTDOWN.search(r.message)), first)
    code = next((c.last_exit_code for c in case.containers() if c.pod == pod and c.last_exit_code), None)
    exits = f"exit code {code}, {exit_meaning(code)}" if code is not None else "stopped"
    facts = [line_fact(pod, [step, stop])]
    clauses = [
        "the kubelet kills the containers during startup, before they listen: the probe is refused "
        f"(“{clip_middle(refused[0].message, 120)}”), and the log of pod {pod} shows the service still starting "
        f"(“{clip(step.message, 80)}”) when it shuts down{ran} (“{clip(stop.message, 80)}”, {exits}), with no "
        "exception or error"
    ]
    lines = [*case.logs, *(line for other in case.pod_logs for line in other.lines)]
    earlier = next((r for r in reversed(lines) if _STARTED_IN.search(r.message)), None)
    if earlier is not None:
        clauses.append(f"a complete startup takes longer (“{clip(earlier.message, 90)}”)")
        facts.append(log_fact(case, [earlier], "of a complete startup"))
    change = next((r for r in reversed(case.logs) if _is_probe_change(case, r)), None)
    if change is not None:
        clauses.append(f"the probe was changed shortly before (“{clip(change.message, 200)}”)")
        facts.append(log_fact(case, [change], "of the change"))
    summary = f"the liveness probe of {_workload(case)} gives it too little time to start: " + "; ".join(clauses)
    chain = (
        *([f"a change to the liveness probe (“{_setting(change.message)}”)"] if change is not None else []),
        "the liveness probe starts checking before the service has finished its startup",
        "the probe is refused (nothing listens on the port yet)",
        f"the kubelet kills the container during startup ({exits})",
        "it restarts and is killed again: CrashLoopBackOff",
        "replicas unavailable",
    )
    return summary, chain, facts


def _setting(text: str) -> str:
    """The part of a change notice that names the probe setting: `livenessProbe.initialDelaySeconds 60 -> 5`."""
    m = _PROBE_SETTING.search(text.replace(".", " "))
    start = m.start() if m else 0
    return clip(re.split(r"[\"”;,]", text[start:])[0], 80)


def _is_probe_change(case: CaseFile, r: LogRecord) -> bool:
    """A record of a change to the workload's probes (a deploy tool's notice naming a probe setting)."""
    if not case.workload or case.workload not in r.message:
        return False
    return bool(_PROBE_SETTING.search(r.message.replace(".", " "))) and Signal.PROBE not in signals_of(r.message)
