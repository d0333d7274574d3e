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


@dataclass(frozen=True, slots=True)
class PhraseRemover:
    """An Aho–Corasick automaton over a set of phrases; `remove(text)` deletes every occurrence.

    Build it once per set of phrases (`PhraseRemover.of`) and reuse it for every text.
    """

    goto: tuple[dict[str, int], ...]
    """The trie: state -> symbol -> next state (state 0 is the root)."""
    fail: tuple[int, ...]
    """State -> the longest proper suffix of its path that is also a trie path."""
    ends: tuple[int, ...]
    """State -> the length (in symbols) of the longest phrase ending there; 0 when none does."""
    phrases: tuple[str, ...]
    """The phrases as matched (lower case, single spaces): text that holds none is returned unchanged."""
    outside: re.Pattern[str] | None
    """A run of characters no phrase contains: no match can span one, so the text is cut there."""
    memo: dict[tuple[int, str], int] = field(default_factory=dict, compare=False, repr=False)
    """Transitions already computed through `fail` (filled as texts are read; never changes an answer)."""

    @classmethod
    def of(cls, phrases: Iterable[str]) -> PhraseRemover:
        """The remover of `phrases` (empty ones are ignored)."""
        normalized = sorted(
            {p for p in ("".join(_symbol(c) for c in re.sub(r"\s+", " ", text.strip())) for text in phrases) if p},
            key=len,
            reverse=True,
        )
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
        if not normalized:
            return cls(tuple(goto), tuple(fail), tuple(ends), (), None)
        alphabet = {s for p in normalized for s in p if s != " "}
        outside = re.compile("[^" + "".join(re.escape(s) for s in sorted(alphabet)) + r"\s]+", re.IGNORECASE)
        return cls(tuple(goto), tuple(fail), tuple(ends), tuple(normalized), outside)

    def remove(self, text: str) -> str:
        """`text` without any occurrence of a phrase, also those that removing another one creates."""
        if self.outside is None:
            return text
        lowered = text.lower()
        # The test for "no phrase at all", by substring search in C (a regular expression alternating the
        # phrases was several times slower): text without one is the common case, and stays as it is.
        collapsed = _WHITESPACE_RUN.sub(" ", lowered)
        if not any(phrase in collapsed for phrase in self.phrases):
            return text
        # One symbol per character (whitespace as a space, letters lowered), aligned with `text`.
        symbols = _WHITESPACE.sub(" ", lowered) if len(lowered) == len(text) else "".join(map(_symbol, text))
        kept: list[str] = []
        start = 0
        for gap in self.outside.finditer(text):
            kept.append(self._remove_run(text, symbols, start, gap.start()))
            kept.append(gap.group(0))
            start = gap.end()
        kept.append(self._remove_run(text, symbols, start, len(text)))
        return "".join(kept)

    def _remove_run(self, text: str, symbols: str, start: int, stop: int) -> str:
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
