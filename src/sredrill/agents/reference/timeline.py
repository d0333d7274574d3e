"""The RDS event timeline relative to the alert: what kind each event is, and whether it is recent or history.

An event that happened hours before the incident window and has since completed is context, not cause: a
Multi-AZ failover at dawn does not explain replica lag at noon when everything was healthy in between. The
kinds come from RDS's event categories and the wording RDS uses for each event (generic, documented in the
RDS user guide's event tables).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from types import MappingProxyType

from sredrill.agents.reference.observations import Event

__all__ = ["EventKind", "TimedEvent", "Timeline", "build_timeline", "describe_delta"]

# Events older than this before the metric window (or the alert) are history unless still in progress.
_RECENT_BEFORE_WINDOW = timedelta(minutes=30)


class EventKind(StrEnum):
    FAILOVER = "failover"
    RESTART = "restart"
    STORAGE_FULL = "storage full"
    LOW_STORAGE = "low storage"
    STORAGE_GROWN = "storage modification"
    CONFIGURATION = "configuration change"
    MAINTENANCE = "maintenance"
    BACKUP = "backup"
    REPLICATION = "read replica"
    NOTIFICATION = "notification"
    OTHER = "other"


_PATTERNS: tuple[tuple[EventKind, re.Pattern[str]], ...] = (
    (EventKind.STORAGE_FULL, re.compile(r"no free storage|storage[- ]full|out of storage|storage.*shut ?down", re.I)),
    (EventKind.STORAGE_GROWN, re.compile(r"allocated storage|storage autoscal|storage size|modify.*storage", re.I)),
    (EventKind.LOW_STORAGE, re.compile(r"free storage|low storage|storage capacity", re.I)),
    (EventKind.FAILOVER, re.compile(r"fail(?:ed|ing)? ?over|promot|standby", re.I)),
    (EventKind.REPLICATION, re.compile(r"replica|replication", re.I)),
    (EventKind.RESTART, re.compile(r"restart|reboot|shut ?down|recovery|started|stopped", re.I)),
    (EventKind.MAINTENANCE, re.compile(r"patch|maintenance|upgrade", re.I)),
    (EventKind.BACKUP, re.compile(r"backup|snapshot", re.I)),
    (EventKind.CONFIGURATION, re.compile(r"modif|parameter|instance class|configuration", re.I)),
)
_CATEGORY_KIND = MappingProxyType(
    {
        "failover": EventKind.FAILOVER,
        "low storage": EventKind.LOW_STORAGE,
        "maintenance": EventKind.MAINTENANCE,
        "backup": EventKind.BACKUP,
        "configuration change": EventKind.CONFIGURATION,
        "read replica": EventKind.REPLICATION,
        "notification": EventKind.NOTIFICATION,
        "availability": EventKind.RESTART,
        "restoration": EventKind.RESTART,
        "recovery": EventKind.RESTART,
    }
)
_COMPLETED = re.compile(r"\b(finished|completed|complete|resumed|succeeded|ended)\b", re.I)
_AUTOSCALING = re.compile(r"autoscal", re.I)


def _kind(event: Event) -> EventKind:
    for kind, pattern in _PATTERNS:
        if pattern.search(event.message):
            # A storage modification message also mentions storage: the pattern order settles it.
            return kind
    for category in event.categories:
        if category in _CATEGORY_KIND:
            return _CATEGORY_KIND[category]
    return EventKind.OTHER


@dataclass(frozen=True, slots=True)
class TimedEvent:
    """An event with its kind and its place relative to the alert."""

    event: Event
    kind: EventKind
    offset_s: float | None
    """Seconds from the alert (negative: before it); None when the alert time is unknown."""
    recent: bool
    """Inside the incident window (or shortly before it): a candidate cause."""
    completed: bool
    """The message reports an operation finishing."""
    autoscaling: bool

    @property
    def at(self) -> datetime:
        return self.event.at


@dataclass(frozen=True, slots=True)
class Timeline:
    """The events, oldest first, each classified."""

    events: tuple[TimedEvent, ...]

    def recent(self, *kinds: EventKind) -> tuple[TimedEvent, ...]:
        return tuple(e for e in self.events if e.recent and (not kinds or e.kind in kinds))

    def historical(self) -> tuple[TimedEvent, ...]:
        return tuple(e for e in self.events if not e.recent)

    def of(self, *kinds: EventKind) -> tuple[TimedEvent, ...]:
        return tuple(e for e in self.events if e.kind in kinds)


def build_timeline(events: tuple[Event, ...], *, alert_at: datetime | None, window_start: datetime | None) -> Timeline:
    """Classify every event and place it relative to the alert and the metric window."""
    anchor = window_start or alert_at
    out = []
    for e in events:
        recent = anchor is None or e.at >= anchor - _RECENT_BEFORE_WINDOW
        out.append(
            TimedEvent(
                event=e,
                kind=_kind(e),
                offset_s=(e.at - alert_at).total_seconds() if alert_at is not None else None,
                recent=recent,
                completed=bool(_COMPLETED.search(e.message)),
                autoscaling=bool(_AUTOSCALING.search(e.message)),
            )
        )
    return Timeline(tuple(out))


def describe_delta(seconds: float) -> str:
    """`3 min before the alert`, `2.5 h before the alert`, `1 min after the alert`."""
    side = "before" if seconds < 0 else "after"
    s = abs(seconds)
    if s < 90:
        amount = f"{s:.0f} s"
    elif s < 90 * 60:
        amount = f"{s / 60:.0f} min"
    else:
        amount = f"{s / 3600:.1f} h"
    return f"{amount} {side} the alert"
