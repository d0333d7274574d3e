"""Blind mode: the alert an agent may see (`BlindAlert`), and the strings nothing shown to an agent may contain.

A `BlindAlert` is built only by `blind_alert(scenario, vocabulary)` (STYLE #9: blind mode is a type). It drops
labels and annotations that name the answer (`…_failure_mode`, `root_cause`, …, and the keys the scenario's
domain lists in its `BlindRules`) or whose whole value is a
failure-mode or category name, and removes from every text the scenario's id, folder and slug, any
snake_case failure-mode or category identifier (`replication_lag`, `resource_exhaustion`, also inside a
longer token like `aws_rds_replication_lag`) and any sentence of the reference answer. Natural words stay:
"Replication lag on ledger-db" is what a real alert says; `replication_lag` is a label.

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
from types import MappingProxyType

from pydantic import JsonValue

from sredrill.scenarios.domain import get_domain
from sredrill.scenarios.pack import Scenario
from sredrill.scenarios.phrases import PhraseRemover
from sredrill.scenarios.vocabulary import Vocabulary, normalize_keyword, normalize_name

__all__ = ["BlindAlert", "blind_alert", "find_leaks", "leak_needles", "reference_sentences"]

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


def find_leaks(text: str, needles: Iterable[str]) -> list[str]:
    """The needles `text` contains, compared case-insensitively with whitespace collapsed; sorted."""
    haystack = normalize_keyword(text)
    return sorted(n for n in needles if n in haystack)


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

    @classmethod
    def for_scenario(cls, scenario: Scenario, vocabulary: Vocabulary) -> _Scrubber:
        needles = leak_needles(scenario, vocabulary)
        phrases = PhraseRemover.of(n for n in needles if not _SNAKE.fullmatch(n))
        keys = frozenset(k.lower() for k in get_domain(scenario.domain).blinding.answer_keys)
        return cls(answer_keys=keys, identifiers=vocabulary.identifiers(), phrases=phrases)

    def keeps(self, key: str, value: object) -> bool:
        """False for an entry that names the answer by its key, or whose whole value is a vocabulary name."""
        if _ANSWER_KEY.search(key) or key.lower() in self.answer_keys or self._is_label(key):
            return False
        return not (isinstance(value, str) and normalize_name(value) in self.identifiers)

    def entries(self, mapping: Mapping[str, str]) -> dict[str, str]:
        return {k: self.text(v) for k, v in mapping.items() if self.keeps(k, v)}

    def text(self, value: str) -> str:
        out = _SNAKE.sub(lambda m: "" if self._is_label(m.group(0)) else m.group(0), value)
        # Also the phrases a removal joins (the halves of another around it), still in one pass.
        out = self.phrases.remove(out)
        out = _EMPTY_BRACKETS.sub("", out)
        return _SPACES.sub(" ", out).strip()

    def json(self, value: JsonValue) -> JsonValue:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, dict):
            return {k: self.json(v) for k, v in value.items() if self.keeps(k, v)}
        return value

    def _is_label(self, token: str) -> bool:
        """True when a snake_case token is, or contains, a multi-word vocabulary identifier."""
        t = token.lower()
        return t in self.identifiers or any("_" in i and i in t for i in self.identifiers)
