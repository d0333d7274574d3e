"""Failover: did RDS switch the primary to its Multi-AZ standby during the incident?

The event stream is the decisive evidence: RDS reports a failover starting and completing (and usually a
restart). The metrics corroborate it: sessions drop to zero and come back, and a degraded primary often shows
write latency and the disk queue spiking just before the switch. A failover that completed hours before the
incident, after which everything was healthy, is history: context, not cause.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from statistics import median

from sredrill.agents.reference.findings import Case, Fact, Finding, Verdict, value, when
from sredrill.agents.reference.timeline import EventKind, describe_delta
from sredrill.diagnosis import Citation, FactKind

__all__ = ["assess_failover"]

_MODE = "failover"
_HOST_FAULT = re.compile(r"impaired|degraded|hardware|unreachable|connectivity|unresponsive|I/O error", re.I)
"""What a failed host says of itself: the failover events say that RDS switched, these say why."""
_HOST_FAULT_BEFORE = timedelta(minutes=30)


def _spike_before(case: Case, moment: datetime) -> Fact | None:
    """Write latency or the disk queue spiking in the minutes before the switch (a degraded storage path)."""
    lookback = moment - 4 * case.file.period
    for metric in ("WriteLatency", "DiskQueueDepth"):
        times, values = case.file.times(metric), case.file.values(metric)
        before = [v for t, v in zip(times, values, strict=True) if t < lookback]
        near = [(v, t) for t, v in zip(times, values, strict=True) if lookback <= t <= moment + case.file.period]
        if len(before) < 3 or not near:
            continue
        usual = median(before)
        peak, at = max(near)
        if usual > 0 and peak >= 5 * usual:
            return Fact(
                f"Just before the switch, {metric} spikes from about {value(metric, usual)} to {value(metric, peak)} "
                f"{when(case, at)}: a sign of a degraded storage path on the old primary.",
                (case.src.metrics,),
                case.level(metric, FactKind.ABOVE, since=at, until=at),
            )
    return None


def _host_fault(case: Case, first: datetime, place: str | None) -> Fact | None:
    """An event of the failed instance, in the half hour before the switch, that tells what went wrong with its
    host (an impaired volume, degraded hardware, lost connectivity): the cause the failover events follow."""
    found = [
        e
        for e in case.timeline.events
        if e.kind is not EventKind.FAILOVER
        and first - _HOST_FAULT_BEFORE <= e.at <= first
        and (place is None or e.event.source == place)
        and _HOST_FAULT.search(e.event.message)
    ]
    if not found:
        return None
    e = found[-1]
    rel = f" ({describe_delta(e.offset_s)})" if e.offset_s is not None else ""
    return Fact(
        f"Before the switch RDS reports a fault of the primary's host: “{e.event.message.rstrip('.')}”{rel}; "
        "the health checks then fail and the failover follows.",
        (case.src.events,),
        case.present(e.event),
    )


def assess_failover(case: Case) -> Finding:
    """Is a failover the root cause?"""
    tl = case.timeline
    recent = tl.recent(EventKind.FAILOVER)
    if not recent:
        old = [e for e in tl.of(EventKind.FAILOVER) if not e.recent]
        if old:
            ago = describe_delta(old[-1].offset_s) if old[-1].offset_s is not None else "long before the alert"
            return Finding(
                _MODE,
                Verdict.ABSENT,
                f"the Multi-AZ failover in the event history completed {ago}, hours before the incident began, "
                "and the metrics stayed at their baseline in between: it is context, not the cause",
                against=(*case.present(old[-1].event), *_serving(case)),
            )
        restarts = tl.recent(EventKind.RESTART)
        detail = " (only a restart is reported)" if restarts else ""
        serving = _serving(case)
        throughout = ", and the primary serves traffic throughout" if serving else ""
        return Finding(
            _MODE, Verdict.ABSENT, f"no failover event in the incident window{detail}{throughout}", against=serving
        )
    src = case.src
    steps = []
    for e in (*recent, *tl.recent(EventKind.RESTART)):
        rel = f" ({describe_delta(e.offset_s)})" if e.offset_s is not None else ""
        steps.append((e.at, f"“{e.event.message.rstrip('.')}”{rel}"))
    steps.sort()
    shown = case.present(*(e.event for e in (*recent, *tl.recent(EventKind.RESTART))))[:3]
    first = recent[0].at
    place = next((e.event.source for e in recent if e.event.source), None) or case.resource()
    host = _host_fault(case, first, place)
    facts = [host] if host is not None else []
    facts.append(Fact("RDS events: " + "; ".join(s for _, s in steps) + ".", (src.events,), shown))
    conns = case.file.profile("DatabaseConnections")
    if conns is not None and conns.direction < 0 and conns.extreme <= 0.1 * max(conns.baseline, 1):
        back = "and return to their usual level" if conns.recovered else "and have not recovered yet"
        facts.append(
            Fact(
                f"Sessions drop from {conns.baseline:,.0f} to {conns.extreme:,.0f} {when(case, conns.extreme_at)} "
                f"during the switch {back}.",
                (src.metrics,),
                case.trend("DatabaseConnections", FactKind.FALLING, since=conns.onset_at, until=conns.extreme_at),
            )
        )
    spike = _spike_before(case, first)
    if spike is not None:
        facts.append(spike)
    summary = (
        f"failover: the primary of {case.instance} became unhealthy and RDS ran a Multi-AZ failover, promoting "
        "the standby; clients were disconnected during the switch and reconnected to the new primary"
    )
    chain = (
        "primary host degraded",
        "health checks fail",
        "Multi-AZ failover promotes the standby",
        "brief outage, then recovery",
    )
    return Finding(_MODE, Verdict.CAUSE, summary, chain, tuple(facts), first, location=place)


def _serving(case: Case) -> tuple[Citation, ...]:
    """The primary kept its sessions throughout (steady, and never down to zero): no switch cut the clients off."""
    return (*case.trend("DatabaseConnections", FactKind.FLAT), *case.level("DatabaseConnections", FactKind.ABOVE))
