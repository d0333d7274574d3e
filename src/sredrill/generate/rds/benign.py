"""The healthy haystack: every instance's traces, benign RDS events, the primary's workload in Performance
Insights and its routine PostgreSQL log, and decoys that never reach harm (swap creep, transaction-ID age)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from .fleet import Fleet, Instance, Role
from .series import Shape, baseline_traces, profile
from .world import MINUTES, Event, LogLine, Statement, World

__all__ = ["build_world", "client", "heavy_reader", "sql_of"]

_EPOCH = datetime(2026, 1, 5, tzinfo=UTC)


def client(rng: random.Random, subnet: int) -> str:
    """A client host and port as `%r` prints it."""
    return f"10.{subnet}.{rng.randrange(1, 8)}.{rng.randrange(10, 250)}({rng.randrange(32768, 61000)})"


def sql_of(inst: Instance, rng: random.Random) -> list[tuple[str, str]]:
    """The application's everyday statements (parameterised) and the user each runs as."""
    app = inst.app
    a, b, c, d = app.tables
    svc, worker = f"{app.name}_svc", f"{app.name}_worker"
    k = app.key
    out = [
        (f"SELECT * FROM {a} WHERE {k} = $1 ORDER BY created_at DESC LIMIT $2", svc),
        (f"SELECT id, status, updated_at FROM {b} WHERE {a[:-1]}_id = $1", svc),
        (f"INSERT INTO {b} ({a[:-1]}_id, {k}, amount, created_at) VALUES ($1, $2, $3, now())", svc),
        (f"UPDATE {a} SET status = $1, updated_at = now() WHERE id = $2", svc),
        (f"SELECT count(*) FROM {c} WHERE {k} = $1 AND created_at > $2", worker),
        (f"UPDATE {d} SET value = value + $1 WHERE {k} = $2", worker),
        (f"DELETE FROM {c} WHERE expires_at < now() - interval '7 days'", worker),
        (f"SELECT {k}, sum(amount) FROM {b} WHERE created_at >= $1 GROUP BY {k}", svc),
        (
            f"INSERT INTO {d} ({k}, value, updated_at) VALUES ($1, $2, now()) ON CONFLICT ({k}) DO UPDATE "
            "SET value = EXCLUDED.value",
            worker,
        ),
    ]
    return rng.sample(out, rng.randrange(6, 10))


_WAITS = (
    ("CPU", 0.55),
    ("IO:DataFileRead", 0.25),
    ("Client:ClientRead", 0.1),
    ("LWLock:BufferMapping", 0.05),
    ("IO:WALWrite", 0.05),
)


def build_world(rng: random.Random, fleet: Fleet) -> World:
    """The fleet healthy over the window, with its benign events, workload and log."""
    start = _EPOCH + timedelta(days=rng.randrange(0, 330), hours=rng.randrange(0, 24))
    alert_at = rng.randrange(130, 171)
    traces = {i.name: baseline_traces(rng, i, MINUTES, start.hour) for i in fleet.instances}
    world = World(fleet=fleet, start=start, alert_at=alert_at, traces=traces)
    for inst in fleet.instances:
        _benign_events(rng, world, inst)
    _workload(rng, world)
    _routine_log(rng, world)
    _decoys(rng, world)
    return world


def _benign_events(rng: random.Random, w: World, inst: Instance) -> None:
    name = inst.name
    if rng.random() < 0.6:
        at = rng.randrange(0, MINUTES * 60 - 3000)
        took = rng.randrange(300, 1800)
        w.events.append(Event(at, "Backing up DB instance", name, ("backup",)))
        w.events.append(
            Event(
                at + took, rng.choice(("Finished DB Instance backup", "Finished DB instance backup")), name, ("backup",)
            )
        )
        prof = [1.0 if at // 60 <= t <= (at + took) // 60 else 0.0 for t in range(MINUTES)]
        w.mul(inst, "ReadIOPS", prof, rng.uniform(1.1, 1.4))
    if rng.random() < 0.35:
        w.events.append(
            Event(
                rng.randrange(0, MINUTES * 60),
                rng.choice(
                    (
                        "A new minor version is available for this DB instance; it will be applied in the next "
                        "maintenance "
                        "window",
                        "Operating system update is available for this DB instance",
                        "A pending maintenance action is scheduled for this DB instance in its next maintenance window",
                    )
                ),
                name,
                ("maintenance", "notification"),
            )
        )
    if rng.random() < 0.3:
        param = rng.choice(("work_mem", "log_min_duration_statement", "statement_timeout", "idle_session_timeout"))
        w.events.append(
            Event(
                rng.randrange(0, MINUTES * 60),
                f"Updated parameter {param} to "
                f"{rng.choice(('16384', '2000', '30000', '600000'))} with apply method immediate",
                name,
                ("configuration change",),
            )
        )
    if inst.role is Role.OTHER and rng.random() < 0.3:
        at = rng.randrange(0, MINUTES * 60 - 1200)
        what = rng.choice(("DB instance class", "allocated storage"))
        w.events.append(Event(at, f"Applying modification to {what}", name, ("configuration change",)))
        w.events.append(
            Event(
                at + rng.randrange(300, 1100),
                f"Finished applying modification to {what}",
                name,
                ("configuration change",),
            )
        )
    if rng.random() < 0.25:
        w.events.append(
            Event(
                rng.randrange(0, MINUTES * 60),
                rng.choice(
                    ("Creating manual snapshot", "Manual snapshot created", "Automated snapshot export task completed")
                ),
                name,
                ("backup",),
            )
        )


def _workload(rng: random.Random, w: World) -> None:
    p = w.fleet.primary
    load = sum(w.series(p, "DBLoad")) / MINUTES
    statements = sql_of(p, rng)
    shares = [rng.uniform(0.3, 1.0) for _ in statements]
    total = sum(shares)
    subnet = rng.randrange(20, 200)
    hosts = {u: f"10.{subnet}.{rng.randrange(1, 8)}.{rng.randrange(10, 250)}" for _, u in statements}
    for (sql, user), share in zip(statements, shares, strict=True):
        waits = tuple((n, s * rng.uniform(0.6, 1.4)) for n, s in _WAITS)
        w.statements.append(Statement(sql, user, hosts[user], load * share / total, waits, rng.uniform(5, 900)))


def _routine_log(rng: random.Random, w: World) -> None:
    p = w.fleet.primary
    db = p.app.database
    users = sorted({s.user for s in w.statements})
    subnet = rng.randrange(20, 200)
    t = rng.randrange(0, 120)
    while t < MINUTES * 60:
        user = rng.choice(users)
        host = client(rng, subnet)
        pid = rng.randrange(10000, 65000)
        w.log.append(
            LogLine(
                t,
                "LOG",
                f"connection authorized: user={user} database={db} SSL enabled "
                "(protocol=TLSv1.3, cipher=TLS_AES_256_GCM_SHA384, bits=256)",
                user,
                db,
                host,
                pid,
            )
        )
        held = rng.randrange(5, 900)
        if t + held < MINUTES * 60:
            hh, mm, ss = held // 3600, held % 3600 // 60, held % 60
            w.log.append(
                LogLine(
                    t + held,
                    "LOG",
                    f"disconnection: session time: {hh}:{mm:02d}:{ss:02d}."
                    f"{rng.randrange(1000):03d} user={user} database={db} host={host.split('(')[0]} "
                    f"port={host.split('(')[1][:-1]}",
                    user,
                    db,
                    host,
                    pid,
                )
            )
        t += rng.randrange(60, 300)
    for t in range(rng.randrange(0, 300), MINUTES * 60, rng.choice((300, 360, 420))):
        w.log.append(
            LogLine(
                t,
                "LOG",
                "connection authorized: user=rdsadmin database=rdsadmin application_name=rdsmon",
                "rdsadmin",
                "rdsadmin",
                "[local]",
                rng.randrange(10000, 65000),
            )
        )
    period = rng.choice((240, 270, 300))
    for t in range(rng.randrange(0, period), MINUTES * 60 - 60, period):
        w.log.append(LogLine(t, "LOG", "checkpoint starting: time"))
        bufs = rng.randrange(200, 9000)
        took = rng.uniform(20, 55)
        w.log.append(
            LogLine(
                t + int(took) + 1,
                "LOG",
                f"checkpoint complete: wrote {bufs} buffers "
                f"({bufs / 131072 * 100:.1f}%); 0 WAL file(s) added, 0 removed, {rng.randrange(1, 4)} "
                f"recycled; write={took:.3f} s, sync=0.{rng.randrange(1, 99):02d}0 s, "
                f"total={took + 0.2:.3f} s",
            )
        )
    for _ in range(rng.randrange(3, 7)):
        table = rng.choice(p.app.tables)
        what = rng.choice(("automatic vacuum", "automatic analyze"))
        w.log.append(
            LogLine(
                rng.randrange(0, MINUTES * 60),
                "LOG",
                f'{what} of table "{db}.public.{table}": '
                f"system usage: CPU: user: {rng.uniform(0.1, 3):.2f} s, system: "
                f"{rng.uniform(0.01, 0.5):.2f} s, elapsed: {rng.uniform(0.5, 20):.2f} s",
            )
        )
    for _ in range(rng.randrange(2, 6)):
        s = rng.choice(w.statements)
        w.log.append(
            LogLine(
                rng.randrange(0, MINUTES * 60),
                "LOG",
                f"duration: {rng.uniform(1000, 2500):.3f} ms  execute <unnamed>: {s.sql}",
                s.user,
                db,
                client(rng, subnet),
                rng.randrange(10000, 65000),
            )
        )


def _decoys(rng: random.Random, w: World) -> None:
    """Swap creeping up or transaction-ID age growing on one instance: real-looking trends that harm nothing."""
    inst = rng.choice(w.fleet.instances)
    if rng.random() < 0.5:
        prof = profile(MINUTES, rng.randrange(20, 100), Shape.CREEP, rng.randrange(60, 150))
        w.mul(inst, "SwapUsage", prof, rng.uniform(1.5, 4.0))
    else:
        prof = profile(MINUTES, 0, Shape.RAMP, MINUTES)
        w.add(inst, "MaximumUsedTransactionIDs", prof, rng.uniform(2e7, 8e7))


def heavy_reader(rng: random.Random, w: World) -> None:
    """A steady reporting reader that outweighs every statement and user of the primary in Performance Insights.

    From difficulty 2 the top of Performance Insights is not the answer: the cause is the statement whose waits
    fit the symptom (CPU for a saturated CPU, WAL and data-file writes for a write storm), not the heaviest one.
    """
    p = w.fleet.primary
    app = p.app
    a, b = rng.sample(app.tables[:3], 2)
    sql = rng.choice(
        (
            f"SELECT date_trunc('day', {a}.created_at), count(*) FROM {a} JOIN {b} ON {b}.{a[:-1]}_id = {a}.id "
            f"WHERE {a}.created_at >= $1 GROUP BY 1 ORDER BY 1",
            f"SELECT {a}.{app.key}, count(*) FROM {a} WHERE {a}.created_at BETWEEN $1 AND $2 GROUP BY 1",
            f"SELECT * FROM {b} WHERE updated_at >= $1 ORDER BY updated_at",
        )
    )
    user = f"{app.name}_{rng.choice(('reporting', 'analytics', 'bi'))}"
    per_user: dict[str, float] = {}
    for s in w.statements:
        per_user[s.user] = per_user.get(s.user, 0.0) + s.load
    heaviest = max([*per_user.values(), 0.05])
    waits = (("IO:DataFileRead", 0.65), ("CPU", 0.2), ("Client:ClientWrite", 0.15))
    host = client(rng, rng.randrange(20, 200)).split("(")[0]
    w.statements.append(Statement(sql, user, host, heaviest * rng.uniform(1.2, 1.7), waits, rng.uniform(0.05, 2)))
