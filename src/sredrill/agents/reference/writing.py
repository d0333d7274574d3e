"""Writing the diagnosis: root cause, category, failure modes, causal chain, cited claims, ruled out, report.

Prose uses the words an SRE would use ("replication lag", "connection exhaustion", "CPU saturation"); the
vocabulary's identifiers appear only in `failure_modes`. Claims carry the facts that support the
conclusion, each citing the evidence items it rests on with a fact checked on the served points, and naming
the failure mode it supports; dismissed alternatives go to `ruled_out` (and the report), never to the
claims, so a claim never asserts what the agent rejected, and each cites the items that speak against it.
The citations stay within the grader's limits: at most three per claim and eight distinct items across the
claims, the causes' own evidence first; a fact left with nothing to cite goes to the report, not the claims.
`location` names where each fault is.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from itertools import zip_longest

from sredrill.agents.reference.catalog import info_of
from sredrill.agents.reference.citing import level as cite_level
from sredrill.agents.reference.citing import present as cite_present
from sredrill.agents.reference.findings import HYPOTHESES, Case, Cites, Fact, Finding, Verdict, value
from sredrill.agents.reference.fleet import backup_spans, elsewhere
from sredrill.agents.reference.observations import Event
from sredrill.agents.reference.reasoning import Conclusion, Outcome
from sredrill.agents.reference.timeline import EventKind, TimedEvent, describe_delta
from sredrill.agents.reference.workload import WaitGroup
from sredrill.diagnosis import (
    MAX_CITATIONS_PER_CLAIM,
    MAX_CITED_ITEMS,
    Category,
    Citation,
    Claim,
    Diagnosis,
    FactKind,
    RuledOut,
)
from sredrill.domains.rds import DOMAIN
from sredrill.evidence.items import ServedItem

__all__ = ["write_diagnosis"]

_ORDINALS = ("First", "Second", "Third", "Fourth")
_VOCABULARY = DOMAIN.vocabulary()  # the reference agent knows RDS


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _category(conclusion: Conclusion) -> Category:
    if conclusion.outcome == Outcome.HEALTHY:
        return Category.HEALTHY
    if conclusion.outcome == Outcome.UNKNOWN:
        return Category.UNKNOWN
    categories = [_VOCABULARY.category_of(f.mode) for f in conclusion.causes]
    # Compositional faults of one kind share it; otherwise the alert's own fault (listed first) decides.
    return categories[0]


def _symptoms(conclusion: Conclusion) -> list[Finding]:
    return [f for f in conclusion.others if f.verdict == Verdict.SYMPTOM]


def _root_cause(conclusion: Conclusion) -> str:
    case = conclusion.case
    if conclusion.outcome == Outcome.UNKNOWN:
        return _sentence(f"The evidence on {case.instance} does not fit a known failure mode: {conclusion.anomaly}")
    if conclusion.outcome == Outcome.HEALTHY:
        return _healthy_root_cause(conclusion)
    causes = conclusion.causes
    if len(causes) == 1:
        text = _sentence(causes[0].summary)
    else:
        count = ("Two", "Three", "Four")[min(len(causes), 4) - 2]
        modes = {f.mode for f in causes}
        linked = any(f.follows in modes for f in causes)
        parts = [f"{count} {'linked' if linked else 'independent'} faults on {case.instance}."]
        for i, f in enumerate(causes[:4]):
            tail = f", a consequence of the {HYPOTHESES[f.follows]}" if f.follows in modes and f.follows else ""
            parts.append(_sentence(f"{_ORDINALS[i]}, {f.summary}{tail}"))
        text = " ".join(parts)
    for s in _symptoms(conclusion):
        text += " " + _sentence(s.summary.split(":")[0])
    if conclusion.anomaly:
        text += " " + _sentence(f"Beyond that, the cause of the alert itself stays unknown: {conclusion.anomaly}")
    return text


def _healthy_root_cause(conclusion: Conclusion) -> str:
    case = conclusion.case
    alert = case.file.alert
    recovered = [f for f in conclusion.others if f.verdict == Verdict.RECOVERED]
    if recovered:
        return _sentence(
            f"No active incident on {case.instance}: {recovered[0].summary}; the alert that fired during it is "
            "stale, and every other metric stays within its normal range"
        )
    if not alert.is_firing:
        return _sentence(
            f"No incident on {case.instance}: the alert is a routine notification in the {alert.state or 'OK'} "
            "state, and every metric stays within its normal range"
        )
    metric = alert.metric
    p = case.file.profile(metric) if metric else None
    if p is not None and metric is not None:
        shape = "swings with the workload's cycle" if p.swings else "moves"
        name = "the session count" if metric == "DatabaseConnections" else info_of(metric).words
        span = (
            f"holds at {value(metric, p.low)}"
            if value(metric, p.low) == value(metric, p.high)
            else f"{shape} between {value(metric, p.low)} and {value(metric, p.high)} without a trend"
        )
        return _sentence(
            f"No incident on {case.instance}: {name} {span} and stays within its normal range, so the alert "
            "threshold sits too close to normal load"
        )
    return _sentence(f"No incident on {case.instance}: every metric stays within its normal range")


# Metrics a backup moves (a snapshot reads the volume).
_READ_METRICS = frozenset({"ReadIOPS", "ReadThroughput"})
_HEALTH_METRICS = ("CPUUtilization", "DatabaseConnections", "ReadLatency", "WriteLatency", "ReplicaLag")


def _steady(case: Case, metric: str) -> Cites:
    """What shows a metric staying in its range: flat when it is, else a bound on the side that would be bad."""
    side = FactKind.ABOVE if info_of(metric).worse < 0 else FactKind.BELOW
    return case.trend(metric, FactKind.FLAT) or case.level(metric, side)


def _watched_fact(case: Case) -> Fact | None:
    """What the alarm's own metric did where the alarm watches it: its peak, and the safe side it stayed on."""
    f = case.file
    metric, where = f.alert.metric, f.alert.watched or f.primary
    s = f.series_on(metric, where) if metric else None
    if metric is None or s is None or s.id is None:
        return None
    safe = FactKind.ABOVE if info_of(metric).worse < 0 else FactKind.BELOW
    cite = cite_level(f.items, s.id, safe)
    if cite is None or cite.value is None:
        return None
    extreme = min(s.values) if safe == FactKind.ABOVE else max(s.values)
    side = "above" if safe == FactKind.ABOVE else "below"
    text = (
        f"{info_of(metric).words.capitalize()} on {where}, which the alarm watches, reaches "
        f"{value(metric, extreme)} at most and stays {side} {value(metric, cite.value)}: it moved, but never to a "
        "level that harms the database"
    )
    cites: tuple[Citation, ...] = (cite,)
    # Reads that peak while the instance's backup runs are the snapshot reading the volume: say so, and cite it.
    backup = _backup_at(case, where, s.times[s.values.index(extreme)]) if metric in _READ_METRICS else None
    if backup is not None:
        event, cited = backup
        text += f"; the peak comes while its backup runs (“{event.message.rstrip('.')}”), a snapshot reading the volume"
        cites = (cited, cite)
    return Fact(_sentence(text), (case.src.metrics,), cites)


def _backup_at(case: Case, instance: str | None, moment: datetime) -> tuple[Event, Citation] | None:
    """The backup of `instance` running at `moment` (its start event, cited), when one is."""
    for event, start, end in backup_spans(list(case.file.events)):
        if event.source == instance and start <= moment <= end:
            cited = cite_present(case.file.items, event.id)
            if cited is not None:
                return event, cited
    return None


def _healthy_facts(case: Case, *, recovered: bool) -> list[Fact]:
    f = case.file
    src = case.src.metrics
    # After a recovered incident the alarm's metric did reach a harmful level: the recovery says it all.
    watched = None if recovered else _watched_fact(case)
    facts = [watched] if watched is not None else []
    ranges = []
    # The alert's own metric first: it is what the verdict "no incident" has to answer for.
    alert_metric = f.alert.metric
    order = sorted(_HEALTH_METRICS, key=lambda m: m != alert_metric)
    steady: list[Citation] = []
    for metric in order:
        p = f.profile(metric)
        if p is None or (p.moved and not p.recovered):
            continue
        shape = "swings between" if p.swings and p.high - p.low >= 0.3 * p.median else "stays between"
        name = "the session count" if metric == "DatabaseConnections" else info_of(metric).words
        ranges.append(f"{name} {shape} {value(metric, p.low)} and {value(metric, p.high)}")
        steady += _steady(case, metric)
    if ranges:
        facts.append(
            Fact(
                _sentence("; ".join(ranges) + ", with no sustained trend: all within the normal range"),
                (src,),
                tuple(steady[:MAX_CITATIONS_PER_CLAIM]),
            )
        )
    p = f.profile("FreeStorageSpace")
    if p is not None and not p.moved:
        facts.append(
            Fact(
                f"Free storage stays flat at about {value('FreeStorageSpace', p.end)}.",
                (src,),
                case.trend("FreeStorageSpace", FactKind.FLAT),
            )
        )
    return facts


def _evidence_facts(conclusion: Conclusion, cited: set[str]) -> list[Fact]:
    """Claims for the sources no finding cited yet: the event timeline and the workload."""
    case = conclusion.case
    facts = []
    src = case.src
    if src.events in case.file.read and src.events not in cited:
        tl = case.timeline
        old = tl.historical()
        recent = [e for e in tl.recent() if e.kind not in (EventKind.OTHER,)]
        if not tl.events:
            facts.append(Fact(f"RDS reports no event for {case.instance} in the incident window.", (src.events,)))
        if recent:
            parts = [
                f"“{e.event.message.rstrip('.')}”"
                + (f" ({describe_delta(e.offset_s)})" if e.offset_s is not None else "")
                for e in recent[:4]
            ]
            facts.append(
                Fact(
                    "RDS events around the incident: " + "; ".join(parts) + ".",
                    (src.events,),
                    case.present(*(e.event for e in recent[:MAX_CITATIONS_PER_CLAIM])),
                )
            )
        if old:
            first, last = old[0].offset_s, old[-1].offset_s
            span = (
                f" between {describe_delta(first).split(' before')[0]} and {describe_delta(last)}"
                if first is not None and last is not None
                else " well before the alert"
            )
            facts.append(
                Fact(
                    f"The {len(old)} earlier RDS events all completed{span}; the metrics stay at their baseline "
                    "until the incident begins, so they are context, not cause.",
                    (src.events,),
                    case.present(*_telling_history(old)),
                )
            )
    w = case.workload
    if src.insights in case.file.read and src.insights not in cited:
        if w is None:
            facts.append(Fact("Performance Insights returns no data for this instance.", (src.insights,)))
        else:
            load = w.insights.load_values
            span = f" (from {min(load):.1f} to {max(load):.1f})" if load else ""
            top = w.statements[0].label if w.statements else "no statement"
            facts.append(
                Fact(
                    f"Database load averages {w.total:.1f} active sessions{span}; top waits: {w.describe_waits()}; "
                    f"the top statement is {top}.",
                    (src.insights,),
                    case.present(w.insights.waits[0] if w.insights.waits else None, w.statements[0].statement)
                    if w.statements
                    else case.present(w.insights.waits[0] if w.insights.waits else None),
                )
            )
    return facts


def _telling_history(old: tuple[TimedEvent, ...]) -> list[object]:
    """Up to three earlier events to cite, one of each kind first (a failover, a patch, a reboot, ...)."""
    firsts = list({e.kind: e for e in reversed(old)}.values())
    rest = [e for e in old if e not in firsts]
    return [e.event for e in (*firsts, *rest)[:MAX_CITATIONS_PER_CLAIM]]


def _ruled_out(conclusion: Conclusion) -> list[RuledOut]:
    out = []
    case = conclusion.case
    # What the rest of the fleet shows of each hypothesis: its citation goes first (an entry cites at most three).
    fleet = elsewhere(case.file, case.timeline)
    for f in conclusion.others:
        reason = f.summary
        if f.verdict == Verdict.UNASSESSED:
            reason = f"not confirmed, and not excluded either: {reason}"
        if f.mode == "failover" and "infrastructure" not in reason:
            reason += "; no infrastructure fault is visible"
        note = fleet.get(f.mode)
        if note is not None:
            reason += f"; {note.reason}"
        evidence: list[Citation | str] = []
        evidence.extend(list(dict.fromkeys((*(note.cites if note else ()), *f.against)))[:MAX_CITATIONS_PER_CLAIM])
        out.append(RuledOut(hypothesis=f.hypothesis, reason=_sentence(reason), evidence=evidence))
    old = conclusion.case.timeline.historical()
    if old:
        kinds = sorted({e.kind.value for e in old})
        first = old[0].offset_s
        ago = describe_delta(first) if first is not None else "long before the alert"
        out.append(
            RuledOut(
                hypothesis=f"the earlier {', '.join(kinds)} events",
                reason=_sentence(
                    f"they began {ago} and completed hours before the incident; the metrics stayed at their "
                    "baseline afterwards, so they are context, not the trigger"
                ),
                evidence=list(case.present(*_telling_history(old))),
            )
        )
    backups = conclusion.case.timeline.recent(EventKind.BACKUP)
    if backups and conclusion.outcome == Outcome.FAULTS:
        out.append(
            RuledOut(
                hypothesis="the automated backup in the window",
                reason=(
                    "A snapshot reads the volume; it neither generates WAL nor holds connections, storage or "
                    "checkpoints, so it does not explain what the metrics show."
                ),
                evidence=list(case.present(*(e.event for e in backups[:MAX_CITATIONS_PER_CLAIM]))),
            )
        )
    if conclusion.outcome == Outcome.HEALTHY:
        out.append(
            RuledOut(
                hypothesis="resource exhaustion",
                reason="Nothing is running out: no metric is pinned at a limit or trending toward one.",
                evidence=list(
                    (
                        *_steady(case, "CPUUtilization"),
                        *_steady(case, "FreeStorageSpace"),
                        *_steady(case, "DatabaseConnections"),
                    )[:MAX_CITATIONS_PER_CLAIM]
                ),
            )
        )
    return out


def _quoted(evidence: list[Citation | str]) -> str:
    """Citations as the text format writes them (`metric-3f9a1c2e4b rising from …; event-… present`)."""
    return "; ".join(e if isinstance(e, str) else e.describe() for e in evidence)


def _report(
    conclusion: Conclusion,
    root: str,
    chain: list[str],
    claims: list[Claim],
    ruled: list[RuledOut],
    unbacked: list[str],
) -> str:
    case = conclusion.case
    alert = case.file.alert
    lines = [f"Summary: {root}"]
    fired = f", fired at {case.file.alert_at.strftime('%H:%M UTC')}" if case.file.alert_at else ""
    lines.append(f"Alert: {alert.title or '(no title)'} (state {alert.state or 'unknown'}{fired}).")
    if chain:
        lines.append("Causal chain: " + " | ".join(chain))
    if claims:
        lines.append("Evidence:")
        lines += [f"- {c.text} [evidence: {_quoted(c.evidence) or 'none'}]" for c in claims]
    if ruled:
        lines.append("Ruled out:")
        lines += [
            f"- {r.hypothesis}: {r.reason}" + (f" [evidence: {_quoted(r.evidence)}]" if r.evidence else "")
            for r in ruled
        ]
    notes = [n for f in (*conclusion.causes, *conclusion.others) for n in f.notes]
    if unbacked:
        notes.append("Also seen, with no evidence item left to cite: " + " ".join(unbacked))
    missing = case.file.missing()
    if missing:
        notes.append(
            "Missing from the evidence: " + ", ".join(missing) + "; conclusions that would rest on them come from "
            "other evidence, and nothing is claimed about their values."
        )
    if notes:
        lines.append("Limits: " + " ".join(notes))
    return "\n".join(lines)


def _supported(conclusion: Conclusion) -> list[tuple[Fact, list[str]]]:
    """Every fact worth claiming, each with the failure modes it supports, the most decisive first: the causes'
    facts taken in turn (each cause's first fact before any second one), then symptoms, then context."""
    case = conclusion.case
    modes = conclusion.modes
    causes = [f.mode for f in conclusion.causes]
    out: list[tuple[Fact, list[str]]] = []
    facts = [f.facts for f in conclusion.causes]
    if len(facts) > 1:
        # Two faults share the citation limit: each one's records (who did it, what the host said) go first, as
        # the series they move may be the other's too.
        items = case.file.items
        facts = [tuple(sorted(fs, key=lambda fact: not _cites_records(fact, items))) for fs in facts]
    for row in zip_longest(*facts):
        out += [(fact, [f.mode]) for fact, f in zip(row, conclusion.causes, strict=True) if fact is not None]
    for s in _symptoms(conclusion):
        backs = [s.follows] if s.follows in causes else causes
        out += [(fact, list(backs)) for fact in s.facts]
    if conclusion.outcome == Outcome.HEALTHY:
        recovered = [f for f in conclusion.others if f.verdict == Verdict.RECOVERED]
        out += [(fact, modes) for f in recovered for fact in f.facts]
        # A recovery told only by what speaks against the fault now: its summary, cited with that.
        out += [(Fact(_sentence(f.summary), (case.src.metrics,), f.against), modes) for f in recovered if not f.facts]
        out += [(fact, modes) for fact in _healthy_facts(case, recovered=bool(recovered))]
    if conclusion.outcome == Outcome.UNKNOWN:
        metric = conclusion.anomaly_metric
        cites = (
            (*case.trend(metric), *case.level(metric, _bad_side(metric), since=case.held_since(metric)))
            if metric
            else ()
        )
        out.append((Fact(_sentence(conclusion.anomaly or "an unexplained change"), (case.src.metrics,), cites), modes))
    cited = {s for fact, _ in out for s in fact.sources}
    out += [(fact, modes) for fact in _evidence_facts(conclusion, cited)]
    return list({fact: backs for fact, backs in reversed(out)}.items())[::-1]


def _cites_records(fact: Fact, items: Mapping[str, ServedItem]) -> bool:
    """The fact cites a record (a statement, a user, an event, a log record), not only series."""
    return any(c.item in items and not items[c.item].series for c in fact.cites)


def _bad_side(metric: str) -> FactKind:
    return FactKind.BELOW if info_of(metric).worse < 0 else FactKind.ABOVE


def _claims(conclusion: Conclusion) -> tuple[list[Claim], list[str]]:
    """The claims, within the citation limits, and the texts of facts left with nothing to cite.

    Items are taken in the facts' order, keeping room for one item of every source the facts draw on (the
    events and the log say what no metric can). Without any item id in the tool results (an older server),
    claims cite their sources by name instead.
    """
    items = conclusion.case.file.items
    supported = _supported(conclusion)
    pending = {items[c.item].source for fact, _ in supported for c in fact.cites}
    used: dict[str, None] = {}
    claims, unbacked = [], []
    for fact, backs in supported:
        if not items:
            claims.append(Claim(text=fact.text, evidence=list(dict.fromkeys(fact.sources)), supports=backs))
            continue
        kept: list[Citation | str] = []
        for c in dict.fromkeys(fact.cites):
            if len(kept) == MAX_CITATIONS_PER_CLAIM:
                break
            source = items[c.item].source
            room = MAX_CITED_ITEMS - len(used) - 1 >= len(pending - {source})
            if c.item in used or room:
                used[c.item] = None
                pending.discard(source)
                kept.append(c)
        if kept:
            claims.append(Claim(text=fact.text, evidence=kept, supports=backs))
        else:
            unbacked.append(fact.text)
    return claims, unbacked


def _location(conclusion: Conclusion) -> list[str]:
    """Where the faults are, as the evidence names each resource; nothing for a healthy instance."""
    case = conclusion.case
    if conclusion.outcome == Outcome.HEALTHY:
        return []
    if conclusion.outcome == Outcome.UNKNOWN:
        place = case.resource(conclusion.anomaly_metric)
        return [place] if place else []
    return list(dict.fromkeys(f.location for f in conclusion.causes if f.location))


def write_diagnosis(conclusion: Conclusion) -> Diagnosis:
    """The Diagnosis for a conclusion."""
    root = _root_cause(conclusion)
    chain = [" -> ".join(f.chain) for f in conclusion.causes if f.chain]
    symptoms = _symptoms(conclusion)
    if chain and symptoms:
        chain[0] += " -> " + "; ".join(s.hypothesis + " follows as a symptom" for s in symptoms)
    if conclusion.outcome == Outcome.HEALTHY:
        chain = [_healthy_chain(conclusion)]
    claims, unbacked = _claims(conclusion)
    ruled = _ruled_out(conclusion)
    return Diagnosis(
        root_cause=root,
        category=_category(conclusion),
        failure_modes=conclusion.modes,
        causal_chain=chain,
        claims=claims,
        ruled_out=ruled,
        location=_location(conclusion),
        report=_report(conclusion, root, chain, claims, ruled, unbacked),
    )


def _healthy_chain(conclusion: Conclusion) -> str:
    recovered = [f for f in conclusion.others if f.verdict == Verdict.RECOVERED]
    if recovered and recovered[0].mode == "storage_full":
        return "free storage dips -> alert fires -> the volume grows -> free storage recovers -> alert left stale"
    if recovered:
        return f"transient {recovered[0].hypothesis} -> alert fires -> it resolves on its own -> alert left stale"
    if not conclusion.case.file.alert.is_firing:
        return "routine alert -> every metric checked -> nothing outside its normal range -> no action needed"
    w = conclusion.case.workload
    periodic = " (periodic workload)" if w is not None and w.share(WaitGroup.CPU) > 0 else ""
    return f"normal load swings{periodic} -> threshold crossed at the peaks -> no sustained change, no user impact"
