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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["PhraseRemover", "WordForms"]

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


# A word boundary that understands camel case: between a letter or digit and anything else, at a lower-to-upper
# change (`pod|OOM`), before the last capital of a run that starts a word (`OOM|Killed`), and between letters and
# digits. `_START` is tested once a name's first character is read (so two characters back), `_END` after its last.
# Each looks one or two characters either side: constant time per position.
_START = r"(?:(?<![^\W_].)|(?<=[a-z][A-Z])|(?<=[A-Z][A-Z])(?=[a-z])|(?<=[0-9][A-Za-z])|(?<=[A-Za-z][0-9]))"
_END = r"(?:(?![^\W_])|(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[0-9])(?=[A-Za-z])|(?<=[A-Za-z])(?=[0-9]))"
# The endings a name's last word may take: `OOMKills` (`oom_kill`), "crash-looping" (`crash_loop`), "Failovers".
_ENDINGS = ("s", "es", "ing", "ed")
# What may join the words of a name: spaces, underscores and hyphens (`replication lag`, `image-pull`).
_JOINERS = "_-"
_JOINER = r"[\s_\-]"
_Trie = dict[str, "_Trie"]
"""A trie of names: character -> the node after it; the key "" marks the end of a name."""
# Punctuation that closes what came before it: the spaces before a removed word go when one follows it.
_CLOSING = frozenset(",;:.!?)]")
_NOT_A_LETTER = re.compile(r"[^a-z0-9]+")


def _skeleton(name: str) -> str:
    """A name's letters and digits only, lower case: what every word form of it spells (`oom_killed` -> `oomkilled`)."""
    return _NOT_A_LETTER.sub("", name.lower())


@dataclass(frozen=True, slots=True)
class WordForms:
    """Finds and removes names in every word form: snake, Title, camel or Pascal case, spaced or hyphenated.

    `oom_killed` is found as `oom_killed`, `OOM Killed`, `Oom-Killed`, `OOMKilled`, inside `KubernetesPodOOMKilled`
    (from the case change on), and a name with an ending (`OOMKills` for `oom_kill`, "crash-looping" for
    `crash_loop`); a spaced form may also split a word (`back-off` for `backoff`). A match starts and ends on a
    word boundary that understands camel case, so `Unhealthy` does not contain `healthy`. Linear in the text:
    every boundary test looks at most two characters either side, a name is read along a trie (each character
    once), and joiner runs are matched possessively (never rescanned).

    Examples:
        >>> forms = WordForms.of(["oom_killed", "replication_lag", "healthy"])
        >>> forms.find("KubernetesPodOOMKilled: Replication Lag on an Unhealthy node")
        ['oom_killed', 'replication_lag']
        >>> forms.remove("High replication-lag (healthy) on ledger-db")
        'High  () on ledger-db'
    """

    names: Mapping[str, str]
    """Skeleton (`oomkilled`) -> the name reported for it (the first given that spells it)."""
    pattern: re.Pattern[str] | None
    """Every name in every word form (None: no name)."""

    @classmethod
    def of(cls, names: Iterable[str]) -> WordForms:
        """The word forms of `names`, in the order a name that spells the same as another is reported (names
        without a letter or digit are ignored)."""
        by_skeleton: dict[str, str] = {}
        for name in names:
            by_skeleton.setdefault(_skeleton(name), name)
        by_skeleton.pop("", None)
        return cls(MappingProxyType(by_skeleton), _compile(tuple(by_skeleton)) if by_skeleton else None)

    def find(self, text: str) -> list[str]:
        """The names `text` holds in some word form, sorted and unique."""
        if self.pattern is None:
            return []
        return sorted({self._name(m.group(0)) for m in self.pattern.finditer(text)})

    def search(self, text: str) -> bool:
        """True when `text` holds a name in some word form."""
        return self.pattern is not None and self.pattern.search(text) is not None

    def remove(self, text: str) -> str:
        """`text` without any word form of a name; a joiner the removal leaves dangling goes with it.

        `ledger-healthy-db` becomes `ledger-db`, `healthy-db` becomes `db`, `ledger-healthy` becomes `ledger`,
        and `pods healthy, ok` becomes `pods, ok`. Other spaces and empty brackets are left for the caller.
        """
        if self.pattern is None:
            return text
        out: list[str] = []
        at = 0  # text[:at] is decided
        for m in self.pattern.finditer(text):
            start, end = m.span()
            if start < at:  # swallowed by the previous removal's joiners
                start = at
            before = start
            while before > at and text[before - 1] in _JOINERS:
                before -= 1
            after = end
            while after < len(text) and text[after] in _JOINERS:
                after += 1
            word_before = before > 0 and _is_word(text[before - 1])
            word_after = after < len(text) and _is_word(text[after])
            if before < start and after > end and word_before and word_after:
                start = before + 1  # `a-X-b` -> `a-b`: keep one joiner
                end = after
            elif before < start and not word_after:
                start = before  # `a-X` -> `a`
                end = after
            elif after > end and not word_before:
                end = after  # `X-b` -> `b`
            if end < len(text) and text[end] in _CLOSING:
                while start > at and text[start - 1] in " \t":
                    start -= 1  # `a X, b` -> `a, b`
            out.append(text[at:start])
            at = end
        out.append(text[at:])
        return "".join(out)

    def _name(self, match: str) -> str:
        skeleton = _skeleton(match)
        for cut in (0, *sorted({len(e) for e in _ENDINGS})):  # the name as matched, else without its ending
            name = self.names.get(skeleton[: len(skeleton) - cut])
            if name is not None:
                return name
        raise AssertionError(f"{match!r} matched no name")  # unreachable: every match spells a name


def _is_word(char: str) -> bool:
    return char.isalnum()


def _compile(skeletons: tuple[str, ...]) -> re.Pattern[str]:
    """The names as one trie of alternatives (longest first, so the longest name wins at a position), their letters
    joined by optional joiner runs, from a word start to a word end.

    The pattern opens with the class of every name's first character, so the regular-expression engine skips in C
    to where a name can start; the trie then reads each character once (an alternation of whole names tried each
    one at every word start: several times slower on long texts).
    """
    trie: _Trie = {}
    for skeleton in skeletons:
        node = trie
        for char in skeleton:
            node = node.setdefault(char, {})
        node[""] = {}  # the end of a name
    firsts = "".join(sorted({c for c in trie} | {c.upper() for c in trie}))
    branches = "|".join(f"(?<={re.escape(c)}){_after(child)}" for c, child in sorted(trie.items()))
    return re.compile(f"[{re.escape(firsts)}]{_START}(?i:{branches})")


def _after(node: _Trie) -> str:
    """What may follow a trie node: joiners and a next character, or (at a name's end) an ending and a word end."""
    alternatives = []
    children = sorted((c, child) for c, child in node.items() if c)
    if children:
        nexts = "|".join(re.escape(c) + _after(child) for c, child in children)
        alternatives.append(f"{_JOINER}*+(?:{nexts})")
    if "" in node:
        alternatives.append(f"(?:{'|'.join(_ENDINGS)})?(?-i:{_END})")
    return f"(?:{'|'.join(alternatives)})"
