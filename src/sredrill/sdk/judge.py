"""`judge`: graded verdicts about one run, from an LLM, a custom evaluator or a deterministic rule.

A verdict is recorded as a signal and returned; `judge()` never raises for a failed verdict (use
`.or_raise()`). A judge that cannot answer (server down, bad reply) raises JudgeError: the test is
`errored`, never silently `failed` or `passed`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sredrill.errors import AgentError, JudgeError
from sredrill.harness.context import TestContext, current_context, exit_text, is_engine_cancelled
from sredrill.harness.result import RunResult
from sredrill.results import ModelUsage, Signal, SignalKind, SignalRole, Verdict

__all__ = ["BUILTIN_EVALUATORS", "Judge", "JudgeSpec", "cache_key", "judge"]

LLM = "llm"
CONTEXT_CHOICES = ("output", "trajectory", "diagnosis")
DEFAULT_CONTEXT = ("output", "trajectory")
_SYSTEM = (
    "You are a strict evaluator of an AI agent's work. You get a criterion and what the agent did. "
    "Decide whether the criterion holds, judging only from what is shown. Reply with one JSON object: "
    '{"passed": true|false, "score": <number 0..1>, "reasoning": "<one or two sentences>"}.'
)


@dataclass(frozen=True, slots=True)
class JudgeSpec:
    criteria: str
    context: tuple[str, ...] = DEFAULT_CONTEXT
    evaluator: str = LLM
    model: str | None = None

    @classmethod
    def parse(cls, spec: str | Mapping[str, Any]) -> JudgeSpec:
        if isinstance(spec, str):
            return cls(criteria=spec)
        if not isinstance(spec, Mapping) or "criteria" not in spec:
            raise TypeError("judge() takes a criteria string or {criteria, context?, evaluator?, model?}")
        unknown = set(spec) - {"criteria", "context", "evaluator", "model"}
        if unknown:
            raise TypeError(f"judge(): unknown keys {sorted(unknown)}; allowed: criteria, context, evaluator, model")
        context = tuple(spec.get("context") or DEFAULT_CONTEXT)
        bad = [c for c in context if c not in CONTEXT_CHOICES]
        if bad:
            raise TypeError(f"judge(): unknown context {bad}; choose from {list(CONTEXT_CHOICES)}")
        return cls(
            criteria=str(spec["criteria"]),
            context=context,
            evaluator=str(spec.get("evaluator") or LLM),
            model=spec.get("model"),
        )


def _canonical_steps(result: RunResult) -> list[dict[str, Any]]:
    # Timing differs between identical runs; leave it out so a deterministic agent hits the cache.
    return [
        {k: v for k, v in step.model_dump(mode="json").items() if k not in ("t_ms", "latency_ms")}
        for step in result.trajectory
    ]


def _view(result: RunResult, spec: JudgeSpec) -> dict[str, Any]:
    view: dict[str, Any] = {}
    if "output" in spec.context:
        view["output"] = result.output
    if "trajectory" in spec.context:
        view["trajectory"] = _canonical_steps(result)
    if "diagnosis" in spec.context and result.diagnosis is not None:
        view["diagnosis"] = result.diagnosis.model_dump(mode="json")
    return view


def cache_key(spec: JudgeSpec, model: str | None, result: RunResult) -> str:
    """sha256 of evaluator + model + criteria + context selection + the canonical run content."""
    payload = {
        "evaluator": spec.evaluator,
        "model": model,
        "criteria": spec.criteria,
        "context": list(spec.context),
        "content": _view(result, spec),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


async def _contains(result: RunResult, criteria: str) -> Verdict:
    ok = criteria.lower() in result.output.lower()
    return Verdict(passed=ok, score=float(ok), reasoning=f"output {'contains' if ok else 'lacks'} {criteria!r}")


async def _matches(result: RunResult, criteria: str) -> Verdict:
    ok = re.search(criteria, result.output) is not None
    return Verdict(passed=ok, score=float(ok), reasoning=f"output {'matches' if ok else 'does not match'} /{criteria}/")


BUILTIN_EVALUATORS = {"contains": _contains, "matches": _matches}


def _to_verdict(value: Any, name: str) -> Verdict:
    if isinstance(value, Verdict):
        return value
    if isinstance(value, bool):
        return Verdict(passed=value, score=float(value))
    if isinstance(value, Mapping) and "passed" in value:
        return Verdict(
            passed=bool(value["passed"]),
            score=None if value.get("score") is None else float(value["score"]),
            reasoning=str(value.get("reasoning") or ""),
        )
    raise JudgeError(
        f"evaluator {name!r} returned {type(value).__name__}; "
        "return a Verdict, a bool or {passed, score?, reasoning?}"
    )


def _parse_reply(content: str) -> Verdict:
    match = re.search(r"\{.*\}", content or "", re.DOTALL)
    if not match:
        raise JudgeError(f"the judge model did not reply with JSON: {content[:200]!r}")
    try:
        data = json.loads(match.group(0))
    except ValueError as exc:
        raise JudgeError(f"the judge model replied with malformed JSON: {content[:200]!r}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("passed"), bool):
        raise JudgeError(f"the judge reply has no boolean 'passed': {content[:200]!r}")
    score = data.get("score")
    if score is not None and not isinstance(score, int | float):
        raise JudgeError(f"the judge reply's 'score' is not a number: {score!r}")
    return Verdict(
        passed=data["passed"],
        score=None if score is None else max(0.0, min(1.0, float(score))),
        reasoning=str(data.get("reasoning") or ""),
    )


class Judge:
    """The `judge` fixture: `await judge(result, criteria)`; `await judge.observe(...)` never gates."""

    def __init__(self, ctx: TestContext) -> None:
        self._ctx = ctx

    async def __call__(self, result: RunResult, spec: str | Mapping[str, Any]) -> Verdict:
        """Judge one criterion about `result` as a gate signal.

        Args:
            result: what `agent.run()` returned.
            spec: the criteria text, or {criteria, context, evaluator, model}.

        Returns:
            The Verdict (recorded on the test); failed verdicts do not raise.

        Raises:
            JudgeError: the judge could not answer (the test becomes `errored`).
        """
        return await self._judge(result, spec, SignalRole.GATE)

    async def observe(self, result: RunResult, spec: str | Mapping[str, Any]) -> Verdict:
        """Like calling the judge, but the verdict only feeds the score and insights."""
        return await self._judge(result, spec, SignalRole.OBSERVE)

    async def _judge(self, result: RunResult, raw_spec: str | Mapping[str, Any], role: SignalRole) -> Verdict:
        if not isinstance(result, RunResult):
            raise TypeError(f"judge() needs the RunResult of agent.run(), got {type(result).__name__}")
        spec = JudgeSpec.parse(raw_spec)
        ctx = self._ctx
        runtime = ctx.runtime
        usage = None
        if runtime.judge.skip or ctx.test.skip_judge:
            verdict = Verdict(passed=True, reasoning="judging skipped", role=role, skipped=True)
        elif spec.evaluator == LLM:
            verdict, usage = await self._llm(result, spec)
        else:
            verdict = await self._custom(result, spec)
        verdict = verdict.model_copy(update={"role": role})
        ctx.record(
            Signal(
                kind=SignalKind.JUDGE,
                name=spec.criteria,
                role=role,
                passed=None if verdict.skipped else verdict.passed,
                score=verdict.score,
                reasoning=verdict.reasoning,
                cached=verdict.cached,
                skipped=verdict.skipped,
                message="" if verdict.passed or verdict.skipped else f"judge: {verdict.reasoning}",
                expected=spec.criteria,
                usage=usage,
            )
        )
        return verdict

    async def _custom(self, result: RunResult, spec: JudgeSpec) -> Verdict:
        fn = self._ctx.runtime.evaluators.get(spec.evaluator) or BUILTIN_EVALUATORS.get(spec.evaluator)
        if fn is None:
            known = sorted({LLM, *BUILTIN_EVALUATORS, *self._ctx.runtime.evaluators})
            raise JudgeError(f"no evaluator {spec.evaluator!r}; known: {', '.join(known)} (register with @evaluator)")
        try:
            value = await fn(result, spec.criteria)
        except JudgeError:
            raise
        except Exception as exc:  # a user evaluator crashing is a judge failure, not a verdict
            raise JudgeError(f"evaluator {spec.evaluator!r} raised {type(exc).__name__}: {exc}") from exc
        except BaseException as exc:  # sys.exit(), KeyboardInterrupt, …: the evaluator's, unless the run is cancelled
            if is_engine_cancelled():
                raise
            raise JudgeError(f"evaluator {spec.evaluator!r} raised {exit_text(exc, 'the evaluator')}") from exc
        return _to_verdict(value, spec.evaluator)

    async def _llm(self, result: RunResult, spec: JudgeSpec) -> tuple[Verdict, ModelUsage | None]:
        """The judge model's verdict, and the tokens it spent on it (None: from the cache, or not reported)."""
        cfg = self._ctx.runtime.judge
        model = spec.model or cfg.model
        if not cfg.base_url or not model:
            raise JudgeError(
                "no judge configured: pass --judge-base-url URL and --judge-model MODEL "
                "(or SREDRILL_JUDGE_BASE_URL / SREDRILL_JUDGE_MODEL), or skip judging with --no-judge"
            )
        store = self._ctx.runtime.store
        key = cache_key(spec, model, result)
        if store is not None:
            hit = await asyncio.to_thread(store.judge_cache_get, key)
            if hit is not None:
                return hit.model_copy(update={"cached": True}), None
        from sredrill.agents.llm import ChatClient  # the HTTP client loads only when a test judges

        client = ChatClient(base_url=cfg.base_url, api_key=cfg.api_key, model=model, timeout_s=cfg.timeout_s)
        user = json.dumps({"criterion": spec.criteria, **_view(result, spec)}, default=str)
        try:
            reply = await client.complete(
                [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}], temperature=0
            )
        except AgentError as exc:
            raise JudgeError(f"the judge model at {cfg.base_url} failed: {exc}") from exc
        finally:
            await client.aclose()
        verdict = _parse_reply(reply.content or "")
        if store is not None:
            await asyncio.to_thread(store.judge_cache_put, key, verdict)
        tokens = reply.usage
        if tokens is None:
            return verdict, None
        usage = ModelUsage(
            model=model, input_tokens=tokens.prompt, output_tokens=tokens.completion, total_tokens=tokens.total,
            cached_input_tokens=tokens.cached, role="judge",
        )  # fmt: skip
        return verdict, usage


class _JudgeProxy:
    """`from sredrill import judge` works like the `judge` fixture: it finds the running test."""

    async def __call__(self, result: RunResult, spec: str | Mapping[str, Any]) -> Verdict:
        return await Judge(current_context())(result, spec)

    async def observe(self, result: RunResult, spec: str | Mapping[str, Any]) -> Verdict:
        return await Judge(current_context()).observe(result, spec)


judge = _JudgeProxy()
