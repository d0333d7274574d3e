"""The Datadog-style log query of `search_logs`: a small, linear parser and the matcher it builds.

Syntax (a subset of Datadog's log search, enough to ask what an SRE asks):

- `key:value` matches a record with the tag `key:value`, or whose `service`, `host` or `status` is the value
  (`service:ledger-api`, `kube_pod:web-1`, `status:error`); `key:"a value"` quotes a value with spaces;
- a bare word must appear in the message, a `"quoted phrase"` as a whole (both case-insensitive);
- `*` in a value or word stands for any text (`kube_pod:ledger-*`); `*` alone matches every record;
- `-term` (or `NOT term`) negates a term; terms are ANDed (`AND` may be written, `OR` and parentheses are not
  supported: make one call per alternative).

A malformed query is a `ValueError` whose message says what is wrong, where, and how to fix it (the argument
model turns it into a `bad_arguments` error). Parsing is one pass over the text, matching one pass per term
over a record's fields, and the query's size is capped, so no input can make a call slow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["MAX_QUERY_CHARS", "MAX_TERMS", "LogFields", "LogQuery", "Term", "parse_query"]

MAX_QUERY_CHARS = 1000
"""The longest query accepted."""
MAX_TERMS = 32
"""The most terms one query may AND together."""

_FIELDS = ("service", "host", "status")
"""Record fields a `key:value` term also matches (besides the tags)."""
_SHOWN = 60
"""The most characters of a word an error message quotes."""
_STATUS_SYNONYMS = {"warning": "warn", "err": "error", "information": "info"}
_EXAMPLE = 'e.g. service:ledger-api status:error "connection refused" -kube_pod:ledger-api-1'


@dataclass(frozen=True, slots=True)
class Term:
    """One term of a query: a tag or field test (`key` set) or a message test; `value` is case-folded."""

    value: str
    key: str | None = None
    negated: bool = False

    def matches(self, record: LogFields) -> bool:
        """True when the record satisfies the term (its negation taken into account)."""
        if self.key is None:
            found = _glob_in(self.value, record.message)
        else:
            found = any(_glob_equals(self.value, v) for v in record.values_of(self.key))
        return found != self.negated


@dataclass(frozen=True, slots=True)
class LogFields:
    """What a query reads of one record, case-folded once: the message, the fields, the tags by key."""

    message: str
    fields: Mapping[str, str]
    """`service`, `host` and `status` (the ones the record has)."""
    tags: Mapping[str, tuple[str, ...]]
    """Tag key -> its values (a tag `kube_pod:web-1` is key `kube_pod`, value `web-1`)."""

    @classmethod
    def build(cls, message: str, fields: Mapping[str, str | None], tags: tuple[str, ...]) -> LogFields:
        by_key: dict[str, list[str]] = {}
        for tag in tags:
            key, sep, value = tag.partition(":")
            if sep:
                by_key.setdefault(key.strip().casefold(), []).append(value.strip().casefold())
        kept = {k: v.casefold() for k, v in fields.items() if v}
        if "status" in kept:
            kept["status"] = _STATUS_SYNONYMS.get(kept["status"], kept["status"])
        return cls(message.casefold(), kept, {k: tuple(v) for k, v in by_key.items()})

    def values_of(self, key: str) -> tuple[str, ...]:
        """The record's values for a term's key: the field of that name (if any), then its tags'."""
        field = self.fields.get(key)
        tagged = self.tags.get(key, ())
        return (field, *tagged) if field is not None else tagged


@dataclass(frozen=True, slots=True)
class LogQuery:
    """A parsed query: its terms, all of which a record must satisfy (no terms: every record matches)."""

    terms: tuple[Term, ...]

    def matches(self, record: LogFields) -> bool:
        return all(t.matches(record) for t in self.terms)


@lru_cache(maxsize=256)
def parse_query(text: str) -> LogQuery:
    """Parse a query (see the module docstring); the same text is parsed once.

    Raises:
        ValueError: the query is too long, has too many terms, an unbalanced quote, an empty `key:` or
            `:value`, a lone `-` or `NOT`, `OR`, or parentheses; the message says how to fix it.
    """
    if len(text) > MAX_QUERY_CHARS:
        raise ValueError(f"is {len(text)} characters long; at most {MAX_QUERY_CHARS}: search for fewer terms")
    terms: list[Term] = []
    negate_next = False
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        start = i
        negated = False
        if text[i] == "-":
            if i + 1 >= n or text[i + 1].isspace():
                raise ValueError(f"a lone '-' at position {i} negates nothing: write -word or -key:value")
            negated, i = True, i + 1
        if text[i] == '"':
            phrase, i = _quoted(text, i)
            if not phrase.strip():
                raise ValueError(f'an empty phrase "" at position {start}: put words between the quotes or drop them')
            term = Term(phrase.casefold(), None, negated)
        else:
            word, i = _word(text, i)
            if not negated and word in ("AND", "NOT", "OR"):
                if word == "OR":
                    raise ValueError(
                        f"OR (at position {start}) is not supported: terms are ANDed; make one call per alternative"
                    )
                if word == "NOT":
                    if negate_next:
                        raise ValueError(f"NOT NOT at position {start}: drop both")
                    negate_next = True
                continue
            term = _word_term(word, start, negated)
            if term.key is not None and term.value == "" and i < n and text[i] == '"':
                value, i = _quoted(text, i)
                term = Term(value.strip().casefold(), term.key, negated)
            elif term.key is not None and term.value == "":
                shown = _shown(word)
                raise ValueError(
                    f"{shown!r} at position {start} has no value: write {shown}value (e.g. service:ledger-api), "
                    f'or quote it ("{shown}") to search the message for it'
                )
        if negate_next:
            term = Term(term.value, term.key, not term.negated)
            negate_next = False
        if term.key is None and term.value.strip("*") == "":
            if term.negated:
                raise ValueError(f"{_shown(text[start:i])!r} at position {start} excludes every record: drop it")
            continue  # `*` (or `**`) matches everything: no test.
        terms.append(term)
        if len(terms) > MAX_TERMS:
            raise ValueError(f"has more than {MAX_TERMS} terms: keep the few that narrow the search most")
    if negate_next:
        raise ValueError("ends with NOT, which negates nothing: add the term to exclude, or drop NOT")
    return LogQuery(tuple(terms))


def _quoted(text: str, i: int) -> tuple[str, int]:
    """The text of the quoted string opening at `i` (`\\"` and `\\\\` escaped), and the index after it."""
    out: list[str] = []
    j = i + 1
    while j < len(text):
        c = text[j]
        if c == "\\" and j + 1 < len(text) and text[j + 1] in '"\\':
            out.append(text[j + 1])
            j += 2
            continue
        if c == '"':
            return "".join(out), j + 1
        out.append(c)
        j += 1
    raise ValueError(f"unbalanced quote: the '\"' at position {i} is never closed; close the phrase or drop the quote")


def _word(text: str, i: int) -> tuple[str, int]:
    """The unquoted word starting at `i` (up to whitespace, or up to a quote right after `key:`)."""
    j = i
    while j < len(text) and not text[j].isspace():
        c = text[j]
        if c == '"':
            if j > i and text[j - 1] == ":":
                break
            raise ValueError(
                f'a quote inside a word at position {j}: quote the whole phrase ("like this") or the value of '
                'a key (key:"like this")'
            )
        if c in "()":
            raise ValueError(
                f"parentheses (at position {j}) are not supported: terms are ANDed; make one call per alternative"
                f" ({_EXAMPLE})"
            )
        j += 1
    return text[i:j], j


def _word_term(word: str, start: int, negated: bool) -> Term:
    key, sep, value = word.partition(":")
    if not sep:
        return Term(word.casefold(), None, negated)
    if not key:
        shown = _shown(word)
        raise ValueError(
            f"{shown!r} at position {start} has no key: write key:value (e.g. service:ledger-api), or quote it "
            f'("{shown}") to search the message for it'
        )
    key = key.casefold()
    value = value.casefold()
    if key == "status":
        value = _STATUS_SYNONYMS.get(value, value)
    return Term(value, key, negated)


def _shown(word: str) -> str:
    """A word of the query as a message quotes it: its start only, when it is long."""
    return word if len(word) <= _SHOWN else word[: _SHOWN - 1] + "…"


def _glob_parts(pattern: str) -> list[str]:
    return pattern.split("*")


def _glob_in(pattern: str, text: str) -> bool:
    """True when the pattern occurs in the text, each `*` standing for any text (leftmost greedy: linear)."""
    pos = 0
    for part in _glob_parts(pattern):
        if not part:
            continue
        found = text.find(part, pos)
        if found < 0:
            return False
        pos = found + len(part)
    return True


def _glob_equals(pattern: str, text: str) -> bool:
    """True when the whole text matches the pattern, each `*` standing for any text."""
    if "*" not in pattern:
        return pattern == text
    parts = _glob_parts(pattern)
    first, last = parts[0], parts[-1]
    if not text.startswith(first) or len(text) < len(first) + len(last) or not text.endswith(last):
        return False
    middle = text[len(first) : len(text) - len(last)]
    return _glob_in("*".join(parts[1:-1]), middle)
