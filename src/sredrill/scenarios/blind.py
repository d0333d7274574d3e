"""Blind mode: the alert an agent may see (`BlindAlert`), and the strings nothing shown to an agent may contain.

A `BlindAlert` is built only by `blind_alert(scenario, vocabulary)` (STYLE #9: blind mode is a type). It drops
labels and annotations that name the answer (`…_failure_mode`, `root_cause`, …, and the keys the scenario's
domain lists in its `BlindRules`), whose key names a failure mode, or whose value is nothing but failure-mode or
category names, and removes from every text (title, labels, annotations, extras) the scenario's id, folder and
slug, any sentence of the reference answer, and every failure-mode name, alias, set name and category name of
the pack's vocabulary in every word form (`alert_names`): snake (`replication_lag`, also a longer identifier
built on one, `aws_rds_replication_lag_maximum`), Title ("Replication Lag", "OOM Killed"), camel or Pascal case
inside a longer token (`KubernetesPodOOMKilled`, `HighReplicationLag`), spaced or hyphenated ("image-pull
backoff"). `unknown` stays: an ordinary word, and never the answer an alert implies. So "Replication lag above
600 seconds" reaches an agent as "above 600 seconds": the alert says what fired, not what it means.

Evidence is not blinded: a pod's `OOMKilled` is what the cluster recorded, and reading it is the agent's work.
`leak_needles` are the literal strings nothing an agent sees may contain (evidence included); `find_leaks`
with `vocabulary=` also finds the names in every word form, the check for the alert.

`predictive_fields(pack)` is the pack-wide guard: a label or annotation of the blinded alerts whose presence, or
emptiness, alone tells the healthy scenarios from the faulty ones (upstream's `error`, "" exactly when healthy).

Examples:
    >>> alert = blind_alert(scenario, pack.vocabulary)          # doctest: +SKIP
    >>> find_leaks(json.dumps(alert.to_payload()), leak_needles(scenario, pack.vocabulary))  # doctest: +SKIP
    []
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from types import MappingProxyType
from typing import Literal

from pydantic import JsonValue

from sredrill.diagnosis import Category
from sredrill.scenarios.domain import get_domain
from sredrill.scenarios.pack import Pack, Scenario
from sredrill.scenarios.phrases import PhraseRemover, WordForms
from sredrill.scenarios.vocabulary import UNKNOWN, Vocabulary, normalize_keyword, normalize_name

__all__ = [
    "BlindAlert",
    "PredictiveField",
    "alert_names",
    "blind_alert",
    "find_leaks",
    "leak_needles",
    "predictive_fields",
    "reference_sentences",
]

# Keys that, whatever their value, carry ground truth in the original suite or in common alert payloads.
_ANSWER_KEY = re.compile(
    r"failure_?mode|root_?cause|category|scenario|ground_?truth|answer|expected|diagnos", re.IGNORECASE
)
# Linear on hostile text: a match may start only where a run of letters and digits starts, and possessive
# runs never backtrack (without both, a 100 KB run of letters took seconds per position tried).
_SNAKE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]++(?:_[A-Za-z0-9]++)+")
_SECTION = re.compile(r"^\s*[A-Z][A-Z_]{3,}:\s*")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_EVIDENCE_TAG = "[evidence:"
# `(?<!\s)`: an arrow's whitespace is matched from the start of its run only (else each position of a long
# run of spaces rescans the rest of it: quadratic).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<!\s)\s*+->\s*")
_MIN_SENTENCE_WORDS = 6
_EMPTY_BRACKETS = re.compile(r"\(\s*\)|\[\s*\]")
_SPACES = re.compile(r"[ \t]{2,}")
# Removing one thing can join the halves of another (`Replic` + folder + `ation lag`): a text is scrubbed until
# it is stable, at most this many passes (each is linear); a text still changing after them is dropped whole.
_MAX_PASSES = 4
_SEAL = object()


def reference_sentences(model_response: str) -> tuple[str, ...]:
    """The sentences of a reference answer long enough to identify it (section headers and tags removed).

    A sentence shorter than six words ("CPU is high.") is too common to be a leak, so it is left out.
    """
    out: list[str] = []
    for line in model_response.splitlines():
        text = _drop_evidence_tags(_LIST_ITEM.sub("", _SECTION.sub("", line)))
        for sentence in _SENTENCE_END.split(text):
            s = normalize_keyword(sentence).rstrip(".!?;:, ")
            if len(s.split()) >= _MIN_SENTENCE_WORDS:
                out.append(s)
    return tuple(dict.fromkeys(out))


def _drop_evidence_tags(line: str) -> str:
    """`line` without `[evidence: …]` tags (case-insensitive), in one pass.

    A tag ends at the first `]` after it, so each `]`-terminated piece loses everything from its first tag on.
    (The regular expression `\\[evidence:[^\\]]*\\]` rescanned the rest of the line from every unclosed tag.)
    """
    if _EVIDENCE_TAG not in line.lower():
        return line
    *closed, last = line.split("]")
    out = []
    for piece in closed:
        at = piece.lower().find(_EVIDENCE_TAG)
        out.append(piece[:at] if at >= 0 else piece + "]")
    return "".join(out) + last


def leak_needles(scenario: Scenario, vocabulary: Vocabulary) -> frozenset[str]:
    """The strings nothing shown to an agent may contain, lower-cased; compare with `find_leaks`.

    They are the scenario's id, folder and slug (a one-word slug such as `healthy` is left out: it is an
    ordinary word, and the folder name already covers it), every snake_case failure-mode or category
    identifier of the vocabulary, and every sentence of the reference answer (`model_response`).

    The vocabulary is the same for every scenario of a pack, so a listing of it that every task receives
    alike (e.g. the `submit_diagnosis` schema) tells an agent nothing about one scenario; a byte-capture
    test should check evidence and prompts, not that shared schema.
    """
    needles = {scenario.folder, scenario.metadata.scenario_id, scenario.qualified_id}
    if "-" in scenario.slug:
        needles.add(scenario.slug)
    needles.update(i for i in vocabulary.identifiers() if "_" in i)
    needles.update(reference_sentences(scenario.answer.model_response))
    return frozenset(n.lower() for n in needles if n.strip())


def alert_names(vocabulary: Vocabulary) -> tuple[str, ...]:
    """The names blinding removes from the alert in every word form: every failure mode, alias, set and category
    of the vocabulary but `unknown` (an ordinary word, and never the answer an alert implies); the canonical
    failure modes first (a leak is reported by the first name that spells it: `crashloop_backoff`, not the
    alias `crash_loop_backoff`)."""
    names = vocabulary.identifiers() - {UNKNOWN.name}
    return tuple(sorted(names, key=lambda n: (n not in vocabulary.modes, n)))


def find_leaks(text: str, needles: Iterable[str], *, vocabulary: Vocabulary | None = None) -> list[str]:
    """The needles `text` contains, compared case-insensitively with whitespace collapsed; sorted.

    With `vocabulary`, also every name of `alert_names(vocabulary)` that `text` states in any word form
    (`OOMKilled` reports `oom_killed`, "Replication Lag" `replication_lag`): the check for an alert. Evidence
    keeps its native words (`OOMKilled` is what a pod's status says), so check it without.
    """
    haystack = normalize_keyword(text)
    found = {n for n in needles if n in haystack}
    if vocabulary is not None:
        found.update(_word_forms(alert_names(vocabulary)).find(text))
    return sorted(found)


@lru_cache(maxsize=32)  # one per vocabulary in use: building the pattern costs a few milliseconds
def _word_forms(names: tuple[str, ...]) -> WordForms:
    return WordForms.of(names)


@dataclass(frozen=True, slots=True)
class BlindAlert:
    """The alert with the ground truth removed: the only alert type the toolset accepts.

    Built only by `blind_alert()`; constructing it directly raises `TypeError`.
    """

    title: str
    state: str
    alert_source: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    starts_at: datetime | None
    """When the alert fired (`startsAt`, else the metric window's midpoint)."""
    extra: Mapping[str, JsonValue]
    """Other keys of the payload, scrubbed the same way."""
    _seal: object = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self._seal is not _SEAL:
            raise TypeError("a BlindAlert is built only by blind_alert(scenario, vocabulary)")

    def to_payload(self) -> dict[str, JsonValue]:
        """The alert in `alert.json`'s shape, ready to serialise for an agent."""
        payload: dict[str, JsonValue] = {
            "title": self.title,
            "state": self.state,
            "alert_source": self.alert_source,
            "commonLabels": dict(self.labels),
            "commonAnnotations": dict(self.annotations),
        }
        if self.starts_at is not None:
            payload["startsAt"] = self.starts_at.astimezone(UTC).isoformat().replace("+00:00", "Z")
        payload.update({k: v for k, v in self.extra.items() if k not in payload})
        return payload


def blind_alert(scenario: Scenario, vocabulary: Vocabulary) -> BlindAlert:
    """The scenario's alert as an agent may see it.

    Args:
        scenario: a loaded scenario.
        vocabulary: its pack's vocabulary (`Pack.vocabulary`): every failure mode and category it names
            is scrubbed.

    Returns:
        The `BlindAlert`.
    """
    scrub = _Scrubber.for_scenario(scenario, vocabulary)
    alert = scenario.alert
    extra = {k: scrub.json(v) for k, v in (alert.model_extra or {}).items() if scrub.keeps(k, v)}
    return BlindAlert(
        title=scrub.text(alert.title),
        state=scrub.text(alert.state),
        alert_source=scrub.text(alert.alert_source),
        labels=MappingProxyType(scrub.entries(alert.common_labels)),
        annotations=MappingProxyType(scrub.entries(alert.common_annotations)),
        starts_at=scenario.alert_started_at,
        extra=MappingProxyType(extra),
        _seal=_SEAL,
    )


@dataclass(frozen=True, slots=True)
class _Scrubber:
    answer_keys: frozenset[str]
    """The domain's keys that carry the answer whatever their value (`BlindRules.answer_keys`), lower case."""
    identifiers: frozenset[str]
    """Every failure-mode, set and category name (lower case)."""
    phrases: PhraseRemover
    """Removes the literal strings: ids, folder, slug, reference sentences (in linear time, see `phrases`)."""
    words: WordForms
    """Removes `alert_names` in every word form."""

    @classmethod
    def for_scenario(cls, scenario: Scenario, vocabulary: Vocabulary) -> _Scrubber:
        needles = leak_needles(scenario, vocabulary)
        phrases = PhraseRemover.of(n for n in needles if not _SNAKE.fullmatch(n))
        keys = frozenset(k.lower() for k in get_domain(scenario.domain).blinding.answer_keys)
        words = _word_forms(alert_names(vocabulary))
        return cls(answer_keys=keys, identifiers=vocabulary.identifiers(), phrases=phrases, words=words)

    def keeps(self, key: str, value: object) -> bool:
        """False for an entry that names the answer by its key (or holds a vocabulary name in it, in any word form),
        or whose whole value is a vocabulary name."""
        if _ANSWER_KEY.search(key) or key.lower() in self.answer_keys or self._is_label(key):
            return False
        return not (isinstance(value, str) and normalize_name(value) in self.identifiers)

    def entries(self, mapping: Mapping[str, str]) -> dict[str, str]:
        return {k: t for k, v in mapping.items() if self.keeps(k, v) and _said(t := self.text(v), v)}

    def text(self, value: str) -> str:
        out = value
        for _ in range(_MAX_PASSES):
            scrubbed = self._pass(out)
            if scrubbed == out:
                return out
            out = scrubbed
        return out if self._pass(out) == out else ""

    def _pass(self, value: str) -> str:
        out = _SNAKE.sub(lambda m: "" if self._is_label(m.group(0)) else m.group(0), value)
        # Also the phrases a removal joins (the halves of another around it), still in one pass.
        out = self.phrases.remove(out)
        out = self.words.remove(out)
        out = _EMPTY_BRACKETS.sub("", out)
        return _SPACES.sub(" ", out).strip()

    def json(self, value: JsonValue) -> JsonValue:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, dict):
            kept = ((k, v) for k, v in value.items() if self.keeps(k, v))
            return {k: j for k, v in kept if _said(j := self.json(v), v)}
        return value

    def _is_label(self, token: str) -> bool:
        """True when a snake_case token is, or contains, a vocabulary identifier (`aws_rds_replication_lag_max`,
        `healthy_check`): the whole identifier goes, not just the name in it."""
        t = token.lower()
        return t in self.identifiers or any("_" in i and i in t for i in self.identifiers) or self.words.search(token)


def _said(scrubbed: JsonValue, original: JsonValue) -> bool:
    """False when scrubbing emptied a text that said something: it said only the answer, so the entry goes
    (an empty value left under its key would still say where the answer was)."""
    return not (isinstance(original, str) and original.strip() and isinstance(scrubbed, str) and not scrubbed)


# A pack needs this many of each kind before a field can be said to separate them (one of each proves nothing).
_MIN_EACH = 2
_FIXED = frozenset({"title", "state", "alert_source"})
_SECTIONS = ("commonLabels", "commonAnnotations")


@dataclass(frozen=True, slots=True)
class PredictiveField:
    """A field of the blinded alerts whose presence, or emptiness, alone tells healthy scenarios from faulty ones."""

    field: str
    """Where it is in the alert (`commonAnnotations.error`; an extra top-level key by its name)."""
    signal: Literal["present", "non-empty"]
    """What separates them: the field being there at all, or its value being non-empty."""
    in_healthy: bool
    """True when the healthy scenarios are the ones with the signal (the faulty ones all lack it)."""
    healthy: int
    faulty: int
    """How many healthy and faulty scenarios the pack has."""

    def describe(self) -> str:
        """One line: which scenarios have the signal, which do not, and what that gives away."""
        have, lack = ("healthy", "faulty") if self.in_healthy else ("faulty", "healthy")
        counts = {"healthy": self.healthy, "faulty": self.faulty}
        gives = "its presence" if self.signal == "present" else "whether it is empty"
        return (
            f"{self.field} is {self.signal} in all {counts[have]} {have} scenarios and in none of the "
            f"{counts[lack]} {lack} ones: {gives} tells an agent the answer"
        )


def predictive_fields(pack: Pack) -> list[PredictiveField]:
    """The fields of the pack's blinded alerts whose presence, or emptiness, separates its healthy scenarios (the
    answer's category is `healthy`) from its faulty ones; none unless it has at least 2 of each.

    Upstream's `error` annotation is "" in exactly the healthy scenarios (the K8s domain's `BlindRules` drop it);
    this finds any such field a pack has, whatever its domain.
    """
    n_healthy = sum(s.category is Category.HEALTHY for s in pack.scenarios)
    if min(n_healthy, len(pack.scenarios) - n_healthy) < _MIN_EACH:
        return []
    fields: list[tuple[bool, dict[str, JsonValue]]] = []
    for s in pack.scenarios:
        fields.append((s.category is Category.HEALTHY, _fields(blind_alert(s, pack.vocabulary).to_payload())))
    healthy = [f for h, f in fields if h]
    faulty = [f for h, f in fields if not h]
    out: list[PredictiveField] = []
    for name in sorted({k for _, f in fields for k in f}):
        for signal in ("present", "non-empty"):
            has = _has_present if signal == "present" else _has_value
            h = sum(has(f, name) for f in healthy)
            x = sum(has(f, name) for f in faulty)
            if (h, x) in {(len(healthy), 0), (0, len(faulty))}:
                out.append(PredictiveField(name, signal, h > 0, len(healthy), len(faulty)))
                break  # a field absent from one side is also empty there: report it once
    return out


def _fields(payload: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """The alert's labels and annotations (`commonLabels.severity`) and its other top-level keys, by name."""
    out: dict[str, JsonValue] = {}
    for key, value in payload.items():
        if key in _SECTIONS and isinstance(value, dict):
            out.update({f"{key}.{k}": v for k, v in value.items()})
        elif key not in _FIXED:
            out[key] = value
    return out


def _has_present(fields: Mapping[str, JsonValue], name: str) -> bool:
    return name in fields


def _has_value(fields: Mapping[str, JsonValue], name: str) -> bool:
    value = fields.get(name)
    return bool(value.strip()) if isinstance(value, str) else value not in (None, [], {})
