"""Insights: why a test behaved as it did and what to change, from rules (always) or an LLM (`--insights llm`)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from sredrill.results import Insights, SignalRole, TestResult, TestStatus

__all__ = ["insights_for_run", "insights_for_test"]


_AGENT = "the agent"
"""How `TestResult.error_where` begins when the error happened in `agent.run()` (`the agent (agent.run())`)."""


def _error_advice(result: TestResult) -> str | None:
    """What to do about an errored test, from its structured `error_type` and `error_where` (never its message,
    which may quote anything: a judge that worked, a timeout the test body spent)."""
    kind, where = result.error_type, result.error_where
    in_agent = where is not None and where.startswith(_AGENT)
    if kind == "timeout":
        if in_agent:
            return (
                "the agent used up the test's timeout in agent.run(): cut its investigation rounds, "
                "or raise the timeout"
            )
        place = where or "the test"
        return f"the timeout ran out in {place}, not in the agent: find what it waits on, or raise the timeout"
    if kind == "JudgeError":
        return "the judge did not answer: fix its endpoint (--judge-base-url, --judge-model) or run with --no-judge"
    if "no agent" in (result.failure_reason or "").lower():
        return "configure an agent: sredrill test PATH --agent SPEC"
    return None


def insights_for_test(result: TestResult, *, tools_offered: int = 0) -> Insights | None:
    """Rule-based insight for one result; None for a clean pass with nothing to recommend.

    The failed gates themselves are not repeated (every reporter lists them): a failed test's insight counts
    them and ranks what to change; an errored test's says what to do about the error, when a rule knows.
    """
    recs: list[tuple[int, str]] = []  # (rank, text): lower rank first
    m = result.metrics
    if result.status == TestStatus.ERRORED:
        advice = _error_advice(result)
        if advice is not None:
            recs.append((0, advice))
    if m is not None:
        if m.ignored_tool_errors:
            recs.append(
                (1, f"handle tool errors: {m.ignored_tool_errors} tool error(s) were never retried or acknowledged")
            )
        if m.redundant_calls:
            top = max(m.tool_histogram, key=m.tool_histogram.__getitem__) if m.tool_histogram else "a tool"
            recs.append((2, f"avoid repeating identical calls: {m.redundant_calls} redundant call(s), most to {top}"))
        if tools_offered and m.tool_calls == 0:
            recs.append(
                (1, f"the agent answered without calling any of its {tools_offered} tools: gather evidence first")
            )
    failed = sum(1 for s in result.signals if s.role == SignalRole.GATE and s.passed is False)
    recommendations = [r for _, r in sorted(recs)]
    if result.status == TestStatus.ERRORED:
        if not recs:
            return None  # the error message is the whole story
        summary = "errored before it could be graded"
    elif result.status == TestStatus.FAILED:
        summary = f"{failed} gate signal(s) failed" if failed else "failed"
    elif recs:
        summary = "passed, with room to improve"
    else:
        return None
    return Insights(source="rules", summary=summary, recommendations=recommendations)


def insights_for_run(results: list[TestResult]) -> Insights | None:
    """Roll per-test signals and recommendations up to the run: what fails most, what to change first.

    Args:
        results: every result of the run, each once (the run summary's `total` counts the same ones).
    """
    failing = Counter(s.name for r in results for s in r.signals if s.role == SignalRole.GATE and s.passed is False)
    recs = Counter(rec for r in results if r.insights for rec in r.insights.recommendations)
    redundant: Counter[str] = Counter()
    for r in results:
        if r.metrics and r.metrics.redundant_calls:
            for tool, n in r.metrics.tool_histogram.items():
                redundant[tool] += n
    errored = sum(r.status == TestStatus.ERRORED for r in results)
    failed = sum(r.status == TestStatus.FAILED for r in results)
    why = [f"{name!r} failed in {n} test(s)" for name, n in failing.most_common(3)]
    if errored:
        reasons = Counter(
            (r.failure_reason or "").splitlines()[0][:120] for r in results if r.status == TestStatus.ERRORED
        )
        reason, n = reasons.most_common(1)[0]
        why.append(f"{errored} test(s) errored, {n} with: {reason}")
    if redundant:
        tool, _ = redundant.most_common(1)[0]
        why.append(f"across the suite the agent repeats identical calls, most to {tool}")
    if not why:
        return None
    return Insights(
        source="rules",
        summary=f"{failed} failed and {errored} errored of {len(results)} results",
        why=why,
        recommendations=[rec for rec, _ in recs.most_common(5)],
    )


LLM_SYSTEM = (
    "You analyse one test of an AI SRE agent. From its signals, metrics and trajectory, explain why it "
    'behaved as it did and what to change. Reply with JSON: {"summary": str, "why": [str], "recommendations": [str]} '
    "with recommendations ranked, most useful first."
)


def llm_prompt(result: TestResult, steps: list[dict[str, Any]] | None) -> str:
    payload = {
        "test": result.id,
        "status": result.status.value,
        "failure_reason": result.failure_reason,
        "signals": [s.model_dump(mode="json", exclude_defaults=True) for s in result.signals],
        "metrics": result.metrics.model_dump(mode="json") if result.metrics else None,
        "trajectory": (steps or [])[:60],
    }
    return json.dumps(payload, default=str)[:24000]


def parse_llm_insights(content: str) -> Insights:
    """Raises ValueError when the reply is not the JSON shape asked for."""
    start, end = content.find("{"), content.rfind("}")
    data = json.loads(content[start : end + 1]) if start >= 0 < end else None
    if not isinstance(data, dict) or not isinstance(data.get("summary"), str):
        raise ValueError(f"the insights model did not reply with the JSON asked for: {content[:200]!r}")
    return Insights(
        source="llm",
        summary=data["summary"],
        why=[str(w) for w in data.get("why") or []],
        recommendations=[str(r) for r in data.get("recommendations") or []],
    )
