"""The Kubernetes reference agent (`--agent k8s-reference`; `--agent reference` picks it on Kubernetes tasks).

An offline, deterministic, evidence-driven RCA agent for the Kubernetes domain: plan → investigate → diagnose
through the Kubernetes tools only. It reads pods and their containers' states and last terminations, events,
deployments and their rollouts, node health, pod logs, Datadog logs and monitors; assesses every failure mode
of the vocabulary against that evidence (cause, symptom of another cause, recovered history, or ruled out);
and writes a diagnosis whose claims cite their sources. It knows Kubernetes, not the scenarios.

Examples:
    >>> from sredrill.agents import resolve_agent
    >>> agent = resolve_agent("k8s-reference")
    >>> agent.spec
    'k8s-reference'
"""

from __future__ import annotations

from sredrill.agents.k8s_reference.agent import K8sReferenceAgent, connect

__all__ = ["K8sReferenceAgent", "connect"]
