"""Performance Insights read like an SRE reads it: what the sessions wait on, and what kind of SQL dominates.

Waits are grouped by what they mean in PostgreSQL: `CPU`; WAL writes (`IO:WALWrite`, `IO:WALSync`,
`LWLock:WALWrite`); data file reads, writes and extension; temporary files (`IO:BufFileWrite`); buffer
mapping contention (`LWLock:BufferMapping`); too many backends (`LWLock:ProcArray`); row locks
(`Lock:transactionid`, `Lock:tuple`); sessions idle waiting on their client (`Client:ClientRead`, typical of
idle-in-transaction sessions). A statement is classified by its verb (a bulk `UPDATE`, a `COPY` load, a
`VACUUM`, an analytical `SELECT`) and by whether its predicate defeats a plain B-tree index.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from sredrill.agents.reference.observations import Insights, Statement, Wait

__all__ = ["StatementView", "UserItem", "WaitGroup", "Workload", "read_workload", "wait_group"]


class WaitGroup(StrEnum):
    CPU = "CPU"
    WAL = "WAL writes"
    CLIENT = "idle sessions waiting on their client"
    LOCK = "row locks"
    TEMP = "temporary file I/O"
    EXTEND = "data file extension"
    READ = "data file reads"
    WRITE = "data file writes"
    BUFFER = "buffer mapping contention"
    PROCARRAY = "ProcArray contention"
    OTHER = "other waits"


def wait_group(wait: Wait) -> WaitGroup:
    """What a wait event means, as one of a few groups."""
    name, kind = wait.name.lower(), wait.type.lower()
    if kind == "cpu" or name == "cpu":
        return WaitGroup.CPU
    if "wal" in name:
        return WaitGroup.WAL
    if kind == "client":
        return WaitGroup.CLIENT
    if "buffile" in name:
        return WaitGroup.TEMP
    if "extend" in name:
        return WaitGroup.EXTEND
    if "procarray" in name:
        return WaitGroup.PROCARRAY
    if "buffermapping" in name or "buffer_mapping" in name or "buffercontent" in name:
        return WaitGroup.BUFFER
    if kind == "lock":
        return WaitGroup.LOCK
    if "datafileread" in name or name.endswith(":read"):
        return WaitGroup.READ
    if "datafilewrite" in name or "datafileflush" in name or "datafilesync" in name:
        return WaitGroup.WRITE
    return WaitGroup.OTHER


def _shares(waits: Iterable[Wait]) -> dict[WaitGroup, float]:
    out: dict[WaitGroup, float] = {}
    for w in waits:
        g = wait_group(w)
        out[g] = out.get(g, 0.0) + w.load
    return out


_VERB = re.compile(r"^\s*(?:\(\s*)?([a-z]+)", re.I)
_TABLE_AFTER = MappingProxyType(
    {
        "insert": re.compile(r"\binto\s+([\w.\"]+)", re.I),
        "update": re.compile(r"^\s*update\s+(?:only\s+)?([\w.\"]+)", re.I),
        "delete": re.compile(r"\bfrom\s+([\w.\"]+)", re.I),
        "copy": re.compile(r"^\s*copy\s+([\w.\"]+)", re.I),
        "vacuum": re.compile(
            r"^\s*vacuum\s*(?:\([^)]*\))?\s*(?:full\s+|freeze\s+|analyze\s+|verbose\s+)*([\w.\"]+)", re.I
        ),
        "analyze": re.compile(r"^\s*analy[sz]e\s*(?:\([^)]*\))?\s*([\w.\"]+)", re.I),
        "select": re.compile(r"\bfrom\s+([\w.\"]+)", re.I),
    }
)
_VACUUM_OPTIONS = re.compile(r"^\s*vacuum\s*(\([^)]*\)|(?:\s*(?:full|freeze|analyze|verbose)\b)+)?", re.I)
_HEALTH_CHECK = re.compile(r"^\s*select\s+1\s*;?\s*$", re.I)
_AGGREGATE = re.compile(r"\b(sum|count|avg|max|min|percentile_cont|percentile_disc|string_agg|array_agg)\s*\(", re.I)
_GROUPING = re.compile(r"\bgroup\s+by\b|\bjoin\b|\bdate_trunc\s*\(|\bwindow\b|\bover\s*\(", re.I)
_WHERE = re.compile(r"\bwhere\b(.*)", re.I | re.S)
_FUNCTION_ON_COLUMN = re.compile(
    r"\b(lower|upper|date_trunc|coalesce|substr|substring|trim|to_char|md5)\s*\(\s*(?:'[^']*'\s*,\s*)?[a-z_][\w.]*\s*\)",
    re.I,
)
_ILIKE = re.compile(r"\bilike\b", re.I)
_LEADING_WILDCARD = re.compile(r"\blike\s+'%", re.I)
_CAST_ON_COLUMN = re.compile(r"\b[a-z_][\w.]*\s*::\s*(text|varchar|date)\b", re.I)
_MAINTENANCE = frozenset({"vacuum", "analyze", "analyse", "reindex", "cluster", "create", "alter", "refresh"})
_WRITES = frozenset({"insert", "update", "delete", "copy", "merge"})


def _clean_table(raw: str) -> str:
    name = raw.strip().strip('"').rstrip(";(").replace('"', "")
    return name.split(".", 1)[1] if name.lower().startswith("public.") else name


@dataclass(frozen=True, slots=True)
class UserItem:
    """A database user Performance Insights ranks by load, with its evidence item id."""

    name: str
    id: str


@dataclass(frozen=True, slots=True)
class StatementView:
    """One top SQL statement, interpreted."""

    statement: Statement
    verb: str
    """Lower-case first keyword: `select`, `insert`, `update`, `copy`, `vacuum`, …"""
    table: str | None
    groups: dict[WaitGroup, float]

    @property
    def load(self) -> float:
        return self.statement.load

    @property
    def calls_per_sec(self) -> float | None:
        return self.statement.calls_per_sec

    def share(self, *groups: WaitGroup) -> float:
        """Fraction of the statement's waiting time in these groups."""
        total = sum(self.groups.values()) or self.load
        return sum(self.groups.get(g, 0.0) for g in groups) / total if total else 0.0

    def load_in(self, *groups: WaitGroup) -> float:
        return sum(self.groups.get(g, 0.0) for g in groups)

    @property
    def dominant(self) -> WaitGroup | None:
        return max(self.groups, key=lambda g: self.groups[g]) if self.groups else None

    @property
    def is_write(self) -> bool:
        return self.verb in _WRITES or (
            self.verb == "with" and bool(re.search(r"\b(insert|update|delete)\b", self.text, re.I))
        )

    @property
    def is_maintenance(self) -> bool:
        return self.verb in _MAINTENANCE

    @property
    def is_health_check(self) -> bool:
        return bool(_HEALTH_CHECK.match(self.text))

    @property
    def is_locking_read(self) -> bool:
        return self.verb == "select" and bool(re.search(r"\bfor\s+(update|share|no key update)\b", self.text, re.I))

    @property
    def is_upsert(self) -> bool:
        return self.verb == "insert" and bool(re.search(r"\bon\s+conflict\b", self.text, re.I))

    @property
    def is_analytical(self) -> bool:
        """An aggregating or joining SELECT run rarely: a report, not an OLTP lookup."""
        rare = self.calls_per_sec is not None and self.calls_per_sec < 1
        return (
            self.verb in ("select", "with")
            and rare
            and bool(_AGGREGATE.search(self.text) or _GROUPING.search(self.text))
        )

    @property
    def text(self) -> str:
        return self.statement.text

    @property
    def cpu_ms_per_call(self) -> float | None:
        """Milliseconds of CPU each call costs (CPU load in sessions ÷ calls per second)."""
        rate = self.calls_per_sec
        if not rate or rate <= 0:
            return None
        return self.load_in(WaitGroup.CPU) / rate * 1000

    @property
    def index_defeat(self) -> str | None:
        """Why the predicate cannot use a plain B-tree index, or None."""
        where = _WHERE.search(self.text)
        if where is None:
            return None
        clause = where.group(1)
        if m := _FUNCTION_ON_COLUMN.search(clause):
            return f"its predicate wraps the column in {m.group(1).lower()}(), which a plain B-tree index cannot serve"
        if _ILIKE.search(clause):
            return "its predicate is a case-insensitive ILIKE pattern match, which a B-tree index cannot serve"
        if _LEADING_WILDCARD.search(clause):
            return "its predicate is a LIKE pattern with a leading wildcard, which a B-tree index cannot serve"
        if m := _CAST_ON_COLUMN.search(clause):
            return f"its predicate casts the column to {m.group(1).lower()}, which a plain index cannot serve"
        return None

    @property
    def label(self) -> str:
        """How an SRE names it: `an UPDATE on member_points`, `a COPY bulk load into pings`, `VACUUM (FREEZE) …`."""
        table = f" {self.table}" if self.table else ""
        if self.verb == "copy":
            return f"a bulk load (COPY into{table})"
        if self.verb == "vacuum":
            opts = _VACUUM_OPTIONS.match(self.text)
            options = f" {opts.group(1).strip().upper()}" if opts and opts.group(1) else ""
            return f"a VACUUM{options} of{table}"
        if self.is_upsert:
            return f"an upsert (INSERT … ON CONFLICT into{table})"
        if self.verb == "insert":
            return f"INSERTs into{table}"
        if self.verb == "update":
            return f"an UPDATE on{table}"
        if self.verb == "delete":
            return f"a DELETE from{table}"
        if self.is_health_check:
            return "the connection health-check query"
        if self.is_locking_read:
            return f"a SELECT … FOR UPDATE on{table}"
        if self.verb in ("select", "with"):
            return f"an analytical SELECT on{table}" if self.is_analytical else f"a SELECT on{table}"
        return f"a {self.verb.upper()} statement{(' on' + table) if table else ''}"


def _view(statement: Statement) -> StatementView:
    m = _VERB.match(statement.text)
    verb = m.group(1).lower() if m else ""
    table = None
    pattern = _TABLE_AFTER.get(verb)
    if pattern is not None and (t := pattern.search(statement.text)):
        table = _clean_table(t.group(1))
        if table.lower() in ("only", "verbose", "freeze", "full", "analyze", "stdin"):
            table = None
    return StatementView(statement=statement, verb=verb, table=table, groups=_shares(statement.waits))


@dataclass(frozen=True, slots=True)
class Workload:
    """Performance Insights for the window, interpreted."""

    insights: Insights
    statements: tuple[StatementView, ...]
    groups: dict[WaitGroup, float]

    @property
    def total(self) -> float:
        """Average active sessions over the window (the waits' sum, else the mean db_load)."""
        if self.groups:
            return sum(self.groups.values())
        values = self.insights.load_values
        return sum(values) / len(values) if values else 0.0

    def share(self, *groups: WaitGroup) -> float:
        total = sum(self.groups.values())
        return sum(self.groups.get(g, 0.0) for g in groups) / total if total else 0.0

    def top_by(self, *groups: WaitGroup) -> StatementView | None:
        """The statement spending the most load in these wait groups (None when none does)."""
        ranked = sorted(self.statements, key=lambda s: -s.load_in(*groups))
        return ranked[0] if ranked and ranked[0].load_in(*groups) > 0 else None

    def top_wait(self, *groups: WaitGroup) -> Wait | None:
        """The wait event with the most load among these groups (any group when none is given)."""
        waits = [w for w in self.insights.waits if not groups or wait_group(w) in groups]
        return max(waits, key=lambda w: w.load) if waits else None

    def top_wait_outside(self, *groups: WaitGroup) -> Wait | None:
        """The wait event with the most load outside these groups."""
        waits = [w for w in self.insights.waits if wait_group(w) not in groups]
        return max(waits, key=lambda w: w.load) if waits else None

    def top_writer(self) -> StatementView | None:
        """The writing statement (or maintenance) with the most load."""
        writers = [s for s in self.statements if s.is_write or s.is_maintenance]
        return max(writers, key=lambda s: s.load) if writers else None

    def top_user(self) -> tuple[str, float] | None:
        return self.insights.users[0] if self.insights.users else None

    def user(self, name: str | None) -> UserItem | None:
        """The top-users entry of that name, as a citable item (None when unnamed or served without an id)."""
        ref = dict(self.insights.user_ids).get(name) if name else None
        return UserItem(name, ref) if name and ref else None

    def owner_of(self, statement: StatementView) -> str | None:
        """The user whose load matches the statement's, when the match is unambiguous.

        Performance Insights ranks users and SQL separately; pairing them by equal load is an inference, so
        pairs are made one to one, closest first, and only within 15%.
        """
        pairs = sorted(
            (abs(load - s.load) / max(s.load, 1e-9), i, name)
            for i, s in enumerate(self.statements)
            for name, load in self.insights.users
        )
        taken_s: set[int] = set()
        taken_u: set[str] = set()
        for gap, i, name in pairs:
            if gap > 0.15:
                break
            if i in taken_s or name in taken_u:
                continue
            taken_s.add(i)
            taken_u.add(name)
            if self.statements[i] is statement:
                return name
        return None

    def describe_waits(self, limit: int = 3) -> str:
        """`IO:WALWrite 1.2, CPU 1.1, …` (sessions)."""
        waits = self.insights.waits[:limit]
        return ", ".join(f"{w.name} {w.load:.2f}" for w in waits)


def read_workload(insights: Insights | None) -> Workload | None:
    """Interpret Performance Insights; None when there are none."""
    if insights is None or insights.is_empty:
        return None
    return Workload(
        insights=insights,
        statements=tuple(_view(s) for s in insights.statements),
        groups=_shares(insights.waits),
    )
