"""Naive baselines: a constant answer, the alert title's words, a seeded coin. They prove the benchmark discriminates.

A benchmark that one of these passes measures nothing (DESIGN §4, §9, issue 16): `sredrill baselines` and
`sredrill audit` run them beside the reference agent on the same packs. On RCA scenarios each calls the tools a
cheap agent would (the alert, then each evidence tool once) and cites what it saw with facts that hold, so a
low score is the grading's judgement of its answer, not a missing citation. On incident episodes they act
without inspecting: `majority` declares healthy at once, `keyword` applies the remediation whose name shares a
word with a firing alert's, `random` takes seeded random actions.

- `majority` (`MajorityAgent(training)`): the most common `failure_modes` set and category of a declared
  **training split**, never of the pack it is graded on: `majority:PATH_OR_PACK`, else the graded pack's
  `pack.yml: training_split`, else (a built-in pack, which ships no training split) a uniform prior over its
  domain's vocabulary, whose tie is broken by name. A pack that declares none fails with how to declare one.
- `keyword` (`KeywordAgent()`): the failure mode whose identifier's words best match the alert title's.
- `random` (`RandomAgent(seed)`, seed from `--seed`): a failure mode and a category drawn from the vocabulary by
  `random.Random`, seeded per task from the seed and the alert title, so a run is reproducible whatever the
  order or concurrency of its tasks.

A run may mix domains (an RDS pack and a Kubernetes pack): each baseline then answers a task from its own
domain's packs (the domain whose tools the task offers), so no Kubernetes alert gets an RDS failure mode.

Examples:
    >>> from sredrill.scenarios import load_pack
    >>> agent = MajorityAgent(load_pack("tests/fixtures/k8s_small"))   # the training split's labels
    >>> agent.answer.failure_modes                                  # doctest: +SKIP
    ['healthy']
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from sredrill.agents.protocol import AgentReply, Task
from sredrill.agents.redteam.notebook import Notebook, investigate
from sredrill.agents.redteam.words import best_mode, spaced, task_domain, tokens
from sredrill.agents.redteam.writing import cited_claims, finish
from sredrill.agents.spec import AgentSpec, ConnectOptions
from sredrill.diagnosis import Category, Diagnosis
from sredrill.errors import AgentError, AgentSpecError, InputError
from sredrill.scenarios import Pack, PackConfig, Scenario, Vocabulary, load_pack
from sredrill.scenarios.domain import combined_vocabulary
from sredrill.trajectory import Recorder, ResponseStep, ToolError

__all__ = [
    "KeywordAgent",
    "MajorityAgent",
    "RandomAgent",
    "connect_keyword",
    "connect_majority",
    "connect_random",
    "training_split",
]


def _title(task: Task) -> str:
    alert = task.alert or {}
    title = alert.get("title")
    return title if isinstance(title, str) else ""


def _cited(answer: Diagnosis, notebook: Notebook, location: Sequence[str]) -> Diagnosis:
    """The answer with claims citing the first item of each result (facts that hold) and a location."""
    return answer.model_copy(update={"claims": cited_claims(notebook.firsts()), "location": list(location)})


class MajorityAgent:
    """The most common answer of a training split, whatever the alert; it cites what one call per tool served."""

    __slots__ = ("answer", "answers", "prior", "spec")

    def __init__(
        self,
        training: Pack | Sequence[Pack] = (),
        *,
        spec: str = "majority",
        uniform: Mapping[str, Vocabulary] | None = None,
    ) -> None:
        """Count the training split's answer keys once, per domain.

        Args:
            training: the pack (or packs) whose scenarios' answers are counted: a training split, never the
                pack graded (`connect_majority` sees to that).
            spec: the spec this agent was resolved from.
            uniform: domain -> vocabulary, for domains with no training split: a uniform prior over the
                vocabulary (every mode as likely; the tie is broken by name).

        Raises:
            AgentSpecError: the training packs hold no scenario to count.
        """
        packs = [training] if isinstance(training, Pack) else list(training)
        scenarios = [s for p in packs for s in p.scenarios]
        self.spec = spec
        if packs and not scenarios:
            raise AgentSpecError(
                "the majority baseline needs at least one loaded scenario to count answers from",
                field="--agent",
                hint="pass a training pack that loads (check it with: sredrill scenarios lint --pack PATH)",
            )
        answers = {d: _majority([s for p in packs if p.domain == d for s in p.scenarios]) for d in _domains(packs)}
        priors = {d: f"training split {', '.join(p.name for p in packs if p.domain == d)}" for d in answers}
        for domain, vocabulary in (uniform or {}).items():
            if domain not in answers:
                answers[domain] = _uniform(vocabulary)
                priors[domain] = f"a uniform prior over the {domain} vocabulary (no training split)"
        self.answer: Diagnosis | None = _majority(scenarios) if scenarios else next(iter(answers.values()), None)
        """The constant of every training pack together (the one answer of a run of one domain)."""
        self.answers: Mapping[str, Diagnosis] = MappingProxyType(answers)
        """Domain name -> the constant of that domain's training split."""
        self.prior: Mapping[str, str] = MappingProxyType(priors)
        """Domain name -> where its prior comes from, in words."""

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        """Answer the constant of the task's domain after one call per tool (an incident episode: declare it
        healthy at once)."""
        if _is_incident(task):
            return await _act(task, recorder, [("declare_healthy", {})], "Majority baseline")
        if self.answer is None:
            raise AgentError("the majority baseline was built without a training split: it has no answer to give")
        answer = self.answers.get(task_domain(t.name for t in task.tools), self.answer)
        notebook = await investigate(task, targets=1)
        return finish(_cited(answer, notebook, notebook.likely_location()), recorder)


def _domains(packs: Sequence[Pack]) -> list[str]:
    return sorted({p.domain for p in packs if p.domain and p.scenarios})


def _majority(scenarios: Sequence[Scenario]) -> Diagnosis:
    """The most common answer of the scenarios: their failure-mode set and their category."""
    # Ties are broken by name, so the constant does not depend on the order scenarios were loaded in.
    modes = Counter(tuple(sorted(s.failure_modes)) for s in scenarios)
    best_modes = min(modes, key=lambda m: (-modes[m], m))
    categories = Counter(s.category for s in scenarios)
    best_category = min(categories, key=lambda c: (-categories[c], c.value))
    words = " and ".join(spaced(m) for m in best_modes)
    return Diagnosis(
        root_cause=f"Majority baseline: the most common answer of the training split, {words}, whatever the alert.",
        category=best_category,
        failure_modes=list(best_modes),
        report=f"A constant guess: {modes[best_modes]} of {len(scenarios)} training scenarios have this answer.",
    )


def _uniform(vocabulary: Vocabulary) -> Diagnosis:
    """The constant of a uniform prior: every mode equally likely, the tie broken by name (never `unknown`)."""
    mode = next(m for m in vocabulary.names if m != "unknown")
    return Diagnosis(
        root_cause=f"Majority baseline: with no training split, a uniform prior; the tie falls to {spaced(mode)}.",
        category=vocabulary.category_of(mode),
        failure_modes=[mode],
        report="A constant guess from a uniform prior over the vocabulary.",
    )


class KeywordAgent:
    """Diagnosis from the alert title's words alone; it cites what one call per tool served."""

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
        return best_mode(title, vocabulary or self.vocabulary)

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        """Map the title's words to a failure mode (`unknown` when no word matches), citing what one call per
        tool served.

        On an incident episode: the remediation whose name shares a word with a firing alert's, then declare.
        """
        if _is_incident(task):
            observation = await task.call_tool("observe")
            alerts = observation.get("alerts") if isinstance(observation, dict) else None
            firing = [a for a in alerts if isinstance(a, str)] if isinstance(alerts, list) else []
            alert_words = set(tokens(" ".join(firing).replace("_", " ").replace(":", " ")))
            # A family's alerts are `<rule>:<component>`: a remediation that takes a target aims at the first
            # alert's component when it may (else it is left out).
            component = firing[0].partition(":")[2] if firing and ":" in firing[0] else None
            plan: list[tuple[str, dict[str, Any]]] = []
            for spec in task.tools:
                if spec.name not in _REMEDIATIONS or not alert_words & set(tokens(spec.name.replace("_", " "))):
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
        diagnosis = Diagnosis(
            root_cause=(
                f"Keyword baseline: the alert title suggests {spaced(mode)}."
                if score
                else "Keyword baseline: no word of the alert title names a known failure mode."
            ),
            category=vocabulary.category_of(mode),
            failure_modes=[mode],
            report=f"Matched {score} word(s) of the title {title!r}; the evidence was listed, not read.",
        )
        notebook = await investigate(task, targets=1)
        return finish(_cited(diagnosis, notebook, notebook.likely_location()), recorder)


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
        """Answer a random failure mode and category, citing what one call per tool served.

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
            root_cause=f"Random baseline: a draw picked {spaced(mode)}.",
            category=category,
            failure_modes=[mode],
            report=f"Seed {self.seed}; the evidence was listed, not read.",
        )
        notebook = await investigate(task, targets=1)
        return finish(_cited(diagnosis, notebook, notebook.likely_location()), recorder)


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
    return by_domain.get(task_domain(t.name for t in task.tools), default) if by_domain else default


def training_split(pack: Pack) -> Pack | None:
    """The training split `pack.yml` declares for the pack (`training_split: NAME_OR_PATH`: a built-in pack's
    name, else a folder relative to the pack), loaded; None when it declares none.

    Raises:
        AgentSpecError: the declared split does not load.
    """
    path = pack.root / "pack.yml"
    if not path.is_file():
        return None
    # The loader validated this file already: reading it again cannot fail on its shape.
    config = PackConfig.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    value = config.training_split
    if value is None:
        return None
    from sredrill.scenarios import builtin_pack_names

    target: str | Path = value if value in builtin_pack_names() else pack.root / value
    try:
        return load_pack(target)
    except InputError as exc:
        raise AgentSpecError(
            f"{pack.name}/pack.yml: training_split {value!r} does not load: {exc.message}",
            field="training_split",
            hint="name a built-in pack or a pack folder relative to this pack",
        ) from exc


def _declare_hint(pack: Pack) -> str:
    return (
        f"declare one: add `training_split: PACK_OR_PATH` to {pack.name}/pack.yml (a pack of the same domain "
        "whose labels may be read), or run --agent majority:PACK_OR_PATH"
    )


def connect_majority(spec: AgentSpec, options: ConnectOptions) -> MajorityAgent:
    """`majority[:TRAINING]`: its prior comes from a training split, never from the packs it is graded on.

    `majority:NAME_OR_PATH` names the split; plain `majority` reads each run pack's `pack.yml: training_split`;
    a built-in pack, which ships none, gets a uniform prior over its domain's vocabulary.

    Raises:
        AgentSpecError: a run pack declares no training split (and is not built in), the split does not load,
            or it is one of the packs graded.
    """
    graded = [p for p in options.packs if isinstance(p, Pack)]
    training: list[Pack] = []
    uniform: dict[str, Vocabulary] = {}
    if spec.target:
        try:
            training.append(load_pack(spec.target))
        except InputError as exc:
            raise AgentSpecError(
                f"{spec.text!r}: the training split does not load: {exc.message}",
                field="--agent",
                hint="give a built-in pack's name or a pack folder: --agent majority:PACK_OR_PATH",
            ) from exc
    else:
        for pack in graded:
            split = training_split(pack)
            if split is not None:
                training.append(split)
            elif pack.builtin:
                uniform.setdefault(pack.domain, pack.vocabulary)
            else:
                raise AgentSpecError(
                    f"the majority baseline takes its prior from a training split, and pack {pack.name!r} "
                    "declares none (reading the labels of the pack it is graded on would be cheating)",
                    field="--agent",
                    hint=_declare_hint(pack),
                )
    graded_roots = {p.root.resolve() for p in graded}
    for split in training:
        if split.root.resolve() in graded_roots:
            raise AgentSpecError(
                f"the training split {split.name!r} is a pack this run grades: its labels cannot be the prior",
                field="--agent",
                hint=_declare_hint(split),
            )
    return MajorityAgent(training, spec=spec.text, uniform=uniform)


def connect_keyword(spec: AgentSpec, options: ConnectOptions) -> KeywordAgent:
    """`keyword`: the vocabulary of the run's first pack (the built-in one without packs); with packs of several
    domains, each task reads its own domain's first pack's."""
    return KeywordAgent(_vocabulary(options.packs), spec=spec.text, vocabularies=_vocabularies(options.packs))


def connect_random(spec: AgentSpec, options: ConnectOptions) -> RandomAgent:
    """`random`: seeded from `--seed` (`ConnectOptions.seed`), else 0."""
    seed = options.seed if options.seed is not None else 0
    return RandomAgent(seed, _vocabulary(options.packs), spec=spec.text, vocabularies=_vocabularies(options.packs))
