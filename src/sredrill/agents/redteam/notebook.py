"""What a red-team agent (or a baseline) read: the evidence items tool results named by id, with their points.

Every tool result names its items with an `"id"` (a pod log's lines with an `"ids"` list beside `"lines"`).
The notebook walks each result generically, so it knows no domain's payloads: a dict with an id is an item, its
`values` (and `timestamps`) the points it was served, merged over calls by timestamp as the harness merges
them. `investigate` plays a fixed plan of tool calls; facts are chosen with `grading.facts` on exactly the
points served, so a shortcut agent's citations hold and what fails it is the grading's judgement.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from statistics import fmean, pstdev
from typing import Any

from sredrill.agents.protocol import Task
from sredrill.diagnosis import ITEM_ID, MAX_CITATIONS_PER_CLAIM, Citation, FactKind
from sredrill.evidence.items import ServedItem
from sredrill.grading.facts import check_fact, trend_of
from sredrill.grading.grounding import SUSTAINED
from sredrill.trajectory import ToolError

from .values import point_of

__all__ = ["Notebook", "Seen", "bound", "investigate"]

# Tools that are not evidence: the alert is read first, the diagnosis is the reply.
_NOT_EVIDENCE = frozenset({"get_alert", "submit_diagnosis"})
# A record names the resource it is about in a field called `…identifier` or `…object` (a source, an instance,
# an involved object) or in its dimensions; some kinds are resources by their own `name`. The payloads' shape,
# never a scenario's names.
_RESOURCE_SUFFIXES = ("identifier", "object")
_NAMED_KINDS = frozenset({"pod", "deploy", "node"})
# Texts that say what an item is, in the order an agent would quote them.
_LABEL_FIELDS = ("metric_name", "message", "text", "statement", "reason", "name", "wait", "user", "host")
_MAX_LABEL = 80
_RECORD_DEPTH = 2


@dataclass(slots=True)
class Seen:
    """One item as this agent was served it (merged over its calls)."""

    id: str
    tool: str
    """The tool that first served it."""
    fields: dict[str, Any]
    """The record's scalar fields as served (no point arrays)."""
    points: dict[str, float] = field(default_factory=dict)
    """Timestamp (ISO text, "" when undated) -> value: a series' served points."""
    series: bool = False
    value: float | None = None
    """The one undated point of a record that has one (a pod's restarts: `values.point_of`)."""
    text: str = ""
    """Every string of the record as served, nested ones too (a pod's container states): what its words are."""

    @property
    def kind(self) -> str:
        return self.id.rpartition("-")[0]

    def values(self) -> list[float]:
        """The served values, oldest first (ISO-8601 UTC timestamps sort as text)."""
        return [self.points[t] for t in sorted(self.points)]

    def label(self) -> str:
        """What the item is, in a few words (`metric CPUUtilization`, `event Pod/x BackOff`)."""
        for key in _LABEL_FIELDS:
            value = self.fields.get(key)
            if isinstance(value, str) and value:
                text = value if len(value) <= _MAX_LABEL else value[: _MAX_LABEL - 1] + "…"
                return f"{self.kind} {text}"
        return self.kind

    def resources(self) -> list[str]:
        """The resources the record names (an instance, a pod, a node)."""
        out = [v for k, v in self.fields.items() if isinstance(v, str) and v and k.lower().endswith(_RESOURCE_SUFFIXES)]
        dims = self.fields.get("dimensions")
        if isinstance(dims, Mapping):
            out += [v for v in dims.values() if isinstance(v, str) and v]
        if self.kind in _NAMED_KINDS and isinstance(name := self.fields.get("name"), str) and name:
            out.append(name)
        return out

    def dated(self) -> list[tuple[datetime | None, float]]:
        """The served points, oldest first, each with its time when the result gave one."""
        return [(_moment(t), self.points[t]) for t in sorted(self.points)]

    def served(self) -> ServedItem:
        """The item as `grading.facts` reads it: its points (dated where served with times) and series flag."""
        points = self.dated() if self.series else [(None, self.value)] if self.value is not None else []
        return ServedItem(self.id, self.kind, "", {}, tuple(points), None, self.series)

    def facts(self) -> list[Citation]:
        """The strongest facts that hold on what was served, at most `MAX_CITATIONS_PER_CLAIM`: a series' trend,
        `above` just under its highest run of `SUSTAINED` consecutive points and `below` just over its lowest,
        each stated over that run's window (the shortest a level counts over: the strongest bound a citation
        can state); a single-point record's value bounded from both sides; `present` for anything else
        (`absent` for a series served empty)."""
        served = self.served()
        out: list[Citation] = []
        if self.series and (points := self.dated()):
            trend = self.citation()
            if trend.fact != FactKind.PRESENT:
                out.append(trend)
            for fact in (FactKind.ABOVE, FactKind.BELOW):
                level, start, end = _extreme_run(points, fact)
                out.append(Citation(item=self.id, fact=fact, value=bound(level, fact), start=start, end=end))
        elif not self.series and self.value is not None:
            out += [
                Citation(item=self.id, fact=FactKind.ABOVE, value=bound(self.value, FactKind.ABOVE)),
                Citation(item=self.id, fact=FactKind.BELOW, value=bound(self.value, FactKind.BELOW)),
            ]
        held = [c for c in out if check_fact(c, served) is None][:MAX_CITATIONS_PER_CLAIM]
        return held or [self.citation()]

    def citation(self) -> Citation:
        """A fact that holds on the served points: the series' trend when it has one, `absent` for a series
        served without points, else `present`."""
        if self.series:
            values = self.values()
            if not values:
                return Citation(item=self.id, fact=FactKind.ABSENT)
            trend = trend_of(values)
            if trend is not None:
                cited = Citation(item=self.id, fact=trend)
                if check_fact(cited, self.served()) is None:
                    return cited
        return Citation(item=self.id)

    def anomaly(self) -> float:
        """How far the series' peak departs from its first third, in standard deviations of that third (0 for
        an item that is not a series of at least three points)."""
        values = self.values()
        if not self.series or len(values) < 3:
            return 0.0
        base = values[: max(2, len(values) // 3)]
        mean = fmean(base)
        spread = pstdev(base)
        peak = max(abs(v - mean) for v in values)
        # A perfectly flat baseline: scale by the level instead, so a step from a constant still ranks.
        scale = spread if spread > 1e-9 else max(abs(mean) * 0.01, 1e-6)
        z = peak / scale
        return z if math.isfinite(z) else 0.0


@dataclass(slots=True)
class Notebook:
    """Every item the run's results named, in the order first served, and what else the results said."""

    alert: dict[str, Any] = field(default_factory=dict)
    items: dict[str, Seen] = field(default_factory=dict)
    first_by_call: list[str] = field(default_factory=list)
    """The first item id of each call that named one, in call order."""
    records: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """Every dict a result held (tool, record), with or without an id: where call targets come from."""

    def read(self, tool: str, result: Any) -> None:
        """Take in one tool result."""
        first: list[str] = []
        for depth, record in _dicts(result):
            # A result's own records (`metrics[i]`, `pods[i]`), not what they nest (a pod's containers).
            if depth <= _RECORD_DEPTH:
                self.records.append((tool, record))
            self._take(tool, record, first)
        if first:
            self.first_by_call.append(first[0])

    def _take(self, tool: str, record: dict[str, Any], first: list[str]) -> None:
        ident = record.get("id")
        if isinstance(ident, str) and ITEM_ID.match(ident):
            scalars = {k: v for k, v in record.items() if not isinstance(v, list | dict) or k == "dimensions"}
            seen = self.items.setdefault(ident, Seen(ident, tool, scalars))
            if not seen.text:
                seen.text = " ".join(_strings({k: v for k, v in record.items() if k != "id"}))
            if seen.value is None:
                seen.value = point_of(seen.kind, record)
            values = record.get("values")
            if isinstance(values, list):
                seen.series = True
                times = record.get("timestamps")
                stamps = times if isinstance(times, list) and len(times) == len(values) else None
                for i, v in enumerate(values):
                    if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
                        seen.points[str(stamps[i]) if stamps is not None else f"{i:08d}"] = float(v)
            first.append(ident)
        ids, lines = record.get("ids"), record.get("lines")
        if isinstance(ids, list):
            texts = lines if isinstance(lines, list) and len(lines) == len(ids) else [None] * len(ids)
            for ref, line in zip(ids, texts, strict=True):
                if isinstance(ref, str) and ITEM_ID.match(ref):
                    fields = {"text": line} if isinstance(line, str) else {}
                    text = line if isinstance(line, str) else ""
                    self.items.setdefault(ref, Seen(ref, tool, {**fields, **_owner(record)}, text=text))
                    first.append(ref)

    def in_order(self) -> list[Seen]:
        return list(self.items.values())

    def ranked(self) -> list[Seen]:
        """Series by anomaly, most anomalous first, then every other item in the order served."""
        items = self.in_order()
        series = sorted((s for s in items if s.anomaly() > 0), key=lambda s: -s.anomaly())
        return [*series, *(s for s in items if s.anomaly() <= 0)]

    def spread(self) -> list[Seen]:
        """`ranked`, but the top item of each tool first: citations that cover every source the run read."""
        ranked = self.ranked()
        tops = list({s.tool: s for s in reversed(ranked)}.values())[::-1]
        top_ids = {s.id for s in tops}
        return [*sorted(tops, key=ranked.index), *(s for s in ranked if s.id not in top_ids)]

    def firsts(self) -> list[Seen]:
        """The first item of each result, in call order (each once)."""
        return [self.items[i] for i in dict.fromkeys(self.first_by_call)]

    def resources(self) -> list[str]:
        """Every resource the items named, most often named first (ties in the order seen)."""
        counts = Counter(r for s in self.items.values() for r in dict.fromkeys(s.resources()))
        order = {r: i for i, r in enumerate(counts)}
        return sorted(counts, key=lambda r: (-counts[r], order[r]))

    def likely_location(self) -> list[str]:
        """A cheap guess at where the fault is: the resources the alert names that the evidence named too (the
        longest first: a replica's name holds its source's), else the one the evidence names most."""
        text = self.alert_text()
        named = sorted((r for r in self.resources() if r in text), key=len, reverse=True)
        if named:
            return named[:1]
        return self.resources()[:1]

    def alert_text(self) -> str:
        """Every string of the alert, joined (title first)."""
        return " ".join(_strings(self.alert))

    def targets(self, prop: str, tool: str) -> list[str]:
        """Values a required argument `prop` of `tool` can take, from what earlier results said: a field of
        that name (`metric_name`), or the `name` of records from a tool about it (`pod` ← `list_pods`)."""
        out: dict[str, None] = {}
        for source, record in self.records:
            value = record.get(prop)
            if isinstance(value, str) and value:
                out[value] = None
            elif prop in source and source != tool and isinstance(name := record.get("name"), str) and name:
                out[name] = None
        return list(out)


def bound(value: float, fact: FactKind) -> float:
    """The strongest `above` (`below`) bound that `value` clears: just under (over) it, and still on the right
    side when written with `:g`'s six significant digits (the text format's)."""
    sign = -1.0 if fact == FactKind.ABOVE else 1.0
    for share in (1e-4, 1e-3, 1e-2, 1e-1):
        step = abs(value) * share or share
        candidate = float(f"{value + sign * step:g}")
        if (candidate < value) if fact == FactKind.ABOVE else (candidate > value):
            return candidate
    return value + sign * max(abs(value), 1.0)


def _extreme_run(
    points: Sequence[tuple[datetime | None, float]], fact: FactKind
) -> tuple[float, datetime | None, datetime | None]:
    """The run of `SUSTAINED` consecutive points (all, when fewer) whose least (for `above`; greatest for
    `below`) is the most extreme: that level and the run's first and last times (None, None when undated)."""
    n = min(SUSTAINED, len(points))
    runs = [points[i : i + n] for i in range(len(points) - n + 1)]
    if fact == FactKind.ABOVE:
        run = max(runs, key=lambda r: min(v for _, v in r))
        level = min(v for _, v in run)
    else:
        run = min(runs, key=lambda r: max(v for _, v in r))
        level = max(v for _, v in run)
    start, end = run[0][0], run[-1][0]
    return (level, start, end) if start is not None and end is not None else (level, None, None)


def _moment(stamp: str) -> datetime | None:
    """A served timestamp as a time (None for an index: a result that gave no times)."""
    try:
        return datetime.fromisoformat(stamp)
    except ValueError:
        return None


def _owner(record: Mapping[str, Any]) -> dict[str, Any]:
    """The pod (and container) a log answer is about: a log line's resource."""
    out = {k: v for k in ("pod", "container") if isinstance(v := record.get(k), str)}
    if "pod" in out:
        out["involved_object"] = out["pod"]
    return out


def _dicts(value: Any, depth: int = 0) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every dict in a JSON value, with its depth (the result itself 0, an entry of one of its lists 2)."""
    if isinstance(value, dict):
        yield depth, value
        for v in value.values():
            yield from _dicts(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _dicts(v, depth + 1)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _nullable(prop: Any) -> bool:
    if not isinstance(prop, Mapping):
        return False
    kind = prop.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_nullable(member) for member in prop.get("anyOf") or ())


def _required(schema: Mapping[str, Any]) -> list[str]:
    """The arguments a call must give: required and not nullable (a strict schema lists every argument as
    required, an optional one as accepting null)."""
    required = schema.get("required")
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    names = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
    return [n for n in names if not _nullable(props.get(n))]


async def _call(task: Task, notebook: Notebook, tool: str, args: dict[str, Any]) -> None:
    try:
        result = await task.call_tool(tool, **args)
    except ToolError:
        return  # recorded on the trajectory; a shortcut agent does not argue with a refusal
    notebook.read(tool, result)


async def investigate(task: Task, *, targets: int = 1, skip: Sequence[str] = ()) -> Notebook:
    """Read the alert, then call every evidence tool the task offers: once with no arguments, and a tool that
    needs an argument (a metric name, a pod) once per value earlier results named, up to `targets` of them.

    Args:
        task: the RCA task (tools bound).
        targets: how many values to try per required argument (1: a cheap agent's one call per tool).
        skip: tools not to call.
    """
    notebook = Notebook()
    names = [t.name for t in task.tools]
    if "get_alert" in names:
        try:
            alert = await task.call_tool("get_alert")
        except ToolError:
            alert = None
        notebook.alert = alert if isinstance(alert, dict) else dict(task.alert or {})
    else:
        notebook.alert = dict(task.alert or {})
    tools = [t for t in task.tools if t.name not in _NOT_EVIDENCE and t.name not in skip]
    later = []
    for spec in tools:
        if _required(spec.input_schema):
            later.append(spec)
        else:
            await _call(task, notebook, spec.name, {})
    for spec in later:
        required = _required(spec.input_schema)
        prop = required[0]
        for value in notebook.targets(prop, spec.name)[:targets]:
            if len(required) == 1:
                await _call(task, notebook, spec.name, {prop: value})
    return notebook
