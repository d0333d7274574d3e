"""The rest of the fleet: anomalies on other instances that look like a failure mode, and why they are not one.

An alert is about one instance, but its account holds others (a replica, other applications' databases), and an
SRE who rules a hypothesis out checks that nothing elsewhere in the fleet shows it either. Each finding here is a
note for one hypothesis's ruled-out entry: what the other instance shows, why it is benign, and what to cite:

- CPU rising on another instance but staying short of saturation;
- sessions climbing on another instance (its own load, not the alerting instance's);
- free storage that storage autoscaling grew (its "Finished applying" event), on any instance;
- a read burst on an instance while its backup runs: a snapshot reading the volume, not checkpoints writing it.

Generic RDS knowledge only; nothing here knows a scenario.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import MappingProxyType

from sredrill.agents.reference.casefile import CaseFile
from sredrill.agents.reference.citing import level as cite_level
from sredrill.agents.reference.citing import present as cite_present
from sredrill.agents.reference.observations import Event, Series
from sredrill.agents.reference.statistics import profile_series
from sredrill.agents.reference.timeline import EventKind, Timeline
from sredrill.diagnosis import Citation, FactKind

__all__ = ["BACKUP_SPAN", "FleetNote", "backup_spans", "elsewhere", "other_instances"]

# CPU at or above this is saturated (the level CPU alarms and the hypotheses are stated at).
_CPU_SATURATED = 90.0
# A rise counts when it is at least this many points of CPU, or this share of the sessions' baseline.
_CPU_RISE = 15.0
_SESSIONS_RISE = 0.5
_SESSIONS_FLOOR = 50.0
# A backup's read burst: the instance's read IOPS during the backup at least this many times the level before.
_BURST = 2.0
# The level a backup's reads are compared with: the read IOPS over this long before it starts.
_BEFORE = timedelta(minutes=15)
BACKUP_SPAN = timedelta(minutes=40)
"""How long after a backup starts its reads are looked at, when no event says it finished."""
_BACKUP = re.compile(r"back(?:ing)? ?up|snapshot", re.I)
_FINISHED = re.compile(r"^(finished|completed)|created$|complete[d]?\.?$", re.I)


@dataclass(frozen=True, slots=True)
class FleetNote:
    """What another instance (or an event) shows about one hypothesis, and what a ruled-out entry cites."""

    mode: str
    reason: str
    cites: tuple[Citation, ...]


def other_instances(file: CaseFile) -> tuple[str, ...]:
    """Instances the series describe, other than the primary and its replica, in the order first seen."""
    mine = {file.primary, file.replica}
    return tuple(dict.fromkeys(s.instance for s in file.series if s.instance is not None and s.instance not in mine))


def backup_spans(events: tuple[Event, ...] | list[Event]) -> list[tuple[Event, datetime, datetime]]:
    """Each backup that started (its event, its start and its end: the next backup event of the same instance,
    finishing it or starting another, else `BACKUP_SPAN` later)."""
    out = []
    backups = [e for e in events if "backup" in e.categories or _BACKUP.search(e.message)]
    for e in backups:
        if _FINISHED.search(e.message.strip()):
            continue
        # It ends at the next finishing backup event of the instance, or where its next backup starts.
        done = next((b.at for b in backups if b.source == e.source and b.at > e.at), None)
        out.append((e, e.at, done or e.at + BACKUP_SPAN))
    return out


def elsewhere(file: CaseFile, timeline: Timeline) -> Mapping[str, FleetNote]:
    """By hypothesis, the fleet's benign look-alike of it (the most telling one), when there is one."""
    notes = [
        _cpu(file),
        _sessions(file),
        _autoscaled(file, timeline),
        _backup_reads(file),
    ]
    return MappingProxyType({n.mode: n for n in notes if n is not None})


def _series(file: CaseFile, metric: str, instance: str) -> Series | None:
    return file.series_on(metric, instance)


def _cpu(file: CaseFile) -> FleetNote | None:
    best: tuple[float, FleetNote] | None = None
    for instance in other_instances(file):
        s = _series(file, "CPUUtilization", instance)
        p = profile_series(s.times, s.values, floor=10.0) if s is not None else None
        if s is None or p is None or p.direction <= 0 or p.extreme - p.baseline < _CPU_RISE:
            continue
        cite = cite_level(file.items, s.id, FactKind.BELOW, within=_CPU_SATURATED)
        if cite is None:
            continue
        rise = p.extreme - p.baseline
        note = FleetNote(
            "cpu_saturation",
            f"on {instance}, another instance of the fleet, CPU rises from {p.baseline:.0f}% to {p.extreme:.0f}% "
            f"but stays below {cite.value:g}%: busy, not saturated",
            (cite,),
        )
        if best is None or rise > best[0]:
            best = (rise, note)
    return best[1] if best else None


def _sessions(file: CaseFile) -> FleetNote | None:
    best: tuple[float, FleetNote] | None = None
    for instance in other_instances(file):
        s = _series(file, "DatabaseConnections", instance)
        p = profile_series(s.times, s.values, floor=20.0) if s is not None else None
        if s is None or p is None or p.direction <= 0:
            continue
        rise = p.extreme - p.baseline
        if rise < max(_SESSIONS_FLOOR, _SESSIONS_RISE * p.baseline):
            continue
        # Stated as close to the peak as three significant digits allow: "below" says how far it went.
        cite = cite_level(file.items, s.id, FactKind.BELOW, within=max(s.values) * 1.02)
        if cite is None:
            continue
        note = FleetNote(
            "connection_exhaustion",
            f"on {instance}, another instance of the fleet, sessions climb from {p.baseline:,.0f} to "
            f"{p.extreme:,.0f} and stay below {cite.value:,.0f}: a load of that instance's own, not the alerting "
            "instance's sessions",
            (cite,),
        )
        if best is None or rise > best[0]:
            best = (rise, note)
    return best[1] if best else None


def _autoscaled(file: CaseFile, timeline: Timeline) -> FleetNote | None:
    grown = [
        e.event
        for e in timeline.recent(EventKind.STORAGE_GROWN)
        if _FINISHED.search(e.event.message.strip()) and "autoscal" in e.event.message.lower()
    ]
    if not grown:
        return None
    last = grown[-1]
    cite = cite_present(file.items, last.id)
    if cite is None:
        return None
    where = last.source or "an instance"
    return FleetNote(
        "storage_full",
        f"free storage on {where} ran low and storage autoscaling grew its volume (“{last.message.rstrip('.')}”): "
        "the volume grows before it fills",
        (cite,),
    )


def _backup_reads(file: CaseFile) -> FleetNote | None:
    """A backup whose read burst the instance's read IOPS show; else a backup of the primary, whose checkpoints
    its own write metrics already judge (the event says what the reads are)."""
    spans = backup_spans(list(file.events))
    burst = _burst(file, spans)
    if burst is not None:
        return burst
    # The primary's backups, the latest first (the one closest to the incident), two at most.
    own = [(e, c) for e, _, _ in reversed(spans) if e.source == file.primary and (c := cite_present(file.items, e.id))]
    if not own:
        return None
    quoted = "; ".join(f"“{e.message.rstrip('.')}”" for e, _ in own[:2])
    return FleetNote(
        "checkpoint_io_storm",
        f"the primary's {'backups run' if len(own) > 1 else 'backup runs'} in the window ({quoted}): a snapshot "
        "reads the volume and writes no checkpoints",
        tuple(c for _, c in own[:2]),
    )


def _burst(file: CaseFile, spans: list[tuple[Event, datetime, datetime]]) -> FleetNote | None:
    """The backup whose reads rose the most (at least `_BURST` times their level before), as a note; a backup
    that follows on another of the same instance cites both (which one the reads belong to is not known)."""
    best: tuple[float, FleetNote] | None = None
    for events, start, end in _runs(spans):
        s = _series(file, "ReadIOPS", events[0].source)
        if s is None:
            continue
        # Each backup of the run on its own, and the run as a whole: the window where the reads rose most.
        windows = [(e, a, b) for e, a, b in spans if e in events] + [(events[0], start, end)]
        ratio, first, a, b = max(((_ratio(s, a, b), e, a, b) for e, a, b in windows), key=lambda w: w[0])
        ordered = [first, *(e for e in events if e is not first)]
        cites = [c for e in ordered if (c := cite_present(file.items, e.id)) is not None][:2]
        if not cites or ratio < _BURST:
            continue
        burst = cite_level(file.items, s.id, FactKind.ABOVE, since=a, until=b)
        quoted = "; ".join(f"“{e.message.rstrip('.')}”" for e in ordered[:2])
        note = FleetNote(
            "checkpoint_io_storm",
            f"the read burst on {first.source} (read IOPS about {ratio:.0f} times their level before) runs while "
            f"its backup does ({quoted}): a snapshot reading the volume, not checkpoints writing it",
            (*cites, *((burst,) if burst is not None else ())),
        )
        if best is None or ratio > best[0]:
            best = (ratio, note)
    return best[1] if best else None


def _ratio(s: Series, start: datetime, end: datetime) -> float:
    """The series' median from `start` to `end` over its median in the `_BEFORE` before (0 when either is
    empty)."""
    before = sorted(v for t, v in zip(s.times, s.values, strict=True) if start - _BEFORE <= t < start)
    during = sorted(v for t, v in zip(s.times, s.values, strict=True) if start <= t <= end)
    if not before or not during or before[len(before) // 2] <= 0:
        return 0.0
    return during[len(during) // 2] / before[len(before) // 2]


def _runs(spans: list[tuple[Event, datetime, datetime]]) -> list[tuple[list[Event], datetime, datetime]]:
    """Backups of one instance that follow on each other (one starts as the other is still running) as one run
    of reads: their start events, the first start and the last end."""
    out: list[tuple[list[Event], datetime, datetime]] = []
    for event, start, end in sorted(spans, key=lambda x: (x[0].source, x[1])):
        last = out[-1] if out else None
        if last is not None and last[0][0].source == event.source and start <= last[2]:
            out[-1] = ([*last[0], event], last[1], max(last[2], end))
        else:
            out.append(([event], start, end))
    return out
