"""Quotes: the records a conclusion quotes, so that the claims backing it cite what it rests on.

A cause's summary and causal chain quote the records that show it (the panic line, the registry's answer, the
resolver's error, the probe change): `“…”`, clipped at the end or in the middle. Those records are the cause's
own evidence, so they lead its claims: `lead_facts` puts first the facts that cite them, and writes a fact for
a quoted record no fact cites yet; after them come the log records and lines, then the events, its facts
quote. A quote names a record when every piece of it (the parts between the ellipses) appears in the record's
text in order; a quote with no piece of `_MIN_PIECE` characters names none. A record of another component that
repeats `_ECHO` characters of a quote (an autoscaler that cannot place the pods either) echoes it, and leads too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from sredrill.agents.k8s_reference.casefile import CaseFile
from sredrill.agents.k8s_reference.citing import View
from sredrill.agents.k8s_reference.facts import deployment_fact, event_fact, line_fact, log_fact, pod_fact
from sredrill.agents.k8s_reference.findings import Fact, Finding
from sredrill.agents.k8s_reference.observations import DeploymentView, EventView, LogRecord, PodView
from sredrill.diagnosis import MAX_CITATIONS_PER_CLAIM, MAX_CITED_ITEMS, Citation

__all__ = ["MOST_LEADS", "Lead", "is_quoted_in", "lead_facts", "quotes_of"]

MOST_LEADS = MAX_CITED_ITEMS - 3
"""The most items the records a diagnosis quotes take (the rest of the budget keeps one item of every source)."""
_QUOTE = re.compile(r"“([^”]+)”")
_MIN_PIECE = 12


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def quotes_of(text: str) -> list[list[str]]:
    """The quotes of a text, each as its pieces between ellipses (quotes too short to name a record left out)."""
    out = []
    for quote in _QUOTE.findall(text):
        pieces = [p for p in (_squeeze(p) for p in quote.split("…")) if p]
        if pieces and max(map(len, pieces)) >= _MIN_PIECE:
            out.append(pieces)
    return out


def is_quoted_in(pieces: Sequence[str], text: str) -> bool:
    """Whether a quote (its pieces) is taken from a text: every piece appears in it, in order."""
    text = _squeeze(text)
    at = 0
    for piece in pieces:
        found = text.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


@dataclass(frozen=True, slots=True)
class _Record:
    view: View
    texts: tuple[str, ...]
    pod: str = ""
    """For a line of a pod log: the pod."""
    line: bool = False


def _records(case: CaseFile) -> Iterator[_Record]:
    """Every record of the case that names an item, with the texts a quote may be taken from."""
    for e in case.events:
        yield _Record(e, (e.message,))
    for r in case.logs:
        yield _Record(r, (r.message,))
    for log in case.pod_logs:
        for r in log.lines:
            yield _Record(r, (r.message,), log.pod, line=True)
    for p in case.pods:
        yield _Record(p, p.texts)
    for d in case.deployments:
        yield _Record(d, tuple(m for *_, m in d.conditions if m))


def _moment(view: View) -> float:
    when = view.last if isinstance(view, EventView) else view.time if isinstance(view, LogRecord) else None
    return when.timestamp() if when is not None else 0.0


def _fact(case: CaseFile, record: _Record) -> Fact | None:
    """A fact about one quoted record, in the words its kind is told in."""
    v = record.view
    if isinstance(v, EventView):
        return event_fact(case, v)
    if isinstance(v, LogRecord):
        return line_fact(record.pod, [v]) if record.line else log_fact(case, [v])
    if isinstance(v, PodView):
        return pod_fact(case, v)
    if isinstance(v, DeploymentView):
        return deployment_fact(v)
    return None


@dataclass(frozen=True, slots=True)
class Lead:
    """A cause's facts with those citing the records it quotes first, and those records' items."""

    facts: tuple[Fact, ...]
    items: tuple[str, ...]
    """The quoted records' items, in the order the summary and chain quote them."""

    @property
    def cites(self) -> tuple[Citation, ...]:
        """The leading items' citations, in that order."""
        by_item = {c.item: c for f in self.facts for c in f.cites}
        return tuple(by_item[i] for i in self.items if i in by_item)


def lead_facts(case: CaseFile, f: Finding, facts: Sequence[Fact]) -> Lead:
    """The facts of a cause, led by the ones that cite the records its summary and chain quote (a fact written
    for a quoted record none of them cites); at most `MOST_LEADS` quoted records lead, then (up to
    `MAX_CITATIONS_PER_CLAIM` in all) the log records and events its facts cite."""
    cited = {c.item for fact in facts for c in fact.cites}
    records = [r for r in _records(case) if r.view.ref is not None]
    chosen: dict[str, _Record] = {}
    for pieces in quotes_of(" ".join((f.summary, *f.chain))):
        # One record per quote: one the facts already read, else the latest.
        matches = [r for r in records if any(is_quoted_in(pieces, t) for t in r.texts)]
        if matches:
            best = max(matches, key=lambda r: (_is_record(r.view), r.view.ref in cited, _moment(r.view)))
            chosen.setdefault(str(best.view.ref), best)
        # Another component repeating the same reason (an autoscaler that cannot place the pods either).
        writers = {_writer(r) for r in matches}
        echoes = [r for r in records if _is_record(r.view) and _writer(r) not in writers and _echoes(pieces, r.texts)]
        if echoes:
            echo = max(echoes, key=lambda r: _moment(r.view))
            chosen.setdefault(str(echo.view.ref), echo)
        if len(chosen) >= MOST_LEADS:
            break
    leading: list[Fact] = []
    for ref, record in chosen.items():
        fact = next((x for x in facts if any(c.item == ref for c in x.cites)), None) or _fact(case, record)
        if fact is not None and fact not in leading:
            leading.append(fact)
    quoted = [ref for ref in chosen if any(c.item == ref for x in leading for c in x.cites)]
    rest = [x for x in facts if x not in leading]
    # Then the log records and lines its facts quote (what the containers said), then its events.
    said = [c.item for x in (*leading, *rest) for c in x.cites]
    said = [i for kind in _SAYS for i in said if i.split("-", 1)[0] == kind]
    items = list(dict.fromkeys([*quoted, *said]))[: max(len(quoted), MAX_CITATIONS_PER_CLAIM)]
    return Lead((*leading, *rest), tuple(items))


_SAYS = ("log", "event")  # the item kinds whose point is a text, as `evidence.items` names them


_ECHO = 40  # the fewest characters a record shares with a quote to repeat it


def _echoes(pieces: Sequence[str], texts: Sequence[str]) -> bool:
    for piece in pieces:
        for text in texts:
            a, b = piece.casefold(), _squeeze(text).casefold()
            if len(a) >= _ECHO and len(b) >= _ECHO:
                m = SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b))
                if m.size >= _ECHO:
                    return True
    return False


def _writer(record: _Record) -> str:
    """Who wrote a record: a log's service (a line's pod), an event's reason, else the kind of item."""
    v = record.view
    if isinstance(v, LogRecord):
        return record.pod or v.service or v.host
    return f"event {v.reason}" if isinstance(v, EventView) else type(v).__name__


def _is_record(view: View) -> bool:
    return isinstance(view, EventView | LogRecord)
