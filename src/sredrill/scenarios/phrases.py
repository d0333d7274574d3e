"""Removing phrases from text in linear time: every occurrence, including those a removal itself creates.

Blind mode removes the scenario's id, folder, slug and reference sentences from the alert's text. Removing one
occurrence can join the halves of another (`001-repli` + `001-replication-lag` + `cation-lag`), so one
`re.sub` is not enough, and repeating it until the text is stable costs a pass per level of nesting:
quadratic on hostile input (a 100 KB alert took minutes to lint). `PhraseRemover` reads the text once. Its
output is a stack holding, for each character, the Aho–Corasick state after it; when a phrase ends on top of
the stack the phrase is popped and matching resumes from the state below it, so a phrase that a removal
joins is found too, and no phrase is left in the result.

Case is ignored, and a space in a phrase matches any run of whitespace (as `\\s+` did).

Examples:
    >>> PhraseRemover.of(["001-replication-lag"]).remove("a 001-repli001-replication-lagcation-lag b")
    'a  b'
    >>> PhraseRemover.of(["the disk is full"]).remove("The disk\\n  is FULL now")
    ' now'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["PhraseRemover"]

_WHITESPACE = re.compile(r"\s")
_WHITESPACE_RUN = re.compile(r"\s+")


def _symbol(char: str) -> str:
    """What a character is matched as: whitespace as one space, letters in lower case."""
    if char.isspace():
        return " "
    lower = char.lower()
    return lower if len(lower) == 1 else char


def _symbols(text: str) -> str:
    """`text` as matched, one symbol per character (see `_symbol`); in C unless lowering changes a length."""
    lowered = text.lower()
    return _WHITESPACE.sub(" ", lowered) if len(lowered) == len(text) else "".join(map(_symbol, text))


@dataclass(frozen=True, slots=True)
class PhraseRemover:
    """Removes every occurrence of a set of phrases from texts: `remove(text)`.

    Build it once per set of phrases (`PhraseRemover.of`) and reuse it for every text. Building is cheap: the
    Aho–Corasick automaton is built on the first text that holds a phrase (most texts hold none, and blind
    mode builds a remover per scenario it blinds).
    """

    phrases: tuple[str, ...]
    """The phrases as matched (lower case, single spaces), longest first: text that holds none is returned
    unchanged."""
    _built: list[_Automaton] = field(default_factory=list, compare=False, repr=False)
    """The automaton once built (a one-item list: the remover itself stays frozen)."""

    @classmethod
    def of(cls, phrases: Iterable[str]) -> PhraseRemover:
        """The remover of `phrases` (empty ones are ignored)."""
        normalized = {_symbols(_WHITESPACE_RUN.sub(" ", text.strip())) for text in phrases}
        return cls(tuple(sorted(filter(None, normalized), key=len, reverse=True)))

    @property
    def automaton(self) -> _Automaton:
        """The automaton over `phrases`, built on first use."""
        if not self._built:
            self._built.append(_Automaton.build(self.phrases))
        return self._built[0]

    def remove(self, text: str) -> str:
        """`text` without any occurrence of a phrase, also those that removing another one creates."""
        if not self.phrases:
            return text
        lowered = text.lower()
        # The test for "no phrase at all", by substring search in C (a regular expression alternating the
        # phrases was several times slower): text without one is the common case, and stays as it is.
        collapsed = _WHITESPACE_RUN.sub(" ", lowered)
        if not any(phrase in collapsed for phrase in self.phrases):
            return text
        automaton = self.automaton
        # One symbol per character (whitespace as a space, letters lowered), aligned with `text`.
        symbols = _WHITESPACE.sub(" ", lowered) if len(lowered) == len(text) else "".join(map(_symbol, text))
        kept: list[str] = []
        start = 0
        for gap in automaton.outside.finditer(text):
            kept.append(automaton.remove_run(text, symbols, start, gap.start()))
            kept.append(gap.group(0))
            start = gap.end()
        kept.append(automaton.remove_run(text, symbols, start, len(text)))
        return "".join(kept)


@dataclass(frozen=True, slots=True)
class _Automaton:
    """An Aho–Corasick automaton over a non-empty set of phrases, and the stack machine that removes them."""

    goto: tuple[dict[str, int], ...]
    """The trie: state -> symbol -> next state (state 0 is the root)."""
    fail: tuple[int, ...]
    """State -> the longest proper suffix of its path that is also a trie path."""
    ends: tuple[int, ...]
    """State -> the length (in symbols) of the longest phrase ending there; 0 when none does."""
    outside: re.Pattern[str]
    """A run of characters no phrase contains: no match can span one, so the text is cut there."""
    memo: dict[tuple[int, str], int] = field(default_factory=dict, compare=False, repr=False)
    """Transitions already computed through `fail` (filled as texts are read; never changes an answer)."""

    @classmethod
    def build(cls, normalized: tuple[str, ...]) -> _Automaton:
        goto: list[dict[str, int]] = [{}]
        ends = [0]
        for phrase in normalized:
            state = 0
            for symbol in phrase:
                nxt = goto[state].get(symbol)
                if nxt is None:
                    nxt = goto[state][symbol] = len(goto)
                    goto.append({})
                    ends.append(0)
                state = nxt
            ends[state] = max(ends[state], len(phrase))
        fail = [0] * len(goto)
        queue = list(goto[0].values())
        for state in queue:  # breadth first: a state's failure link is computed before its children's
            for symbol, child in goto[state].items():
                if state:
                    f = fail[state]
                    while f and symbol not in goto[f]:
                        f = fail[f]
                    fail[child] = goto[f].get(symbol, 0)
                ends[child] = max(ends[child], ends[fail[child]])
                queue.append(child)
        alphabet = {s for p in normalized for s in p if s != " "}
        outside = re.compile("[^" + "".join(re.escape(s) for s in sorted(alphabet)) + r"\s]+", re.IGNORECASE)
        return cls(tuple(goto), tuple(fail), tuple(ends), outside)

    def remove_run(self, text: str, symbols: str, start: int, stop: int) -> str:
        """The stack machine over `text[start:stop]`, a run of characters that phrases use (from the root)."""
        if start == stop:
            return ""
        kept: list[int] = []  # indices into text of the characters kept so far
        states: list[int] = []
        counts: list[int] = []  # symbols up to and including each kept character: a whitespace run counts once
        state = count = 0
        space_on_top = False
        goto, ends, step = self.goto, self.ends, self._next
        for i in range(start, stop):
            symbol = symbols[i]
            if symbol == " ":
                if space_on_top:
                    kept.append(i)
                    states.append(state)
                    counts.append(count)
                    continue
                space_on_top = True
            else:
                space_on_top = False
            nxt = goto[state].get(symbol)
            state = nxt if nxt is not None else step(state, symbol)
            count += 1
            kept.append(i)
            states.append(state)
            counts.append(count)
            length = ends[state]
            if length:
                count -= length
                while counts and counts[-1] > count:
                    kept.pop()
                    states.pop()
                    counts.pop()
                state = states[-1] if states else 0
                space_on_top = bool(kept) and symbols[kept[-1]] == " "
        return "".join(map(text.__getitem__, kept))

    def _next(self, state: int, symbol: str) -> int:
        nxt = self.goto[state].get(symbol)
        if nxt is not None:
            return nxt
        if state == 0:
            return 0
        key = (state, symbol)
        cached = self.memo.get(key)
        if cached is None:
            s = self.fail[state]
            while s and symbol not in self.goto[s]:
                s = self.fail[s]
            cached = self.memo[key] = self.goto[s].get(symbol, 0)
        return cached
