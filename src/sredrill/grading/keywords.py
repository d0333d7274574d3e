"""The keyword matcher: does a diagnosis use the words an answer key requires (or forbids)?

DESIGN §5: text is normalised (lower case, whitespace collapsed) and a keyword matches by **token set**:
every word token of the keyword is among the tokens of the text, in any order. Three refinements, each
fixing a quirk of the original suite's substring test (`reference/original_rds_suite.md` §3, §9):

- **Word tokens.** A token is a run of letters and digits; `_`, `-`, `:`, `/`, `.` and spaces separate
  tokens. So `max_connections` matches "max connections", `Multi-AZ` matches "multi-az", and `WAL` no
  longer matches inside "walk" (a substring test did).
- **One sentence.** All tokens of a keyword must sit in one passage: one sentence of one field (a field
  is split at `.`, `!`, `?`, `;` followed by a space, and at line breaks). "two root causes" is then not
  found in "Two metrics moved. The root cause … causes CPU load", which a whole-text token set would
  (and a forbidden keyword would fail a correct diagnosis).
- **Prefixes are explicit.** A keyword token ending in `*` matches any token that starts with it:
  `autoscal*` matches "autoscaling" and "autoscaled". A bare `autoscal` is a whole word, as every token
  is; a pack whose answer keys use stems (the original suite's 013 uses `autoscal`) maps the stem to a
  prefix in `pack.yml`: `keyword_aliases: {autoscal: ["autoscal*"]}`.

Aliases come from the pack (`pack.yml: keyword_aliases`, exposed as `Vocabulary.keyword_aliases`), never
from code (STYLE #39): a keyword is found when it or any of its aliases matches. Alias keys are looked up
by their tokens, so `max_connections`, `max connections` and `Max-Connections` share one entry. A keyword
without any word token (`%`) falls back to a normalised substring test.

**Compatibility grading** (answer keys in the upstream format, `GradingMode.COMPAT`) uses the upstream suite's
matcher instead, `UpstreamKeywordMatcher` (`reference/original_eks_suite.md` §3.2): over the fields joined and
normalised, a keyword matches when (a) it is a substring of the text, (b) one of its aliases is, or (c) every
`[a-z0-9]+` token of it is a whole token somewhere in the text. So the stem `autoscal` matches "autoscaling"
there, as upstream's keys expect; which fields are searched is the grader's choice.

Examples:
    >>> find_keywords("Replication lag grew; the replica fell behind.", ["replication lag", "WAL"])
    (('replication lag',), ('WAL',))
    >>> find_keywords("Storage was autoscaled.", ["autoscal"], {"autoscal": ["autoscal*"]})
    (('autoscal',), ())
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = [
    "KeywordAliases",
    "KeywordMatcher",
    "UpstreamKeywordMatcher",
    "find_keywords",
    "has_substring",
    "normalize_text",
    "split_passages",
    "word_tokens",
]

_WHITESPACE = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+")
# In a keyword (not in the text), a trailing `*` marks the token as a prefix.
_KEYWORD_WORD = re.compile(r"[^\W_]+\*?")
_ASCII_WORD = re.compile(r"[a-z0-9]+")  # the upstream matcher's tokens (of lower-cased text)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n")  # `\s*\n\s*` backtracked quadratically on long blank runs


def normalize_text(text: str) -> str:
    """Lower case, whitespace collapsed to single spaces, ends stripped."""
    return _WHITESPACE.sub(" ", text.strip().lower())


def word_tokens(text: str) -> tuple[str, ...]:
    """The word tokens of a text, lower-cased, in order (runs of letters and digits)."""
    return tuple(_WORD.findall(text.lower()))


def split_passages(text: str) -> tuple[str, ...]:
    """A text cut into sentences (at `.`/`!`/`?`/`;` followed by a space, and at line breaks), empty ones dropped."""
    return tuple(p for p in (s.strip() for s in _SENTENCE_END.split(text)) if p)


@dataclass(frozen=True, slots=True)
class _Pattern:
    """One spelling of a keyword: whole-word tokens plus prefix tokens (or a substring when it has no word)."""

    words: frozenset[str]
    prefixes: tuple[str, ...]
    substring: str

    @classmethod
    def of(cls, keyword: str) -> _Pattern:
        parts = _KEYWORD_WORD.findall(keyword.lower())
        return cls(
            words=frozenset(p for p in parts if not p.endswith("*")),
            prefixes=tuple(p[:-1] for p in parts if p.endswith("*")),
            substring=normalize_text(keyword),
        )

    @property
    def is_wordless(self) -> bool:
        return not self.words and not self.prefixes

    def matches(self, passage: frozenset[str]) -> bool:
        return self.words <= passage and all(any(t.startswith(p) for t in passage) for p in self.prefixes)


def _key(keyword: str) -> tuple[str, ...]:
    return tuple(_KEYWORD_WORD.findall(keyword.lower()))


@dataclass(frozen=True, slots=True)
class KeywordAliases:
    """A pack's keyword alias table, indexed by keyword tokens; build it once, match many texts with it."""

    table: Mapping[tuple[str, ...], tuple[str, ...]]
    """Keyword tokens -> the alias spellings accepted for that keyword."""

    @classmethod
    def of(cls, aliases: Mapping[str, Iterable[str]] | KeywordAliases | None) -> KeywordAliases:
        """Index an alias table (keyword -> spellings, e.g. `Vocabulary.keyword_aliases`); None is no alias."""
        if isinstance(aliases, KeywordAliases):
            return aliases
        table: dict[tuple[str, ...], tuple[str, ...]] = {}
        for key, variants in (aliases or {}).items():
            table[_key(key)] = (*table.get(_key(key), ()), *variants)
        return cls(MappingProxyType(table))

    def spellings(self, keyword: str) -> tuple[str, ...]:
        """The keyword followed by its aliases."""
        return (keyword, *self.table.get(_key(keyword), ()))

    def loose_spellings(self, keyword: str) -> tuple[str, ...]:
        """The keyword's aliases under any key that spells it with the same letters, whatever separates its
        words (`image pull backoff` finds the aliases of `ImagePullBackOff`), as the upstream suite's table is
        keyed by the keyword without its spaces."""
        joined = "".join(_key(keyword)).replace("*", "")
        return tuple(v for k, vs in self.table.items() if "".join(k).replace("*", "") == joined for v in vs)


def has_substring(text: str, keyword: str) -> bool:
    """True when the normalised keyword is a substring of the normalised text (the upstream suite's forbidden
    keyword test); an empty keyword is never found."""
    needle = normalize_text(keyword)
    return bool(needle) and needle in normalize_text(text)


@dataclass(frozen=True, slots=True)
class UpstreamKeywordMatcher:
    """The upstream suite's keyword test over several fields joined as one text (compatibility grading).

    A keyword matches when (a) its normalised form is a substring of the text (no word boundaries: `restart`
    matches "restarted", `autoscal` matches "autoscaling"), (b) an alias is a substring (a trailing `*`, this
    module's prefix mark, is dropped: a substring is a prefix match already), or (c) every `[a-z0-9]+` token of
    the keyword is a whole token of the text, in any order and anywhere.

    Examples:
        >>> m = UpstreamKeywordMatcher.of(["Storage autoscaling ran.", "Then the lag grew."])
        >>> m.find(["autoscal", "lag storage", "walk"])
        (('autoscal', 'lag storage'), ('walk',))
    """

    text: str
    """The fields joined by spaces, lower-cased, whitespace collapsed."""
    tokens: frozenset[str]
    aliases: KeywordAliases

    @classmethod
    def of(
        cls, text: str | Iterable[str], aliases: Mapping[str, Iterable[str]] | KeywordAliases | None = None
    ) -> UpstreamKeywordMatcher:
        """Join and normalise the fields once, for many keywords; `aliases` as for `KeywordMatcher.of`."""
        joined = normalize_text(" ".join((text,) if isinstance(text, str) else text))
        return cls(text=joined, tokens=frozenset(_ASCII_WORD.findall(joined)), aliases=KeywordAliases.of(aliases))

    def has(self, keyword: str) -> bool:
        """True when the keyword matches by (a), (b) or (c) of the class docstring."""
        needle = normalize_text(keyword)
        if not needle:
            return False
        if needle in self.text:
            return True
        for alias in (*self.aliases.spellings(keyword)[1:], *self.aliases.loose_spellings(keyword)):
            spelled = normalize_text(alias.replace("*", ""))
            if spelled and spelled in self.text:
                return True
        tokens = _ASCII_WORD.findall(needle)
        return bool(tokens) and all(t in self.tokens for t in tokens)

    def find(self, keywords: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """`(found, missing)`: the keywords split by whether they match, each in the given order."""
        found: list[str] = []
        missing: list[str] = []
        for keyword in keywords:
            (found if self.has(keyword) else missing).append(keyword)
        return tuple(found), tuple(missing)


@dataclass(frozen=True, slots=True)
class KeywordMatcher:
    """A text prepared for keyword lookups: its passages as token sets, tokenised once.

    Build one per text with `KeywordMatcher.of(...)` and ask it about many keywords; `find_keywords` is
    the one-shot form.
    """

    fields: tuple[str, ...]
    passages: tuple[frozenset[str], ...]
    """One token set per sentence of each field."""
    aliases: KeywordAliases

    @classmethod
    def of(
        cls, text: str | Iterable[str], aliases: Mapping[str, Iterable[str]] | KeywordAliases | None = None
    ) -> KeywordMatcher:
        """Prepare a text (or several fields, each split into sentences) and an alias table.

        Args:
            text: one text, or the fields of a diagnosis; a keyword matches inside one sentence of one field.
            aliases: keyword -> spellings accepted for it (a pack's `Vocabulary.keyword_aliases`), or a
                `KeywordAliases` built once for many texts.
        """
        fields = (text,) if isinstance(text, str) else tuple(text)
        passages = (frozenset(word_tokens(p)) for f in fields for p in split_passages(f))
        return cls(fields=fields, passages=tuple(p for p in passages if p), aliases=KeywordAliases.of(aliases))

    def spellings(self, keyword: str) -> tuple[str, ...]:
        """The keyword followed by its aliases."""
        return self.aliases.spellings(keyword)

    def has(self, keyword: str) -> bool:
        """True when the keyword, or one of its aliases, matches inside one passage."""
        for spelling in self.spellings(keyword):
            pattern = _Pattern.of(spelling)
            if pattern.is_wordless:
                if pattern.substring and any(pattern.substring in normalize_text(f) for f in self.fields):
                    return True
            elif any(pattern.matches(p) for p in self.passages):
                return True
        return False

    def find(self, keywords: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """`(found, missing)`: the keywords split by whether they match, each in the given order."""
        found: list[str] = []
        missing: list[str] = []
        for keyword in keywords:
            (found if self.has(keyword) else missing).append(keyword)
        return tuple(found), tuple(missing)


def find_keywords(
    text: str | Iterable[str],
    keywords: Iterable[str],
    aliases: Mapping[str, Iterable[str]] | KeywordAliases | None = None,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Which keywords a text uses: a token-set match per sentence, with the pack's aliases.

    Args:
        text: one text, or several fields (each split into sentences).
        keywords: the keywords, as the answer key spells them (`*` at the end of a token: a prefix).
        aliases: keyword -> accepted spellings (`Vocabulary.keyword_aliases`); None for none.

    Returns:
        `(found, missing)`, each in the order of `keywords`, spelled as given.

    Examples:
        >>> find_keywords(["Connections hit max_connections."], ["max connections", "idle"])
        (('max connections',), ('idle',))
    """
    return KeywordMatcher.of(text, aliases).find(keywords)
