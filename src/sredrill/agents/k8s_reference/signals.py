"""Signals: what a Kubernetes reason, event message or log line says, in Kubernetes' and its tools' own words.

Each `Signal` is a kind of trouble an SRE recognises in text: the kubelet's container reasons (`OOMKilled`,
`CrashLoopBackOff`, `ImagePullBackOff`, `CreateContainerConfigError`), the scheduler's and controllers' event
reasons and messages (`FailedScheduling … Insufficient cpu`, `FailedCreate … exceeded quota`, `Unhealthy`,
`NodeNotReady`, `Evicted`, `ProgressDeadlineExceeded`), what applications and resolvers write (`no such host`,
`connection refused`), and the Linux kernel's network messages (`nf_conntrack: table full, dropping packet`).
The patterns are Kubernetes', the Go/glibc resolvers' and the kernel's documented wording, not any scenario's
text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum

__all__ = ["BENIGN_REASONS", "Signal", "any_signal", "exit_meaning", "signals_of"]


class Signal(StrEnum):
    OOM = "out of memory"
    IMAGE = "image pull"
    CONFIG = "configuration"
    CRASH = "crash"
    PROBE = "probe"
    LIVENESS = "liveness kill"
    SCHEDULING = "scheduling"
    CAPACITY = "insufficient capacity"
    QUOTA = "quota"
    NODE = "node"
    EVICTION = "eviction"
    ROLLOUT = "rollout"
    DNS = "dns"
    CONNECTION = "connection"
    PACKET_DROP = "packet drop"
    ERROR = "error"


_I = re.IGNORECASE
_PATTERNS: tuple[tuple[Signal, re.Pattern[str]], ...] = (
    (
        Signal.OOM,
        re.compile(
            r"oom[-_ ]?kill|\boom\b|out of memory|outofmemory|memory cgroup out of memory|heap (space|out)|"
            r"cannot allocate memory|oom-killer|exceed(s|ed|ing)? (its |the )?memory limit|memory limit (reached|hit)",
            _I,
        ),
    ),
    (
        Signal.IMAGE,
        re.compile(
            r"errimagepull|imagepullbackoff|image ?pull ?back-?off|invalidimagename|errimageneverpull|"
            r"failed to pull|pull(ing)? image|pull access denied|manifest unknown|manifest for \S+ not found|"
            r"repository does not exist|not found: manifest|failed to resolve reference|unauthorized: .*registry",
            _I,
        ),
    ),
    (
        Signal.CONFIG,
        re.compile(
            r"createcontainerconfigerror|createcontainererror|(secret|configmap)s? \"?[\w.-]*\"? not found|"
            r"couldn't find key|failedmount|mountvolume\.setup failed|missing required (env|environment|config|"
            r"setting|variable|secret)|(environment variable|env var)\S* \S+ (is )?(not set|missing|required)|"
            r"invalid (configuration|config)|config(uration)? (file )?(not found|missing|invalid|error)|"
            r"failed to (load|parse|read) (config|configuration|settings)|"
            r"required (key|setting|field|option|parameter)\S* \S+ (is )?(missing|not set)|"
            r"exit(ing|ed)? with status 78",
            _I,
        ),
    ),
    (
        Signal.CRASH,
        re.compile(
            r"crashloopbackoff|crash ?loop|back-off restarting failed container|\bpanic\b|traceback|"
            r"segmentation fault|sigsegv|unhandled exception|uncaught exception|fatal error|nullpointerexception|"
            r"exited with (code|status) [1-9]|exit code [1-9]|process exited",
            _I,
        ),
    ),
    (Signal.LIVENESS, re.compile(r"failed (liveness|startup) probe|liveness probe failed|startup probe failed", _I)),
    (Signal.PROBE, re.compile(r"(liveness|readiness|startup) probe (failed|errored)|\bunhealthy\b", _I)),
    (
        Signal.SCHEDULING,
        re.compile(r"failedscheduling|unschedulable|nodes are available|didn't (match|fit)|untolerated taint", _I),
    ),
    (Signal.CAPACITY, re.compile(r"insufficient (cpu|memory|ephemeral|pods|nvidia)|too many pods", _I)),
    (Signal.QUOTA, re.compile(r"exceeded quota|quotaexceeded|quota exceeded|forbidden: exceeded|resourcequota", _I)),
    (
        Signal.NODE,
        re.compile(
            r"nodenotready|node ?not ?ready|notready|kubelet stopped posting|nodelost|node lost|node is not ready|"
            r"pleg is not healthy|nodecontrollereviction|node[-.]kubernetes[-.]io/(not-ready|unreachable)",
            _I,
        ),
    ),
    (
        Signal.EVICTION,
        re.compile(
            r"\bevict|low on resource|(memory|disk|pid)pressure|(memory|disk|pid) pressure|ephemeral-storage", _I
        ),
    ),
    (Signal.ROLLOUT, re.compile(r"progressdeadlineexceeded|progress deadline|rollout.*(stuck|stalled)", _I)),
    (
        Signal.DNS,
        re.compile(
            r"no such host|could not resolve|couldn't resolve|can't resolve|name resolution|nxdomain|servfail|"
            r"name or service not known|getaddrinfo|eai_again|dns (lookup|resolution|query)|lookup \S+ on \S+|"
            r"unknown host|unknownhostexception|server misbehaving",
            _I,
        ),
    ),
    (
        Signal.CONNECTION,
        re.compile(
            r"connection refused|econnrefused|connection reset|econnreset|connect(ion)? timed out|etimedout|"
            r"upstream connect error|no healthy upstream|service unavailable|\b50[234]\b|dial tcp|"
            r"timed out (connecting|waiting)|timeout (connecting|calling|waiting)|circuit breaker|"
            r"context deadline exceeded|unreachable|failed to connect|could not connect|cannot connect",
            _I,
        ),
    ),
    (
        Signal.PACKET_DROP,
        re.compile(
            r"nf_conntrack|conntrack table|table full, dropping packet|dropping packets?|dropped packets?|"
            r"neighbou?r table overflow|rx_dropped|tx_dropped",
            _I,
        ),
    ),
    (Signal.ERROR, re.compile(r"\b(error|exception|fatal|failed|failure|critical)\b", _I)),
)

BENIGN_REASONS = frozenset(
    {
        "Scheduled", "Pulling", "Pulled", "Created", "Started", "SuccessfulCreate", "SuccessfulDelete",
        "ScalingReplicaSet", "DNSConfigForming", "Completed", "SandboxChanged", "Sync", "NodeReady",
        "RegisteredNode", "NodeHasSufficientMemory", "NodeHasNoDiskPressure", "NodeHasSufficientPID",
    }
)  # fmt: skip
"""Event reasons of routine work (and the kubelet's DNS-config notice, which is not a lookup failure)."""


def signals_of(*texts: str) -> frozenset[Signal]:
    """Every signal the texts carry (a resolver failure is not also a refused connection)."""
    found = {kind for text in texts if text for kind, pattern in _PATTERNS if pattern.search(text)}
    if Signal.DNS in found:
        found.discard(Signal.CONNECTION)  # `dial tcp: lookup db on 10.0.0.10:53: no such host` is DNS
    if Signal.QUOTA in found:
        found.discard(Signal.OOM)  # `exceeded quota: … limits.memory` is the quota, not a kill
    if Signal.LIVENESS in found:
        found.add(Signal.PROBE)
    return frozenset(found)


def any_signal(texts: Iterable[str], kind: Signal) -> bool:
    return any(kind in signals_of(t) for t in texts)


def exit_meaning(code: int | None) -> str:
    """What a container exit code means (128 + n is signal n)."""
    if code is None:
        return ""
    meanings = {
        0: "a clean exit",
        1: "an application error",
        2: "a misuse of the shell or a bad argument",
        126: "a command that cannot run",
        127: "a command not found",
        134: "an abort (SIGABRT)",
        78: "a configuration error (EX_CONFIG)",
        137: "a SIGKILL: the kernel's OOM killer or the kubelet",
        139: "a segmentation fault (SIGSEGV)",
        143: "a SIGTERM: a requested shutdown",
    }
    return meanings.get(code, f"signal {code - 128}" if code > 128 else "an application error")
