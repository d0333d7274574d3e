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
    quick: re.Pattern[str] | None
    """Any phrase, as one regular expression: text it does not find is returned unchanged, at C speed."""
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
            return cls(tuple(goto), tuple(fail), tuple(ends), None, None)
        # Longest first, so the quick test's alternation prefers the longest phrase at a position.
        quick = re.compile("|".join(re.escape(p).replace(r"\ ", r"\s+") for p in normalized), re.IGNORECASE)
        alphabet = {s for p in normalized for s in p if s != " "}
        outside = re.compile("[^" + "".join(re.escape(s) for s in sorted(alphabet)) + r"\s]+", re.IGNORECASE)
        return cls(tuple(goto), tuple(fail), tuple(ends), quick, outside)

    def remove(self, text: str) -> str:
        """`text` without any occurrence of a phrase, also those that removing another one creates."""
        if self.quick is None or self.outside is None or self.quick.search(text) is None:
            return text
        out: list[str] = []
        start = 0
        for gap in self.outside.finditer(text):
            out.append(self._remove_run(text[start : gap.start()]))
            out.append(gap.group(0))
            start = gap.end()
        out.append(self._remove_run(text[start:]))
        return "".join(out)

    def _remove_run(self, text: str) -> str:
        """The stack machine over a run of characters that phrases use (matching starts at the root)."""
        if not text:
            return text
        chars: list[str] = []
        states: list[int] = []
        counts: list[int] = []  # symbols up to and including each character: a whitespace run counts once
        state = count = 0
        ends = self.ends
        for char in text:
            if char.isspace() and chars and chars[-1].isspace():
                chars.append(char)
                states.append(state)
                counts.append(count)
                continue
            state = self._next(state, _symbol(char))
            count += 1
            chars.append(char)
            states.append(state)
            counts.append(count)
            length = ends[state]
            if length:
                count -= length
                while counts and counts[-1] > count:
                    chars.pop()
                    states.pop()
                    counts.pop()
                state = states[-1] if states else 0
        return "".join(chars)

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
