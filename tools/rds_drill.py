"""The drill model behind `gen_rds_pack.py`: instances, timelines and how a scenario's files are rendered.

`gen_rds_pack.py` writes `scenario.yml`, `alert.json`, the CloudWatch metrics, `aws_rds_events.json`,
`aws_performance_insights.json` and `aws_rds_postgresql_log.json` of every scenario. `answer.yml` and `pack.yml`
are written by hand (the answer keys came first) and are never touched here. The committed files are the source
of truth; this script documents how they were made and reproduces them byte for byte: every scenario draws its
noise from its own `random.Random` seeded with the folder name (and the PostgreSQL log from a second one, so the
log never changes the metrics drawn before it).

The scenarios themselves (instances, timelines, alerts, events, top SQL) live in `rds_pack_scenarios*.py`, which
import this module; `gen_rds_pack.py` imports both (no module imports one that imports it back).
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

from sredrill.domains.rds import cloudwatch_units

PACK = Path(__file__).resolve().parents[1] / "src" / "sredrill" / "scenarios" / "packs" / "rds_postgres"
GB = 1000**3  # the RDS console and its events count storage in GB; CloudWatch reports bytes
GIB = 1024**3
MB = 1000**2

# vCPUs and memory (GiB) of the instance classes the pack uses.
CLASSES = {
    "db.m6g.large": (2, 8),
    "db.m6g.xlarge": (4, 16),
    "db.m6g.2xlarge": (8, 32),
    "db.r6g.large": (2, 16),
    "db.r6g.xlarge": (4, 32),
    "db.r6g.2xlarge": (8, 64),
    "db.r6g.4xlarge": (16, 128),
}
_ROUND = {"Percent": 2, "Count": 2, "Count/Second": 2, "Seconds": 6, "Bytes": 0, "Bytes/Second": 0, "None": 3}


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


@dataclass
class Instance:
    name: str
    klass: str
    region: str
    storage_gb: int
    storage_type: str = "gp3"
    replica: str | None = None
    max_connections: int | None = None

    @property
    def vcpu(self) -> int:
        return CLASSES[self.klass][0]

    @property
    def memory(self) -> int:
        return CLASSES[self.klass][1] * GIB

    @property
    def connection_limit(self) -> int:
        # RDS default: LEAST(DBInstanceClassMemory / 9531392, 5000)
        return self.max_connections or min(int(self.memory * 0.95 / 9531392), 5000)


@dataclass
class Drill:
    """One scenario under construction: its timeline, series, events, alert and Performance Insights."""

    folder: str
    start: datetime
    minutes: int
    db: Instance
    difficulty: int
    severity: str
    failure_mode: str
    adversarial: list[str] = field(default_factory=list)
    split_metrics: bool = False
    series: list[dict] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    events_window: tuple[datetime, datetime] | None = None
    alert: dict = field(default_factory=dict)
    insights: dict = field(default_factory=dict)
    log: list[dict] = field(default_factory=list)
    checkpoint_storm: tuple[float, float, float] | None = None
    """(from minute, to minute, seconds between checkpoints): WAL-triggered checkpoints in the log."""
    offline: list[tuple[float, float]] = field(default_factory=list)
    """(from minute, to minute) spans the server is down: no routine log lines then."""

    def __post_init__(self) -> None:
        self.rng = random.Random(f"sredrill/rds_postgres/{self.folder}")
        self.log_rng = random.Random(f"sredrill/rds_postgres/{self.folder}/postgresql.log")

    # -- time ---------------------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.minutes

    def at(self, minute: float) -> datetime:
        return self.start + timedelta(minutes=minute)

    @property
    def timestamps(self) -> list[str]:
        return [iso(self.at(i)) for i in range(self.n)]

    # -- shapes -------------------------------------------------------------------------------------------
    def curve(self, *points: tuple[float, float], noise: float = 0.03, lo: float = 0.0, hi: float | None = None):
        """Piecewise-linear through (minute, value) keyframes, with multiplicative Gaussian noise."""
        out = []
        for i in range(self.n):
            if i <= points[0][0]:
                v = points[0][1]
            elif i >= points[-1][0]:
                v = points[-1][1]
            else:
                (m0, v0), (m1, v1) = next((a, b) for a, b in itertools.pairwise(points) if a[0] <= i <= b[0])
                v = v0 + (v1 - v0) * (i - m0) / (m1 - m0)
            v *= 1 + self.rng.gauss(0, noise)
            out.append(min(max(v, lo), hi) if hi is not None else max(v, lo))
        return out

    def flat(self, level: float, noise: float = 0.03, **kw):
        return self.curve((0, level), noise=noise, **kw)

    def wave(self, mean: float, amp: float, period: float, *, phase: float = 0, noise: float = 0.03):
        return [
            (mean + amp * math.sin(2 * math.pi * (i + phase) / period)) * (1 + self.rng.gauss(0, noise))
            for i in range(self.n)
        ]

    def checkpoint_lag(self, interval_s: float = 300, storm: tuple[int, int, float] | None = None):
        """Seconds since the last checkpoint, sampled each minute; `storm` = (from, to, interval) minutes."""
        out, since = [], self.rng.uniform(0, interval_s)
        for i in range(self.n):
            every = storm[2] if storm and storm[0] <= i < storm[1] else interval_s
            since += 60
            while since >= every:
                since -= every * self.rng.uniform(0.85, 1.0)
            out.append(max(since + self.rng.uniform(-4, 4), 1.0))
        return out

    @staticmethod
    def scaled(values: list[float], factor: float) -> list[float]:
        return [v * factor for v in values]

    # -- content ------------------------------------------------------------------------------------------
    def metric(self, name: str, values: list[float], *, stat: str = "Average", unit: str | None = None,
               dims: str | None = None) -> None:  # fmt: skip
        unit = unit or cloudwatch_units(name)[0]
        suffix = "" if stat == "Average" else "_" + stat.lower()
        snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]{2})", "_", name).lower().replace("%", "_pct")
        digits = _ROUND[unit]
        self.series.append(
            {
                "id": f"m_{snake}{suffix}".replace("__", "_"),
                "label": name,
                "metric_name": name,
                "dimensions": [{"Name": "DBInstanceIdentifier", "Value": dims or self.db.name}],
                "stat": stat,
                "unit": unit,
                "status_code": "Complete",
                "timestamps": self.timestamps,
                "values": [round(v) if digits == 0 else round(v, digits) for v in values],
            }
        )

    def event(self, minute: float, message: str, categories: list[str], source: str | None = None,
              source_type: str = "db-instance") -> None:  # fmt: skip
        self.events.append(
            {
                "date": iso(self.at(minute).replace(microsecond=0)),
                "message": message,
                "source_identifier": source or self.db.name,
                "source_type": source_type,
                "event_categories": categories,
            }
        )

    @property
    def database(self) -> str:
        """The application database: the instance name's first word (`ledger-pg-prod` -> `ledger`)."""
        return self.db.name.split("-")[0]

    def log_line(self, minute: float, level: str, message: str, *, user: str = "", database: str | None = None,
                 client: str = "", pid: int | None = None) -> None:  # fmt: skip
        """One PostgreSQL log record; a client backend's (with `user`) gets this database unless told."""
        if database is None:
            database = self.database if user else ""
        self.log.append(
            {
                "timestamp": iso(self.at(minute).replace(microsecond=0)),
                "level": level,
                "pid": pid if pid is not None else self.log_rng.randint(20_000, 64_000),
                "user": user,
                "database": database,
                "client": client,
                "message": message,
            }
        )

    def client(self) -> tuple[str, str]:
        """A (user, host(port)) of the application, from Performance Insights' top users and hosts."""
        users = [u["name"] for u in self.insights.get("top_users", []) if u["name"] != "rdsadmin"] or ["app"]
        hosts = [h["id"] for h in self.insights.get("top_hosts", [])] or ["10.0.0.10"]
        host = self.log_rng.choice(hosts)
        return self.log_rng.choice(users), f"{host}({self.log_rng.randint(32_768, 60_999)})"

    def value_at(self, metric: str, minute: int) -> float:
        series = next(s for s in self.series if s["metric_name"] == metric)
        return series["values"][minute]

    def set_alert(self, *, title: str, alertname: str, metric: str, threshold: float, comparison: str,
                  minute: int, summary: str, description: str, state: str = "alerting",
                  dims: str | None = None, stat: str = "Average", team: str = "platform-db",
                  extra: dict[str, str] | None = None) -> None:  # fmt: skip
        """A CloudWatch alarm routed through Grafana; `current_value` is read from the series at `minute`."""
        target = dims or self.db.name
        series = next(
            s
            for s in self.series
            if s["metric_name"] == metric and s["stat"] == stat and s["dimensions"][0]["Value"] == target
        )
        value = series["values"][minute]
        breached = value > threshold if comparison == "GreaterThanThreshold" else value < threshold
        if breached != (state == "alerting"):
            raise ValueError(f"{self.folder}: {metric}={value} at minute {minute} vs {comparison} {threshold}")
        annotations = {
            "summary": summary,
            "description": description,
            "db_instance_identifier": self.db.name,
            "metric_name": metric,
            "statistic": stat,
            "threshold": _number(threshold),
            "comparison": comparison,
            "current_value": _number(value),
            "cloudwatch_region": self.db.region,
        }
        if self.db.replica:
            annotations["read_replica"] = self.db.replica
        annotations.update(extra or {})
        self.alert = {
            "title": title,
            "state": state,
            "alert_source": "cloudwatch",
            "startsAt": iso(self.at(minute)),
            "commonLabels": {
                "alertname": alertname,
                "severity": self.severity,
                "service": "rds",
                "engine": "postgres",
                "team": team,
                "region": self.db.region,
            },
            "commonAnnotations": annotations,
        }

    def set_insights(self, load: list[float], top_sql: list[tuple[str, float, dict[str, float], float]],
                     users: dict[str, float], hosts: dict[str, float],
                     other_waits: dict[str, float] | None = None) -> None:  # fmt: skip
        """PI data; top_sql items are (statement, share of load, {wait: share of the statement}, calls/s).

        Shares are fractions of the mean load, so the top waits, users and hosts add up like real PI output.
        """
        mean = sum(load) / len(load)
        sql, waits = [], dict.fromkeys((other_waits or {}), 0.0)
        for statement, share, stmt_waits, calls in top_sql:
            stmt_load = mean * share
            items = [
                {"name": w, "type": w.split(":")[0], "db_load_avg": round(stmt_load * s, 2)}
                for w, s in stmt_waits.items()
            ]
            for w, s in stmt_waits.items():
                waits[w] = waits.get(w, 0.0) + stmt_load * s
            sql.append({"statement": statement, "db_load_avg": round(stmt_load, 2), "wait_events": items,
                        "calls_per_sec": calls})  # fmt: skip
        for w, s in (other_waits or {}).items():
            waits[w] += mean * s
        self.insights = {
            "db_instance_identifier": self.db.name,
            "start_time": iso(self.start),
            "end_time": iso(self.at(self.n)),
            "db_load": {
                "timestamps": self.timestamps,
                "values": [round(v, 2) for v in load],
                "unit": "Average Active Sessions",
            },
            "top_sql": sql,
            "top_wait_events": [
                {"name": w, "type": w.split(":")[0], "db_load_avg": round(v, 2)}
                for w, v in sorted(waits.items(), key=lambda kv: -kv[1])
            ],
            "top_users": [{"name": u, "db_load_avg": round(mean * s, 2)} for u, s in users.items()],
            "top_hosts": [{"id": h, "db_load_avg": round(mean * s, 2)} for h, s in hosts.items()],
        }

    # -- output -------------------------------------------------------------------------------------------
    def files(self) -> dict[str, str]:
        """File name -> content, exactly as committed."""
        self.rng.shuffle(self.series)  # series order varies, so no metric is always first
        self.routine_log()
        meta = {
            "schema_version": "1.0",
            "scenario_id": self.folder,
            "engine": "postgres",
            "engine_version": "16.4",
            "instance_class": self.db.klass,
            "region": self.db.region,
            "db_instance_identifier": self.db.name,
            "db_cluster": "",
            "failure_mode": self.failure_mode,
            "severity": self.severity,
            "scenario_difficulty": self.difficulty,
            "adversarial_signals": self.adversarial,
            "available_evidence": [
                "aws_cloudwatch_metrics",
                "aws_rds_events",
                "aws_performance_insights",
                "aws_rds_postgresql_log",
            ],
        }
        envelope = {
            "namespace": "AWS/RDS",
            "period": 60,
            "start_time": iso(self.start),
            "end_time": iso(self.at(self.n)),
        }
        out = {
            "scenario.yml": yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=110),
            "alert.json": _json(self.alert),
            "aws_performance_insights.json": _json(self.insights),
        }
        events: dict[str, object] = {"events": sorted(self.events, key=lambda e: e["date"])}
        if self.events_window:
            events = {"start_time": iso(self.events_window[0]), "end_time": iso(self.events_window[1]), **events}
        out["aws_rds_events.json"] = _json(events)
        out["aws_rds_postgresql_log.json"] = _json(
            {
                "db_instance_identifier": self.db.name,
                "log_file": f"error/postgresql.log.{self.start:%Y-%m-%d-%H}",
                "start_time": iso(self.start),
                "end_time": iso(self.at(self.n)),
                "records": sorted(self.log, key=lambda r: r["timestamp"]),
            }
        )
        if self.split_metrics:
            out["aws_cloudwatch_metrics_envelope.json"] = _json(envelope)
            for s in self.series:
                stat = "" if s["stat"] == "Average" else "_" + s["stat"]
                out[f"aws_cloudwatch_metrics_{s['metric_name']}{stat}.json"] = _json(s)
        else:
            out["aws_cloudwatch_metrics.json"] = _json({**envelope, "metric_data_results": self.series})
        return out

    # -- the PostgreSQL log's routine lines ---------------------------------------------------------------
    def routine_log(self) -> None:
        """What every instance logs whatever happens: sessions coming and going, RDS's own monitoring
        connections, timed checkpoints (WAL-triggered ones during `checkpoint_storm`), autovacuum and
        autoanalyze of the busy tables. A haystack: no line of it tells one incident from another."""
        r, end = self.log_rng, self.n - 0.02
        tables = _tables(self)
        # Client sessions: a few connect and disconnect every minute.
        for minute in range(self.n):
            for _ in range(r.randint(1, 3)):
                user, client = self.client()
                at, pid = minute + r.uniform(0, 0.97), r.randint(20_000, 64_000)
                self._routine(at, "LOG", f"connection authorized: user={user} database={self.database} "
                              "SSL enabled (protocol=TLSv1.3, cipher=TLS_AES_256_GCM_SHA384, bits=256)",
                              user=user, client=client, pid=pid)  # fmt: skip
                held = r.uniform(0.05, 2.5)
                if at + held < end:
                    secs = held * 60
                    host, port = client[:-1].split("(")
                    self._routine(at + held, "LOG", f"disconnection: session time: 0:{int(secs // 60):02d}:"
                                  f"{secs % 60:06.3f} user={user} database={self.database} host={host} port={port}",
                                  user=user, client=client, pid=pid)  # fmt: skip
        # RDS's monitoring agent connects every few minutes.
        at = r.uniform(0.5, 2.5)
        while at < end:
            self._routine(at, "LOG", "connection authorized: user=rdsadmin database=rdsadmin application_name=rdsmon",
                          user="rdsadmin", database="rdsadmin", client="[local]")  # fmt: skip
            at += r.uniform(2.5, 4.5)
        self._checkpoints(end)
        # Autovacuum and autoanalyze of the tables the workload touches.
        at = r.uniform(1.0, 5.0)
        while at < end and tables:
            table = r.choice(tables)
            if r.random() < 0.5:
                removed, kept = r.randint(800, 40_000), r.randint(200_000, 9_000_000)
                self._routine(at, "LOG", f'automatic vacuum of table "{self.database}.{table}": index scans: 1, '
                              f"pages: 0 removed, {kept // 60} remain, tuples: {removed} removed, {kept} remain, "
                              f"0 are dead but not yet removable; avg read rate: {r.uniform(0.5, 9):.3f} MB/s, "
                              f"avg write rate: {r.uniform(0.5, 6):.3f} MB/s; "
                              f"elapsed: {r.uniform(0.4, 9):.2f} s")  # fmt: skip
            else:
                self._routine(at, "LOG", f'automatic analyze of table "{self.database}.{table}": '
                              f"avg read rate: {r.uniform(5, 60):.3f} MB/s, "
                              f"avg write rate: {r.uniform(0, 1):.3f} MB/s; "
                              f"elapsed: {r.uniform(0.2, 3):.2f} s")  # fmt: skip
            at += r.uniform(3.0, 8.0)

    def _routine(self, minute: float, level: str, message: str, **kw: object) -> None:
        if not any(lo <= minute < hi for lo, hi in self.offline):
            self.log_line(minute, level, message, **kw)  # type: ignore[arg-type]

    def _checkpoints(self, end: float) -> None:
        r, pid = self.log_rng, 412
        storm = self.checkpoint_storm
        at, last = r.uniform(0.2, 4.8), None
        while at < end:
            in_storm = storm is not None and storm[0] <= at < storm[1]
            reason = "wal" if in_storm else "time"
            self._routine(at, "LOG", f"checkpoint starting: {reason}", pid=pid)
            # The pack's parameter groups set checkpoint_warning to 60 s (PostgreSQL's default is 30 s).
            if in_storm and last is not None and (at - last) * 60 < 60:
                self._routine(at, "LOG", f"checkpoints are occurring too frequently ({round((at - last) * 60)} "
                              "seconds apart)", pid=pid)  # fmt: skip
                self._routine(at, "HINT", 'Consider increasing the configuration parameter "max_wal_size".', pid=pid)
            took = (storm[2] * r.uniform(0.75, 0.95) if in_storm and storm else r.uniform(150, 270)) / 60
            if storm is not None and at < storm[0] < at + took:  # the storm's first WAL request hurries it
                took = storm[0] - at + r.uniform(0.01, 0.04)
            if at + took < end:
                buffers = r.randint(40_000, 160_000) if in_storm else r.randint(900, 6_000)
                self._routine(at + took, "LOG", f"checkpoint complete: wrote {buffers} buffers "
                              f"({buffers / 10_485:.1f}%); 0 WAL file(s) added, {r.randint(0, 3)} removed, "
                              f"{r.randint(0, 40) if in_storm else r.randint(0, 2)} recycled; "
                              f"write={took * 60:.3f} s, sync={r.uniform(0.001, 0.4):.3f} s, "
                              f"total={took * 60 + 0.4:.3f} s", pid=pid)  # fmt: skip
            last = at
            at += (storm[2] if in_storm and storm else 300) / 60 * r.uniform(0.97, 1.03)
            if storm is not None and not in_storm and at > storm[0] and last < storm[0]:
                at = storm[0] + r.uniform(0.05, 0.3)


def _tables(d: Drill) -> list[str]:
    """The tables the top SQL touches (`public.<name>`), in first-seen order."""
    names: dict[str, None] = {}
    for q in d.insights.get("top_sql", []):
        for name in re.findall(r"\b(?:FROM|INTO|UPDATE|JOIN)\s+(?:public\.)?([a-z_][a-z0-9_]*)", q["statement"]):
            if name not in {"stdin"}:
                names[f"public.{name}"] = None
    return list(names)


def _number(value: float) -> str:
    return f"{value:.10g}"


def _json(data: object) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def standard(d: Drill, **over: list[float] | None) -> None:
    """The metrics an RDS PostgreSQL instance publishes, at a quiet baseline; `over` replaces (or, with
    None, omits) a metric's values. Throughput, queue depth and network follow from IOPS, latency and WAL."""
    db = d.db
    v: dict[str, list[float] | None] = {
        "CPUUtilization": d.flat(14, 0.08),
        "DatabaseConnections": d.flat(db.connection_limit * 0.08, 0.03),
        "FreeableMemory": d.flat(db.memory * 0.52, 0.01),
        "FreeStorageSpace": d.flat(db.storage_gb * GB * 0.62, 0.0005),
        "ReadIOPS": d.flat(950, 0.07),
        "WriteIOPS": d.flat(620, 0.07),
        "ReadLatency": d.flat(0.0009, 0.08),
        "WriteLatency": d.flat(0.0014, 0.08),
        "TransactionLogsGeneration": d.flat(2.2 * MB, 0.1),
        "TransactionLogsDiskUsage": d.flat(1.1 * GB, 0.02),
        "SwapUsage": d.flat(3.2 * MB, 0.0),
        "MaximumUsedTransactionIDs": d.curve((0, 212_000_000), (d.n, 212_000_000 + 9_000 * d.n), noise=0.0),
        "CheckpointLag": d.checkpoint_lag(),
    }
    if db.replica:
        v["ReplicaLag"] = d.flat(0.6, 0.4, lo=0.0)
        v["OldestReplicationSlotLag"] = d.flat(24 * MB, 0.3)
    if db.storage_type == "gp2":
        v["BurstBalance"] = d.flat(99.0, 0.002, hi=100.0)
    derived = {"ReadThroughput", "WriteThroughput", "DiskQueueDepth", "NetworkReceiveThroughput",
               "NetworkTransmitThroughput"}  # fmt: skip
    v.update({k: x for k, x in over.items() if k not in derived})
    for name, values in v.items():
        if values is not None and name != "ReplicaLag":
            d.metric(name, values)
    ri, wi = v["ReadIOPS"] or [0.0] * d.n, v["WriteIOPS"] or [0.0] * d.n
    rl, wl = v["ReadLatency"] or [0.0009] * d.n, v["WriteLatency"] or [0.0014] * d.n
    wal, conns = v["TransactionLogsGeneration"] or d.flat(2.2 * MB), v["DatabaseConnections"] or d.flat(100)
    made = {
        "ReadThroughput": [x * 16384 * d.rng.uniform(0.9, 1.1) for x in ri],
        "WriteThroughput": [x * 24576 * d.rng.uniform(0.9, 1.1) for x in wi],
        # Little's law: outstanding I/Os = IOPS x latency.
        "DiskQueueDepth": [
            (r * a + w * b) * d.rng.uniform(0.9, 1.15) for r, a, w, b in zip(ri, rl, wi, wl, strict=True)
        ],
        "NetworkReceiveThroughput": [2.5 * MB + c * 9_000 + w * 0.3 for c, w in zip(conns, wal, strict=True)],
        "NetworkTransmitThroughput": [
            4 * MB + c * 21_000 + (w if db.replica else 0) for c, w in zip(conns, wal, strict=True)
        ],
    }
    for name, values in made.items():
        values = over.get(name, values)
        if values is not None:
            d.metric(name, values)
    if v.get("ReplicaLag") is not None and db.replica:
        d.metric("ReplicaLag", v["ReplicaLag"], dims=db.replica)
