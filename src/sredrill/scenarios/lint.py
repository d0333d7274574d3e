"""Lint: checks a loaded pack for contradictions, leaks and unrealistic telemetry (DESIGN §2).

Errors block a run: a scenario that does not load (unknown failure mode, unequal timestamps/values, bad
syntax, …), expected ∩ forbidden (or ruled out) ≠ ∅, `decisive` or `refuting` naming what the key does not
expect or rule out (with the former: every `AnswerKey.conflicts()` entry), a leak of the answer into what the
agent sees after blinding (in the alert, a failure-mode or category name in any word form too). Warnings never
block: answer keys that disagree with themselves, a sredrill-format key of a faulty scenario without `location`
or with an expected mode without `decisive` items, evidence that states "root cause:", and whatever the
scenario's domain checks (`Domain.lint`: for RDS, units that are not CloudWatch's, dimensions that do not match
the instance, events or points outside the window, duplicate series; and, in every domain, the answer key's
selectors that match no evidence item, `evidence.keys`). Then the pack-wide checks (`PACK_RULES`): a field of
the blinded alerts whose presence or emptiness tells the healthy scenarios from the faulty ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from pydantic import JsonValue

from sredrill.errors import PackError
from sredrill.results import GradingMode
from sredrill.scenarios.blind import blind_alert, find_leaks, leak_needles, predictive_fields
from sredrill.scenarios.domain import get_domain
from sredrill.scenarios.findings import Finding, Severity
from sredrill.scenarios.findings import error as _error
from sredrill.scenarios.findings import warning as _warning
from sredrill.scenarios.pack import Pack, Scenario
from sredrill.scenarios.vocabulary import Vocabulary

__all__ = ["PACK_RULES", "Finding", "Severity", "answer_key_findings", "lint_pack", "lint_scenario"]

# "Root cause:" (also `root_cause :`, "Root-Cause:"), where evidence states its own diagnosis. Linear: the joiner
# and space runs are possessive, and a match can only start at an `r`.
_STATED_CAUSE = re.compile(r"root[\s_\-]*+cause\s*+:", re.IGNORECASE)
_EXCERPT = 60


def lint_pack(pack: Pack) -> list[Finding]:
    """Every finding of a pack: load errors first, then each scenario's in folder order, then the pack-wide ones."""
    findings = [_from_error(e) for e in pack.errors]
    for scenario in pack.scenarios:
        findings.extend(lint_scenario(scenario, pack.vocabulary))
    findings += [f for rule in PACK_RULES for f in rule(pack)]
    return findings


def lint_scenario(scenario: Scenario, vocabulary: Vocabulary) -> list[Finding]:
    """The findings of one loaded scenario: the core's rules, then its domain's."""
    domain = get_domain(scenario.domain)
    findings = [f for check in (_contradictions, answer_key_findings, _visible) for f in check(scenario, vocabulary)]
    findings += [f for rule in domain.lint for f in rule(scenario, vocabulary)]
    findings += _consistency(scenario, vocabulary)
    return findings


def _from_error(error: PackError) -> Finding:
    message = error.message
    if error.allowed:
        message += "\n  allowed: " + ", ".join(error.allowed[:12]) + (", …" if len(error.allowed) > 12 else "")
    return Finding(Severity.ERROR, "load", error.path or "", error.field, message, error.hint or "")


def _contradictions(s: Scenario, _: Vocabulary) -> Iterator[Finding]:
    a, path = s.answer, s.files["answer.yml"]
    expected = set(a.expected_failure_modes)
    for name, field in ((a.forbidden_categories, "forbidden_categories"), (a.ruled_out, "ruled_out")):
        clash = sorted(expected & set(name))
        if s.category.value in name and s.category.value not in clash:
            clash.append(s.category.value)
        if clash:
            yield _error(
                "contradiction",
                path,
                field,
                f"{', '.join(clash)} is both expected and in {field}",
                f"remove it from {field} (a symptom to dismiss belongs there; the true cause does not)",
            )


def answer_key_findings(s: Scenario, _: Vocabulary | None = None) -> Iterator[Finding]:
    """What lint says about an answer key's grounding fields, from the key alone (no evidence read).

    Errors: `decisive` names a mode that is not expected, `refuting` a hypothesis that is not ruled out (the
    entries of `AnswerKey.conflicts()` that `_contradictions` does not report). Warnings, for a sredrill-format
    key only (a compat key is graded on upstream's fields): a faulty scenario without `location`, an expected
    mode other than `healthy` without `decisive` items. Whether the selectors match evidence is the domain's
    rule (`evidence.keys.selector_findings`), which needs the scenario's server.
    """
    a, path = s.answer, s.files["answer.yml"]
    modes = set(a.expected_failure_modes)
    for mode in a.decisive:
        if mode not in modes:
            yield _error(
                "contradiction",
                path,
                f"decisive.{mode}",
                f"decisive names {mode!r}, which is not in failure_modes ({', '.join(sorted(modes))})",
                "key decisive items by an expected failure mode, or drop the entry",
            )
    for hypothesis in a.refuting:
        if hypothesis not in a.ruled_out:
            yield _error(
                "contradiction",
                path,
                f"refuting.{hypothesis}",
                f"refuting names {hypothesis!r}, which is not in ruled_out ({', '.join(a.ruled_out) or 'empty'})",
                "add the hypothesis to ruled_out, or drop the entry",
            )
    if s.grading is not GradingMode.SREDRILL:
        return
    faulty = sorted(m for m in modes if m != "healthy")
    if faulty and not a.location:
        yield _warning(
            "key_location",
            path,
            "location",
            f"the key names no location for {', '.join(faulty)}, so a diagnosis is not asked where the fault is",
            "add location: [every name a diagnosis may give the faulty resource, e.g. the instance or replica id]",
        )
    for mode in faulty:
        if not a.decisive.get(mode):
            yield _warning(
                "key_decisive",
                path,
                f"decisive.{mode}",
                f"{mode} has no decisive items, so any cited fact that holds backs it",
                f"add decisive: {{{mode}: [{{metric: ..., shows: [rising]}}]}} naming the 1-3 items that show it",
            )


def _visible(s: Scenario, v: Vocabulary) -> Iterator[Finding]:
    """The rules over what an agent sees (the alert after blinding, then the evidence): a leak is an error, a
    string that states its own diagnosis ("root cause: …") a warning."""
    needles = leak_needles(s, v)
    alert = _walk(s.files["alert.json"], "", blind_alert(s, v).to_payload())
    visible = get_domain(s.domain).visible_text
    evidence = () if visible is None else visible(s)
    # In the alert, a failure-mode name in any word form is a leak (blinding removes them all, so one left is a
    # bug); evidence keeps its native words (`OOMKilled`), only the literal needles count there.
    for strings, vocabulary in ((alert, v), (evidence, None)):
        for path, field, text in strings:
            for needle in find_leaks(text, needles, vocabulary=vocabulary):
                yield _error(
                    "leak",
                    path,
                    field,
                    f"an agent would see {needle!r}, which gives the answer away",
                    "reword the text so it states evidence, not the diagnosis or the scenario's name",
                )
            stated = _STATED_CAUSE.search(text)
            if stated is not None:
                yield _warning(
                    "stated_cause",
                    path,
                    field,
                    f"the evidence states the answer outright: {text[stated.start() :][:_EXCERPT]!r}",
                    "say what the system recorded (the reason, the numbers, the message it logged) and leave "
                    "the diagnosis to the agent: drop the 'root cause:' statement",
                )


def _walk(path: str, field: str, value: JsonValue) -> Iterator[tuple[str, str, str]]:
    if isinstance(value, str):
        yield path, field, value
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(path, f"{field}[{i}]", item)
    elif isinstance(value, dict):
        for key, item in value.items():
            sub = f"{field}.{key}" if field else key
            yield path, sub, key
            yield from _walk(path, sub, item)


def _consistency(s: Scenario, v: Vocabulary) -> Iterator[Finding]:
    answer_path, meta_path = s.files["answer.yml"], f"{s.pack}/{s.folder}/scenario.yml"
    expected = set(s.failure_modes)
    categories = {v.category_of(m) for m in expected if m in v.modes}
    if categories and s.category not in categories:
        yield _warning(
            "consistency",
            answer_path,
            "root_cause_category",
            f"{s.category.value} is not the category of any expected failure mode ({', '.join(sorted(expected))})",
            f"use one of: {', '.join(sorted(c.value for c in categories))}",
        )
    main = set(v.resolve_all([s.metadata.failure_mode]))
    if not main <= expected:
        yield _warning(
            "consistency",
            meta_path,
            "failure_mode",
            f"{s.metadata.failure_mode} is not among answer.yml's failure_modes",
            "make scenario.yml's failure_mode one of the expected failure modes",
        )
    if s.metadata.scenario_id != s.folder:
        yield _warning(
            "consistency",
            meta_path,
            "scenario_id",
            f"scenario_id {s.metadata.scenario_id!r} differs from the folder name {s.folder!r}",
            f"set scenario_id to {s.folder!r}",
        )
    for i, source in enumerate(s.answer.required_evidence_sources):
        if not s.has_source(source):
            yield _warning(
                "consistency",
                answer_path,
                f"required_evidence_sources[{i}]",
                f"{source} is required but not in scenario.yml's available_evidence",
                "add it to available_evidence (with its file), or drop the requirement",
            )


def _predictive_fields(pack: Pack) -> Iterator[Finding]:
    for found in predictive_fields(pack):
        yield _warning(
            "predictive_field",
            f"{pack.name}/*/alert.json",
            found.field,
            found.describe(),
            "give the field to every scenario's alert, with values that do not give the answer away, or to none; "
            "if it carries the answer whatever its value, list it in the domain's BlindRules.answer_keys",
        )


PACK_RULES: tuple[Callable[[Pack], Iterable[Finding]], ...] = (_predictive_fields,)
"""The checks of a whole pack, after every scenario's (`lint_pack`)."""
