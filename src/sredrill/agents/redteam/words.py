"""Words and the vocabulary: the failure mode a text's words point to, and every word a vocabulary has.

`best_mode` is how the keyword baseline and the alert-only agent read an alert (CamelCase split, a word matching
another when one is a prefix of the other; a mode's synonyms count as its names); `vocabulary_words` is what the
stuffer writes everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from sredrill.scenarios import Pack, Vocabulary, get_domain
from sredrill.scenarios.domain import combined_vocabulary, domain_of_tools

__all__ = ["best_mode", "mode_score", "packs_vocabulary", "spaced", "task_domain", "tokens", "vocabulary_words"]

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_MIN_STEM = 5
_MIN_WORD = 3


def spaced(identifier: str) -> str:
    """`replication_lag` as words: `replication lag`."""
    return identifier.replace("_", " ")


def tokens(text: str) -> list[str]:
    """Lower-case word tokens, CamelCase split (`FreeStorageSpace` → free, storage, space)."""
    return [t.lower() for t in _CAMEL.findall(text)]


def _related(a: str, b: str) -> bool:
    """Same word, or one a prefix of the other (`replica`/`replication`, `connection`/`connections`)."""
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    return len(short) >= _MIN_STEM and long.startswith(short)


def best_mode(text: str, vocabulary: Vocabulary, *, exclude: Iterable[str] = ("unknown",)) -> tuple[str, int]:
    """The failure mode whose identifier, alias or synonym (`replica_lag`, `too_many_connections`: the words an
    engineer uses) shares the most words with the text, and how many it shares; `("unknown", 0)` when no word
    matches."""
    words = tokens(text)
    skip = set(exclude)
    best, best_score = "unknown", 0
    for name in vocabulary.names:
        if name in skip:
            continue
        score = mode_score(words, name, vocabulary)
        if score > best_score:
            best, best_score = name, score
    return best, best_score


def mode_score(words: Sequence[str], name: str, vocabulary: Vocabulary) -> int:
    """How many words of the mode's best spelling (its identifier, an alias or a synonym) are among `words`
    (`tokens` of a text); words under three letters (`db`, `az`, `of`) name no mode."""
    mode = vocabulary.modes[name]
    spellings = [name, *mode.aliases, *mode.synonyms]
    return max(
        sum(any(_related(w, t) for w in words) for t in tokens(spaced(s)) if len(t) >= _MIN_WORD) for s in spellings
    )


def vocabulary_words(vocabulary: Vocabulary) -> str:
    """Every word the vocabulary has: each mode's name, aliases, synonyms and description, each keyword and its
    variants, and the sets (what a stuffer writes in every field)."""
    parts: list[str] = []
    for name in vocabulary.names:
        mode = vocabulary.modes[name]
        spellings = (*mode.aliases, *mode.synonyms)
        parts += [name, spaced(name), *spellings, *map(spaced, spellings)]
        if mode.description:
            parts.append(mode.description)
    for keyword, variants in vocabulary.keyword_aliases.items():
        parts += [keyword, *variants]
    parts += list(vocabulary.sets)
    return "; ".join(dict.fromkeys(parts))


def task_domain(tool_names: Iterable[str]) -> str:
    """The name of the domain whose tools a task offers, or "" when it offers no domain's own tool."""
    domain = domain_of_tools(tool_names)
    return domain.name if domain is not None else ""


def packs_vocabulary(packs: Iterable[Any], domain: str) -> Vocabulary:
    """The vocabulary a task of `domain` is answered from: the first run pack of that domain's (a pack may add
    modes), else the domain's own, else every domain's together (a task that offers no domain tool)."""
    for pack in packs:
        if isinstance(pack, Pack) and pack.domain == domain:
            return pack.vocabulary
    return get_domain(domain).vocabulary() if domain else combined_vocabulary()
