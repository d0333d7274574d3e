"""Naive baselines: a constant answer, the alert title's words, a seeded coin. They prove the benchmark discriminates.

A benchmark that one of these passes measures nothing (DESIGN §4, §9): `sredrill baselines` runs them beside
the reference agent on the same packs. On RCA scenarios none of them calls a tool, so none reads evidence; on
incident episodes they act without inspecting: `majority` declares healthy at once, `keyword` applies the
remediation whose name shares a word with a firing alert's, `random` takes seeded random actions.

- `majority` (`MajorityAgent(pack)`): the pack's most common `failure_modes` set and category, always.
- `keyword` (`KeywordAgent()`): the failure mode whose identifier's words best match the alert title's.
- `random` (`RandomAgent(seed)`, seed from `--seed`): a failure mode and a category drawn from the vocabulary by
  `random.Random`, seeded per task from the seed and the alert title, so a run is reproducible whatever the
  order or concurrency of its tasks.

A run may mix domains (an RDS pack and a Kubernetes pack): each baseline then answers a task from its own
domain's packs (the domain whose tools the task offers), so no Kubernetes alert gets an RDS failure mode. A run
of one domain answers exactly as before.

Examples:
    >>> from sredrill.scenarios import load_pack
    >>> agent = MajorityAgent(load_pack("rds_postgres"))
    >>> agent.answer.failure_modes                                  # doctest: +SKIP
    ['replication_lag']
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from sredrill.agents.protocol import AgentReply, Task
from sredrill.agents.reply import reply_from_diagnosis
from sredrill.agents.spec import AgentSpec, ConnectOptions
from sredrill.diagnosis import Category, Diagnosis
from sredrill.errors import AgentError, AgentSpecError
from sredrill.scenarios import Pack, Scenario, Vocabulary
from sredrill.scenarios.domain import combined_vocabulary, domain_of_tools
from sredrill.trajectory import Recorder, ResponseStep, ToolError

__all__ = [
    "KeywordAgent",
    "MajorityAgent",
    "RandomAgent",
    "connect_keyword",
    "connect_majority",
    "connect_random",
]


def _words(identifier: str) -> str:
    return identifier.replace("_", " ")


def _finish(diagnosis: Diagnosis, recorder: Recorder) -> AgentReply:
    reply = reply_from_diagnosis(diagnosis)
    recorder.add(ResponseStep(content=reply.output))
    return reply


def _task_domain(task: Task) -> str:
    """The name of the domain whose tools the task offers, or "" when it offers no domain's own tool."""
    domain = domain_of_tools(t.name for t in task.tools)
    return domain.name if domain is not None else ""


def _title(task: Task) -> str:
    alert = task.alert or {}
    title = alert.get("title")
    return title if isinstance(title, str) else ""


class MajorityAgent:
    """The most common answer of the pack(s), whatever the alert: a constant guess, no tools."""

    __slots__ = ("answer", "answers", "spec")

    def __init__(self, pack: Pack | Sequence[Pack], *, spec: str = "majority") -> None:
        """Count the answer keys once, per domain.

        Args:
            pack: the pack (or packs) whose scenarios' answers are counted.
            spec: the spec this agent was resolved from.

        Raises:
            AgentSpecError: the packs hold no scenario to count.
        """
        packs = [pack] if isinstance(pack, Pack) else list(pack)
        scenarios = [s for p in packs for s in p.scenarios]
        self.spec = spec
        self.answer: Diagnosis | None = None
        """The constant of every pack together (the one answer of a run of one domain)."""
        self.answers: Mapping[str, Diagnosis] = MappingProxyType({})
        """Domain name -> the constant of that domain's packs."""
        if not scenarios:
            if packs:
                raise AgentSpecError(
                    "the majority baseline needs at least one loaded scenario to count answers from",
                    field="--agent",
                    hint="pass a pack that loads (check it with: sredrill scenarios lint --pack PATH)",
                )
            return  # incident episodes only: the constant there is "declare healthy"
        self.answer = _majority(scenarios)
        domains = sorted({p.domain for p in packs if p.domain and p.scenarios})
        self.answers = MappingProxyType(
            {d: _majority([s for p in packs if p.domain == d for s in p.scenarios]) for d in domains}
        )

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        """Answer the constant of the task's domain, without calling a tool (an incident episode: declare it
        healthy at once)."""
        if _is_incident(task):
            return await _act(task, recorder, [("declare_healthy", {})], "Majority baseline")
        if self.answer is None:
            raise AgentError("the majority baseline was built without a scenario pack: it has no answer to give")
        answer = self.answers.get(_task_domain(task), self.answer) if len(self.answers) > 1 else self.answer
        return _finish(answer, recorder)


def _majority(scenarios: Sequence[Scenario]) -> Diagnosis:
    """The most common answer of the scenarios: their failure-mode set and their category."""
    # Ties are broken by name, so the constant does not depend on the order scenarios were loaded in.
    modes = Counter(tuple(sorted(s.failure_modes)) for s in scenarios)
    best_modes = min(modes, key=lambda m: (-modes[m], m))
    categories = Counter(s.category for s in scenarios)
    best_category = min(categories, key=lambda c: (-categories[c], c.value))
    words = " and ".join(_words(m) for m in best_modes)
    return Diagnosis(
        root_cause=f"Majority baseline: the most common answer of the pack, {words}, whatever the alert says.",
        category=best_category,
        failure_modes=list(best_modes),
        report=(
            f"A constant guess: {modes[best_modes]} of {len(scenarios)} scenarios have this answer. "
            "No evidence was read."
        ),
    )


_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_MIN_STEM = 5


def _tokens(text: str) -> list[str]:
    """Lower-case word tokens, CamelCase split (`FreeStorageSpace` → free, storage, space)."""
    return [t.lower() for t in _CAMEL.findall(text)]


def _related(a: str, b: str) -> bool:
    """Same word, or one a prefix of the other (`replica`/`replication`, `connection`/`connections`)."""
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    return len(short) >= _MIN_STEM and long.startswith(short)


class KeywordAgent:
    """Diagnosis from the alert title's words alone: no tools, no evidence."""

    __slots__ = ("spec", "vocabularies", "vocabulary")

    def __init__(
        self,
        vocabulary: Vocabulary | None = None,
        *,
        spec: str = "keyword",
        vocabularies: Mapping[str, Vocabulary] | None = None,
    ) -> None:
        self.spec = spec
        self.vocabulary = vocabulary or combined_vocabulary()
        self.vocabularies: Mapping[str, Vocabulary] = MappingProxyType(dict(vocabularies or {}))
        """Domain name -> its packs' vocabulary, when a run mixes domains (each task reads its own)."""

    def guess(self, title: str, vocabulary: Vocabulary | None = None) -> tuple[str, int]:
        """The failure mode whose identifier (or alias) shares the most words with the title, and the score."""
        vocabulary = vocabulary or self.vocabulary
        words = _tokens(title)
        best, best_score = "unknown", 0
        for name in vocabulary.names:
            if name == "unknown":
                continue
            mode = vocabulary.modes[name]
            spellings = [name, *mode.aliases]
            score = max(sum(any(_related(w, t) for w in words) for t in _tokens(_words(s))) for s in spellings)
            if score > best_score:
                best, best_score = name, score
        return best, best_score

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        """Map the title's words to a failure mode; `unknown` when no word matches.

        On an incident episode: the remediation whose name shares a word with a firing alert's, then declare.
        """
        if _is_incident(task):
            observation = await task.call_tool("observe")
            alerts = observation.get("alerts") if isinstance(observation, dict) else None
            firing = [a for a in alerts if isinstance(a, str)] if isinstance(alerts, list) else []
            alert_words = set(_tokens(" ".join(firing).replace("_", " ").replace(":", " ")))
            # A family's alerts are `<rule>:<component>`: a remediation that takes a target aims at the first
            # alert's component when it may (else it is left out).
            component = firing[0].partition(":")[2] if firing and ":" in firing[0] else None
            plan: list[tuple[str, dict[str, Any]]] = []
            for spec in task.tools:
                if spec.name not in _REMEDIATIONS or not alert_words & set(_tokens(spec.name.replace("_", " "))):
                    continue
                properties = spec.input_schema.get("properties")
                targets = _enum(properties.get("target")) if isinstance(properties, dict) else []
                if not targets:
                    plan.append((spec.name, {}))
                elif component in targets:
                    plan.append((spec.name, {"target": component}))
            plan = plan[:1]
            return await _act(task, recorder, [*plan, ("declare_healthy", {})], "Keyword baseline")
        title = _title(task)
        vocabulary = _vocabulary_for(task, self.vocabulary, self.vocabularies)
        mode, score = self.guess(title, vocabulary)
        category = vocabulary.category_of(mode)
        words = _words(mode)
        diagnosis = Diagnosis(
            root_cause=(
                f"Keyword baseline: the alert title suggests {words}."
                if score
                else "Keyword baseline: no word of the alert title names a known failure mode."
            ),
            category=category,
            failure_modes=[mode],
            report=f"Matched {score} word(s) of the title {title!r}. No evidence was read.",
        )
        return _finish(diagnosis, recorder)


class RandomAgent:
    """A failure mode and a category drawn at random (seeded): the floor any benchmark must beat."""

    __slots__ = ("seed", "spec", "vocabularies", "vocabulary")

    def __init__(
        self,
        seed: int = 0,
        vocabulary: Vocabulary | None = None,
        *,
        spec: str = "random",
        vocabularies: Mapping[str, Vocabulary] | None = None,
    ) -> None:
        self.seed = seed
        self.spec = spec
        self.vocabulary = vocabulary or combined_vocabulary()
        self.vocabularies: Mapping[str, Vocabulary] = MappingProxyType(dict(vocabularies or {}))
        """Domain name -> its packs' vocabulary, when a run mixes domains (each task draws from its own)."""

    def draw(self, task: Task) -> tuple[str, Category]:
        """The task's draw: the same seed and alert always give the same answer."""
        # A string seed is hashed with SHA-512 by `random`, so the draw is stable across processes.
        rng = random.Random(f"{self.seed}\0{_title(task)}\0{task.prompt}")
        vocabulary = _vocabulary_for(task, self.vocabulary, self.vocabularies)
        return rng.choice(vocabulary.names), rng.choice(list(Category))

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        """Answer a random failure mode and category, without calling a tool.

        On an incident episode: seeded random actions (random targets from each tool's schema) until it ends.
        """
        if _is_incident(task):
            observation = await task.call_tool("observe")
            alerts = observation.get("alerts", []) if isinstance(observation, dict) else []
            rng = random.Random(f"{self.seed}\0{task.prompt}\0{alerts}")
            actions = [t for t in task.tools if t.name != "observe"]
            plan = []
            for _ in range(_MAX_RANDOM_ACTIONS):
                spec = rng.choice(actions)
                props = spec.input_schema.get("properties", {})
                args = {}
                target = props.get("target", {}) if isinstance(props, dict) else {}
                choices = _enum(target)
                if choices:
                    args["target"] = rng.choice(choices)
                if isinstance(props, dict) and "value" in props:
                    args["value"] = rng.randint(1, 8)
                plan.append((spec.name, args))
            return await _act(task, recorder, plan, f"Random baseline (seed {self.seed})")
        mode, category = self.draw(task)
        diagnosis = Diagnosis(
            root_cause=f"Random baseline: a draw picked {_words(mode)}.",
            category=category,
            failure_modes=[mode],
            report=f"Seed {self.seed}. No evidence was read.",
        )
        return _finish(diagnosis, recorder)


# The classic tasks' remediations, then the ones task families add.
_REMEDIATIONS = frozenset(
    {
        "restart_service", "scale_workers", "restart_database", "rollback_release", "clear_queue",
        "revert_config", "drop_message", "failover", "flush_cache",
    }
)  # fmt: skip
_MAX_RANDOM_ACTIONS = 40


def _is_incident(task: Task) -> bool:
    """An incident episode offers the environment's actions as tools, declarations among them."""
    return any(t.name == "declare_healthy" for t in task.tools)


def _enum(schema: Any) -> list[Any]:
    """The allowed values of a JSON Schema property (`enum`, or `anyOf` members with `enum`/`const`)."""
    if not isinstance(schema, dict):
        return []
    if "enum" in schema:
        return [v for v in schema["enum"] if v is not None]
    out = []
    for member in schema.get("anyOf", []):
        out += _enum(member)
        if isinstance(member, dict) and member.get("const") is not None:
            out.append(member["const"])
    return out


async def _act(task: Task, recorder: Recorder, plan: list[tuple[str, dict[str, Any]]], who: str) -> AgentReply:
    """Play a fixed list of actions until the episode ends; rejected actions are skipped (they are recorded)."""
    taken = []
    for name, args in plan:
        try:
            result = await task.call_tool(name, **args)
        except ToolError as exc:
            if exc.code == "episode_over":
                break
            continue
        taken.append(name)
        if isinstance(result, dict) and result.get("done"):
            break
    output = f"{who}: {', '.join(taken) or 'no action'}. No evidence was read."
    recorder.add(ResponseStep(content=output))
    return AgentReply(output=output)


def _vocabulary(packs: Iterable[Any]) -> Vocabulary | None:
    for pack in packs:
        if isinstance(pack, Pack):
            return pack.vocabulary
    return None


def _vocabularies(packs: Iterable[Any]) -> dict[str, Vocabulary]:
    """Domain name -> the vocabulary of its first pack, when the packs span several domains (else empty)."""
    out: dict[str, Vocabulary] = {}
    for pack in packs:
        if isinstance(pack, Pack) and pack.domain:
            out.setdefault(pack.domain, pack.vocabulary)
    return out if len(out) > 1 else {}


def _vocabulary_for(task: Task, default: Vocabulary, by_domain: Mapping[str, Vocabulary]) -> Vocabulary:
    return by_domain.get(_task_domain(task), default) if by_domain else default


def connect_majority(spec: AgentSpec, options: ConnectOptions) -> MajorityAgent:
    """`majority`: needs the run's packs (`resolve_agent("majority", packs=[pack])`).

    Raises:
        AgentSpecError: no pack was given, or none has a scenario.
    """
    packs = [p for p in options.packs if isinstance(p, Pack)]
    return MajorityAgent(packs, spec=spec.text)


def connect_keyword(spec: AgentSpec, options: ConnectOptions) -> KeywordAgent:
    """`keyword`: the vocabulary of the run's first pack (the built-in one without packs); with packs of several
    domains, each task reads its own domain's first pack's."""
    return KeywordAgent(_vocabulary(options.packs), spec=spec.text, vocabularies=_vocabularies(options.packs))


def connect_random(spec: AgentSpec, options: ConnectOptions) -> RandomAgent:
    """`random`: seeded from `--seed` (`ConnectOptions.seed`), else 0."""
    seed = options.seed if options.seed is not None else 0
    return RandomAgent(seed, _vocabulary(options.packs), spec=spec.text, vocabularies=_vocabularies(options.packs))
