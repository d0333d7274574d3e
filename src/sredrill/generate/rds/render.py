"""Writing a built scenario as the pack format's files: byte-stable JSON (sorted keys, fixed separators, a
final newline) and YAML (sorted keys), floats rounded per unit."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import yaml

from .catalog import metric_def
from .world import MINUTES, World

__all__ = ["dump_json", "dump_yaml", "iso", "render_evidence"]

_WAIT_TYPES = {"CPU": "CPU", "IO": "IO", "LWLock": "LWLock", "Client": "Client", "Lock": "Lock", "IPC": "IPC"}


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def dump_json(obj: Any) -> bytes:
    return (json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (a `model_response`) as literal blocks, as the hand-written keys write them."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _text)


def dump_yaml(obj: Any) -> bytes:
    text: str = yaml.dump(
        obj, Dumper=_Dumper, sort_keys=True, allow_unicode=True, width=1_000_000, default_flow_style=None
    )
    return text.encode()


def _num(x: float, places: int) -> float | int:
    return round(x) if places == 0 else round(x, places)


def _rounded(values: list[float], places: int) -> list[Any]:
    """Every value rounded to `places` (integers at 0), never below 0 (no RDS metric is negative)."""
    if places == 0:
        return [round(x) if x > 0 else 0 for x in values]
    return [round(x, places) if x > 0 else 0.0 for x in values]


def _spread(
    avg: list[Any], k: float, places: int, top: float, rand: Callable[[], float]
) -> tuple[list[Any], list[Any]]:
    """`Maximum` and `Minimum` around the (rounded, non-negative) averages: within `k` of each, relative,
    `Maximum` at most `top` unless the average is above it. Rounding is monotonic, so Min <= Avg <= Max holds."""
    if k == 0:
        return avg, avg
    digits = None if places == 0 else places
    hi = [h if (h := round(a * (1 + k * rand()), digits)) <= top else (top if top > a else a) for a in avg]
    lo = [round(a * (1 - k * rand()), digits) for a in avg]
    return hi, lo


def render_evidence(w: World, rng: random.Random) -> dict[str, bytes]:
    """The four evidence files of the world."""
    stamps = [iso(w.start + timedelta(minutes=t)) for t in range(MINUTES)]
    end = iso(w.start + timedelta(minutes=MINUTES))
    return {
        "aws_cloudwatch_metrics.json": dump_json(_metrics(w, rng, stamps, end)),
        "aws_rds_events.json": dump_json(_events(w)),
        "aws_performance_insights.json": dump_json(_insights(w, stamps, end)),
        "aws_rds_postgresql_log.json": dump_json(_log(w, stamps[0], end)),
    }


def _metrics(w: World, rng: random.Random, stamps: list[str], end: str) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    rand = rng.random
    for inst in w.fleet.instances:
        for m in inst.metrics:
            if m.name in w.missing:
                continue
            places, unit, spread = m.decimals, m.unit, m.spread
            avg = _rounded(w.series(inst, m.name), places)
            cap = w.caps.get((inst.name, m.name))
            top = 100.0 if unit == "Percent" else float("inf")
            if cap is not None:
                top = min(top, cap)
            hi, lo = _spread(avg, spread * 2.5, places, top, rand)
            stats: list[tuple[str, list[Any]]] = [("Average", avg), ("Maximum", hi), ("Minimum", lo)]
            if m.p99:
                stats.append(("p99", [_num(a + 0.8 * (h - a), places) for a, h in zip(avg, hi, strict=True)]))
            for stat, values in stats:
                results.append(
                    {
                        "id": f"m{len(results) + 1}",
                        "label": m.name,
                        "metric_name": m.name,
                        "dimensions": [{"Name": "DBInstanceIdentifier", "Value": inst.name}],
                        "stat": stat,
                        "unit": unit,
                        "status_code": "Complete",
                        "timestamps": stamps,
                        "values": values,
                    }
                )
    return {
        "namespace": "AWS/RDS",
        "period": 60,
        "start_time": stamps[0],
        "end_time": end,
        "metric_data_results": results,
    }


def _events(w: World) -> dict[str, Any]:
    ordered = sorted(
        (e for e in w.events if 0 <= e.second < MINUTES * 60), key=lambda e: (e.second, e.source, e.message)
    )
    return {
        "events": [
            {
                "date": iso(w.start + timedelta(seconds=e.second)),
                "message": e.message,
                "source_identifier": e.source,
                "source_type": "db-instance",
                "event_categories": list(e.categories),
            }
            for e in ordered
        ]
    }


def _insights(w: World, stamps: list[str], end: str) -> dict[str, Any]:
    p = w.fleet.primary
    load = [round(x, 2) for x in w.series(p, "DBLoad")]
    ranked = sorted(w.statements, key=lambda s: (-s.load, s.sql))[:10]
    waits: dict[str, float] = {}
    users: dict[str, float] = {}
    hosts: dict[str, float] = {}
    top_sql = []
    for s in ranked:
        total = sum(share for _, share in s.waits) or 1.0
        events = []
        for name, share in sorted(s.waits, key=lambda x: (-x[1], x[0])):
            value = s.load * share / total
            waits[name] = waits.get(name, 0.0) + value
            events.append(
                {"name": name, "type": _WAIT_TYPES.get(name.split(":")[0], "Other"), "db_load_avg": round(value, 2)}
            )
        users[s.user] = users.get(s.user, 0.0) + s.load
        hosts[s.host] = hosts.get(s.host, 0.0) + s.load
        top_sql.append(
            {
                "statement": s.sql,
                "db_load_avg": round(s.load, 2),
                "wait_events": events,
                "calls_per_sec": round(s.calls, 2),
            }
        )

    def top(d: dict[str, float], key: str) -> list[dict[str, Any]]:
        return [{key: k, "db_load_avg": round(v, 2)} for k, v in sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))]

    return {
        "db_instance_identifier": p.name,
        "start_time": stamps[0],
        "end_time": end,
        "db_load": {"timestamps": stamps, "values": load, "unit": "Average Active Sessions"},
        "top_sql": top_sql,
        "top_wait_events": [
            {"name": k, "type": _WAIT_TYPES.get(k.split(":")[0], "Other"), "db_load_avg": round(v, 2)}
            for k, v in sorted(waits.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
        "top_users": top(users, "name"),
        "top_hosts": top(hosts, "id"),
    }


def _log(w: World, start: str, end: str) -> dict[str, Any]:
    p = w.fleet.primary
    ordered = sorted(
        (r for r in enumerate(w.log) if 0 <= r[1].second < MINUTES * 60), key=lambda r: (r[1].second, r[0])
    )
    records = []
    for _, r in ordered:
        record: dict[str, Any] = {
            "timestamp": iso(w.start + timedelta(seconds=r.second)),
            "level": r.level,
            "message": r.message,
        }
        if r.pid is not None:
            record["pid"] = r.pid
        for key, value in (("user", r.user), ("database", r.database), ("client", r.client)):
            if value:
                record[key] = value
        records.append(record)
    return {
        "db_instance_identifier": p.name,
        "log_file": f"error/postgresql.log.{w.start.strftime('%Y-%m-%d-%H')}",
        "start_time": start,
        "end_time": end,
        "records": records,
    }


def metric_unit(name: str) -> str:
    return metric_def(name).unit
