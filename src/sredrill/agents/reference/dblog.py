"""The database's own log: the messages PostgreSQL writes when a resource runs out, as evidence for a finding.

The agent searches the log once for the messages below (PostgreSQL's wording, any instance); a routine log
(sessions, timed checkpoints, autovacuum) matches none of them. A message confirms a fault the metrics already
show, and is cited with the log; where the decisive metric is missing (`DatabaseConnections`), refused
connections decide connection exhaustion on their own.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from types import MappingProxyType

from sredrill.agents.reference.connections import session_mechanism
from sredrill.agents.reference.findings import Case, Fact, Finding, Verdict, clock
from sredrill.agents.reference.observations import LogLine

__all__ = ["SEARCH_PATTERN", "SIGNATURES", "log_fact", "log_matches", "with_log"]

SIGNATURES: Mapping[str, re.Pattern[str]] = MappingProxyType(
    {
        "connection_exhaustion": re.compile(r"too many clients|remaining connection slots are reserved", re.I),
        "replication_lag": re.compile(
            r"walsender process due to replication timeout|receive data from WAL stream", re.I
        ),
        "checkpoint_io_storm": re.compile(r"checkpoints are occurring too frequently", re.I),
        "storage_full": re.compile(r"no space left on device", re.I),
    }
)
"""Failure mode -> the log messages that show it."""

SEARCH_PATTERN = "|".join(p.pattern for p in SIGNATURES.values())
"""One `search_logs` regex for every signature."""

_SECONDS_APART = re.compile(r"\((\d+) seconds apart\)")
# Refused connections decide on their own only when they recur: one refusal is a blip.
_DECIDING_REFUSALS = 3


def log_matches(case: Case, mode: str) -> list[LogLine]:
    """The log records in the failure mode's own words (its signature)."""
    pattern = SIGNATURES[mode]
    return [r for r in case.file.logs if pattern.search(r.message)]


def log_fact(case: Case, mode: str) -> Fact | None:
    """What the log says about one failure mode, cited with the log; None when it says nothing."""
    if mode not in SIGNATURES:
        return None
    lines = log_matches(case, mode)
    if not lines:
        return None
    n, first = len(lines), clock(lines[0].at)
    src = (case.src.logs,)
    if mode == "connection_exhaustion":
        text = f"The PostgreSQL log records {n} connection attempt(s) refused for lack of a free slot, from {first}."
    elif mode == "replication_lag":
        text = (
            f"The PostgreSQL log shows the primary dropping the replica's WAL stream for timeout {n} time(s), "
            f"from {first}."
        )
    elif mode == "checkpoint_io_storm":
        gaps = [int(m.group(1)) for r in lines if (m := _SECONDS_APART.search(r.message))]
        apart = f", as little as {min(gaps)} seconds apart" if gaps else ""
        text = (
            f"The PostgreSQL log warns {n} time(s) that checkpoints are occurring too frequently{apart}, from {first}."
        )
    else:
        text = f"The PostgreSQL log shows {n} write(s) failing with 'No space left on device', from {first}."
    # The first record says when it began; the last that it still happens (two items of the budget at most).
    return Fact(text, src, case.present(lines[0], lines[-1]))


def with_log(case: Case, finding: Finding) -> Finding:
    """The finding with the log's confirmation added to its facts (a cause's), or decided by it (see above)."""
    fact = log_fact(case, finding.mode)
    if fact is None:
        return finding
    if finding.verdict == Verdict.CAUSE:
        # Third, after the metric that shows the fault and the record of who caused it (with two faults the eight
        # cited items run out): the database's own words confirm the symptom; the cause record decides it.
        return dataclasses.replace(finding, facts=(*finding.facts[:2], fact, *finding.facts[2:]))
    refusals = log_matches(case, finding.mode) if finding.mode == "connection_exhaustion" else []
    if finding.verdict == Verdict.UNASSESSED and len(refusals) >= _DECIDING_REFUSALS:
        # Who holds the slots, from Performance Insights: the refusals name whoever connected next.
        mechanism, held = session_mechanism(case, refusals[0].at, None)
        return Finding(
            finding.mode,
            Verdict.CAUSE,
            f"connection exhaustion: {case.instance} refuses new connections because no connection slot is left",
            (mechanism, "new connections are refused"),
            (fact, *held),
            refusals[0].at,
            location=case.resource(),
        )
    return finding
