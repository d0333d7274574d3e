"""The scenarios of the built-in `rds_postgres` pack, as timelines (`rds_drill.py`): 000-005 and helpers.

Each function builds one scenario to match its hand-written `answer.yml`: the same instance, onset minute,
peak values and adversarial element. Instance names, SQL and numbers are sredrill's own.
"""

from __future__ import annotations

from datetime import UTC, datetime

from rds_drill import GB, MB, Drill, Instance, standard

LOW_STORAGE = (
    "The free storage capacity for DB Instance {db} is low at {pct}% of the provisioned storage "
    "[Provisioned Storage: {size:.2f} GB, Free Storage: {free:.2f} GB]. "
    "You may want to increase the provisioned storage to address this issue."
)
NO_STORAGE = (
    "DB instance {db} has no free storage left, and the database has been shut down. "
    "Increase the allocated storage to address this issue."
)


def start(day: int, hour: int, minute: int) -> datetime:
    return datetime(2026, 5, day, hour, minute, tzinfo=UTC)


def low_storage(d: Drill, minute: float, free_bytes: float) -> None:
    pct = round(free_bytes / (d.db.storage_gb * GB) * 100)
    msg = LOW_STORAGE.format(db=d.db.name, pct=pct, size=d.db.storage_gb, free=free_bytes / GB)
    d.event(minute, msg, ["low storage"])


# -- what an incident writes to the PostgreSQL log (the routine lines are `Drill.routine_log`'s) -----------


def refused_connections(d: Drill, start: float, end: float, per_minute: tuple[int, int]) -> None:
    """Clients turned away once the instance has no connection slot left (PostgreSQL 16's wording)."""
    r, minute = d.log_rng, start
    while minute < end:
        for _ in range(r.randint(*per_minute)):
            user, client = d.client()
            full, at = r.random() < 0.35, min(minute + r.uniform(0, 0.98), end - 0.02)
            d.log_line(at, "FATAL", "sorry, too many clients already" if full else
                       "remaining connection slots are reserved for roles with the SUPERUSER attribute",
                       user=user, client=client)  # fmt: skip
        minute += 1


def walsender_timeouts(d: Drill, minutes: list[float], replica_ip: str) -> None:
    """The primary drops a replica's WAL stream that stopped answering, and the replica connects again."""
    for minute in minutes:
        pid = d.log_rng.randint(20_000, 64_000)
        client = f"{replica_ip}({d.log_rng.randint(32_768, 60_999)})"
        d.log_line(minute, "LOG", "terminating walsender process due to replication timeout", user="rdsrepladmin",
                   database="", client=client, pid=pid)  # fmt: skip
        d.log_line(minute + 0.08, "LOG", "replication connection authorized: user=rdsrepladmin "
                   "application_name=walreceiver SSL enabled (protocol=TLSv1.3, cipher=TLS_AES_256_GCM_SHA384, "
                   "bits=256)", user="rdsrepladmin", database="", client=client)  # fmt: skip


def out_of_space(d: Drill, first: float, shutdown: float, relation: str) -> None:
    """Writes failing on a full volume, then the server stopping."""
    r, minute = d.log_rng, first
    while minute < shutdown - 0.1:
        user, client = d.client()
        pid = r.randint(20_000, 64_000)
        d.log_line(minute, "ERROR", f'could not extend file "{relation}.{r.randint(2, 40)}": No space left on device',
                   user=user, client=client, pid=pid)  # fmt: skip
        d.log_line(minute, "HINT", "Check free disk space.", user=user, client=client, pid=pid)
        minute += r.uniform(0.15, 0.4)
    d.log_line(shutdown, "PANIC", 'could not write to file "pg_wal/xlogtemp.412": No space left on device', pid=412)
    d.log_line(shutdown + 0.01, "LOG", "checkpointer process (PID 412) was terminated by signal 6: Aborted", pid=388)
    d.log_line(shutdown + 0.01, "LOG", "terminating any other active server processes", pid=388)
    d.log_line(shutdown + 0.05, "LOG", "database system is shut down", pid=388)


def s000() -> Drill:
    d = Drill("000-healthy", start(4, 9, 0), 20, Instance("ledger-pg-prod", "db.r6g.2xlarge", "us-east-1", 500,
              replica="ledger-pg-prod-ro1"), 1, "info", "healthy", split_metrics=True)  # fmt: skip
    load = d.flat(1.1, 0.12)
    standard(
        d,
        CPUUtilization=d.flat(14.5, 0.12),
        DatabaseConnections=d.flat(150, 0.03),
        FreeStorageSpace=d.curve((0, 410.4 * GB), (19, 410.1 * GB), noise=0.0002),
        ReplicaLag=d.flat(0.4, 0.3),
        DBLoad=load,
    )
    d.event(3.2, "Backing up DB instance", ["backup"])
    d.event(11.6, "Finished DB Instance backup", ["backup"])
    d.set_alert(
        title="[cloudwatch] ledger-pg-prod: scheduled alarm digest",
        alertname="RDSAlarmDigest",
        metric="CPUUtilization",
        threshold=80,
        comparison="GreaterThanThreshold",
        minute=10,
        state="normal",
        summary="Scheduled digest: every CloudWatch alarm for ledger-pg-prod is in the OK state.",
        description="Daily digest of the RDS alarm set (CPU, connections, storage, latency, replica lag).",
    )
    d.set_insights(
        load,
        [
            ("SELECT balance, currency FROM accounts WHERE account_id = $1", 0.36,
             {"CPU": 0.7, "IO:DataFileRead": 0.3}, 410.0),
            ("INSERT INTO ledger_entries (account_id, amount, entry_type, created_at) VALUES ($1, $2, $3, now())",
             0.26, {"CPU": 0.5, "IO:WALWrite": 0.3, "LWLock:WALWrite": 0.2}, 180.0),
            ("UPDATE accounts SET balance = balance + $1 WHERE account_id = $2", 0.18,
             {"CPU": 0.5, "IO:WALWrite": 0.3, "Lock:transactionid": 0.2}, 120.0),
        ],
        {"ledger_api": 0.78, "ledger_batch": 0.14, "rdsadmin": 0.02},
        {"10.40.12.31": 0.34, "10.40.12.58": 0.31, "10.40.13.7": 0.27},
        {"Client:ClientRead": 0.08},
    )  # fmt: skip
    return d


def s001() -> Drill:
    d = Drill("001-replication-lag", start(4, 14, 10), 30, Instance("shipments-pg-main", "db.r6g.xlarge", "us-east-1",
              800, replica="shipments-pg-read1"), 1, "critical", "replication_lag")  # fmt: skip
    lag = d.curve((0, 1.0), (4, 1.3), (29, 955), noise=0.01, lo=0.2)
    slot = d.curve((0, 20 * MB), (4, 26 * MB), (29, 42 * GB), noise=0.02)
    standard(
        d,
        CPUUtilization=d.curve((0, 24), (4, 25), (6, 37), (29, 38), noise=0.05),
        DatabaseConnections=d.flat(310, 0.03),
        WriteIOPS=d.curve((0, 900), (4, 920), (5, 7000), (29, 7100), noise=0.04),
        TransactionLogsGeneration=d.curve((0, 2.1 * MB), (4, 2.2 * MB), (5, 44 * MB), (29, 45 * MB), noise=0.04),
        TransactionLogsDiskUsage=[1.2 * GB + s for s in slot],
        FreeStorageSpace=d.curve((0, 496 * GB), (4, 495.8 * GB), (29, 451 * GB), noise=0.001),
        OldestReplicationSlotLag=slot,
        ReplicaLag=lag,
    )
    d.event(1.4, "Manual snapshot created", ["backup"], source="shipments-pg-main-pre-backfill",
            source_type="db-snapshot")  # fmt: skip
    d.set_alert(
        title="ReplicaLag above 600 seconds on shipments-pg-read1",
        alertname="RDSReplicaLagHigh",
        metric="ReplicaLag",
        dims="shipments-pg-read1",
        threshold=600,
        comparison="GreaterThanThreshold",
        minute=20,
        summary="Read replica shipments-pg-read1 is more than 600 seconds behind its source shipments-pg-main.",
        description="Tracking pages read from the replica and are serving stale shipment status.",
    )
    d.set_insights(
        d.curve((0, 1.4), (4, 1.5), (6, 4.3), (29, 4.5)),
        [
            ("UPDATE shipments SET status_code = s.code, status_updated_at = s.updated_at "
             "FROM shipment_status_backfill s WHERE shipments.id = s.shipment_id AND s.batch_id = $1",
             0.62, {"IO:WALWrite": 0.45, "LWLock:WALWrite": 0.2, "CPU": 0.2, "IO:DataFileRead": 0.15}, 0.4),
            ("SELECT id, status_code, eta FROM shipments WHERE tracking_number = $1", 0.16,
             {"CPU": 0.8, "IO:DataFileRead": 0.2}, 260.0),
            ("INSERT INTO shipment_events (shipment_id, kind, payload, created_at) VALUES ($1, $2, $3, now())",
             0.09, {"CPU": 0.5, "IO:WALWrite": 0.5}, 75.0),
        ],
        {"migration_runner": 0.62, "shipments_api": 0.31},
        {"10.12.4.19": 0.62, "10.12.6.40": 0.16, "10.12.6.41": 0.15},
        {"Client:ClientRead": 0.05},
    )  # fmt: skip
    walsender_timeouts(d, [11.4, 19.7, 26.2], "10.12.9.3")
    return d


def s002() -> Drill:
    d = Drill("002-connection-exhaustion", start(5, 11, 30), 20, Instance("checkout-pg-prod", "db.r6g.large",
              "us-east-1", 300, max_connections=1700), 1, "critical", "connection_exhaustion")  # fmt: skip
    standard(
        d,
        DatabaseConnections=d.curve((0, 380), (2, 390), (14, 1690), (19, 1697), noise=0.008, hi=1697),
        CPUUtilization=d.curve((0, 22), (2, 22), (14, 34), (19, 35), noise=0.05),
        FreeableMemory=d.curve((0, 5.6 * GB), (2, 5.6 * GB), (14, 3.6 * GB), (19, 3.55 * GB), noise=0.005),
    )
    d.set_alert(
        title="DatabaseConnections above 1600 on checkout-pg-prod",
        alertname="RDSConnectionsHigh",
        metric="DatabaseConnections",
        threshold=1600,
        comparison="GreaterThanThreshold",
        minute=14,
        summary="checkout-pg-prod is close to max_connections (1700). Clients report: remaining connection slots "
        "are reserved for non-replication superuser connections.",
        description="Checkout requests fail intermittently while opening a database connection.",
    )
    d.set_insights(
        d.curve((0, 1.2), (2, 1.3), (14, 6.5), (19, 6.8)),
        [
            ("SELECT id, sku, quantity, reserved_until FROM cart_items WHERE cart_id = $1 FOR UPDATE", 0.58,
             {"Client:ClientRead": 0.9, "CPU": 0.1}, 45.0),
            ("UPDATE inventory_reservations SET released = true WHERE cart_id = $1", 0.24,
             {"Lock:transactionid": 0.85, "CPU": 0.15}, 30.0),
            ("SELECT id, total, status FROM orders WHERE customer_id = $1 ORDER BY created_at DESC LIMIT $2", 0.08,
             {"CPU": 0.7, "IO:DataFileRead": 0.3}, 95.0),
        ],
        {"cart_svc": 0.84, "orders_api": 0.11},
        {"10.20.3.14": 0.29, "10.20.3.15": 0.28, "10.20.4.2": 0.27, "10.20.9.30": 0.1},
    )  # fmt: skip
    refused_connections(d, 13.2, d.n, (2, 5))
    return d


def s003() -> Drill:
    d = Drill("003-storage-full", start(5, 2, 40), 20, Instance("claims-pg-prod", "db.m6g.xlarge", "eu-central-1",
              250), 1, "critical", "storage_full")  # fmt: skip
    free = d.curve((0, 21.4 * GB), (18, 0.35 * GB), (19, 0.33 * GB), noise=0.004)
    standard(
        d,
        FreeStorageSpace=free,
        WriteIOPS=d.curve((0, 2100), (1, 4800), (16, 5200), (17, 2600), (18, 120), (19, 30), noise=0.04),
        ReadIOPS=d.curve((0, 420), (17, 430), (18, 15), (19, 8), noise=0.06),
        TransactionLogsGeneration=d.curve((0, 30 * MB), (1, 62 * MB), (17, 55 * MB), (18, 0.1 * MB), noise=0.04),
        CPUUtilization=d.curve((0, 18), (1, 39), (17, 41), (18, 3), (19, 2), noise=0.05),
        DatabaseConnections=d.curve((0, 160), (17, 172), (18, 0), noise=0.03),
        WriteLatency=d.curve((0, 0.0017), (15, 0.0024), (17, 0.0031), (18, 0.0004), noise=0.06),
    )
    low_storage(d, 2.3, 21.4 * GB - 2.3 * 1.17 * GB)
    low_storage(d, 14.2, 21.4 * GB - 14.2 * 1.17 * GB)
    d.event(17.7, NO_STORAGE.format(db=d.db.name), ["low storage", "failure"])
    d.set_alert(
        title="FreeStorageSpace below 5% on claims-pg-prod",
        alertname="RDSFreeStorageLow",
        metric="FreeStorageSpace",
        threshold=12.5 * GB,
        comparison="LessThanThreshold",
        minute=8,
        summary="Free storage on claims-pg-prod is below 5% of its 250 GB volume.",
        description="Storage alarm for the claims database.",
    )
    d.set_insights(
        d.curve((0, 2.0), (1, 3.4), (17, 3.6), (18, 0.05), (19, 0.0)),
        [
            ("COPY claims_archive (claim_id, member_id, payload, archived_at) FROM STDIN WITH (FORMAT binary)", 0.71,
             {"IO:WALWrite": 0.35, "CPU": 0.35, "LWLock:WALWrite": 0.15, "IO:DataFileExtend": 0.15}, 0.05),
            ("SELECT id, status, amount FROM claims WHERE member_id = $1", 0.13,
             {"CPU": 0.6, "IO:DataFileRead": 0.4}, 40.0),
        ],
        {"archive_loader": 0.72, "claims_api": 0.21},
        {"10.60.1.25": 0.72, "10.60.2.11": 0.11, "10.60.2.12": 0.1},
    )  # fmt: skip
    out_of_space(d, 16.9, 17.6, "base/16401/18244")
    d.offline = [(17.6, d.n)]
    return d


def s004() -> Drill:
    d = Drill("004-cpu-saturation-bad-query", start(6, 16, 0), 20, Instance("pricing-pg-prod", "db.r6g.xlarge",
              "us-west-2", 400), 1, "critical", "cpu_saturation")  # fmt: skip
    load = d.curve((0, 1.3), (5, 1.4), (8, 11.0), (19, 11.3))
    standard(
        d,
        CPUUtilization=d.curve((0, 20), (5, 21), (8, 96), (19, 97), noise=0.012, hi=99.6),
        DatabaseConnections=d.curve((0, 210), (5, 215), (8, 260), (19, 270), noise=0.03),
        ReadIOPS=d.curve((0, 900), (5, 920), (8, 1080), (19, 1100), noise=0.06),
        DBLoad=load,
        DBLoadCPU=[x * 0.92 for x in load],
    )
    d.metric("ReadLatency", d.flat(0.0046, 0.1), stat="p99")
    d.set_alert(
        title="CPUUtilization above 90% on pricing-pg-prod",
        alertname="RDSCPUHigh",
        metric="CPUUtilization",
        threshold=90,
        comparison="GreaterThanThreshold",
        minute=8,
        summary="CPU on pricing-pg-prod has been above 90% for 3 datapoints.",
        description="Price lookups from the storefront time out after 2 seconds.",
    )
    d.set_insights(
        load,
        [
            ("SELECT rule_id, price, valid_from, valid_to FROM price_rules WHERE lower(sku) = $1 AND region = $2 "
             "AND now() BETWEEN valid_from AND valid_to", 0.88, {"CPU": 0.93, "IO:DataFileRead": 0.07}, 118.0),
            ("SELECT sku, list_price FROM catalog_prices WHERE sku = ANY($1)", 0.06, {"CPU": 1.0}, 60.0),
        ],
        {"pricing_svc": 0.95, "pricing_admin": 0.01},
        {"10.80.5.21": 0.33, "10.80.5.22": 0.32, "10.80.6.9": 0.31},
    )  # fmt: skip
    return d


def s005() -> Drill:
    d = Drill("005-failover", start(6, 7, 15), 20, Instance("auth-pg-prod", "db.r6g.2xlarge", "us-east-1", 600), 1,
              "critical", "failover")  # fmt: skip
    standard(
        d,
        DatabaseConnections=d.curve((0, 820), (6, 800), (7, 0), (8, 310), (9, 650), (10, 805), (19, 815),
                                    noise=0.02),
        CPUUtilization=d.curve((0, 23), (6, 22), (7, 2), (8, 15), (10, 24), (19, 23), noise=0.06),
        WriteLatency=d.curve((0, 0.0012), (4, 0.0013), (5, 0.045), (6, 0.18), (7, 0.0021), (8, 0.0013),
                             noise=0.05),
        WriteIOPS=d.curve((0, 2400), (5, 2300), (6, 900), (7, 60), (8, 1700), (10, 2400), noise=0.05),
        ReadIOPS=d.curve((0, 1500), (6, 1400), (7, 40), (8, 1900), (10, 1500), noise=0.05),
        DiskQueueDepth=d.curve((0, 3.1), (4, 3.3), (5, 24), (6, 41), (7, 0.4), (8, 2.9), noise=0.06),
    )  # fmt: skip
    d.event(6.7, "The primary host of the Multi-AZ instance failed health checks; RDS is failing over to the standby.",
            ["failover"])  # fmt: skip
    d.event(6.87, "Multi-AZ instance failover started.", ["failover"])
    d.event(7.52, "DB instance restarted", ["availability"])
    d.event(8.08, "Multi-AZ instance failover completed.", ["failover"])
    d.set_alert(
        title="DatabaseConnections dropped to 0 on auth-pg-prod",
        alertname="RDSConnectionsDropped",
        metric="DatabaseConnections",
        threshold=1,
        comparison="LessThanThreshold",
        minute=7,
        summary="auth-pg-prod reports no client connections; login requests are failing.",
        description="Authentication API health checks cannot reach the database.",
    )
    d.set_insights(
        d.curve((0, 3.1), (4, 3.2), (5, 5.8), (6, 7.4), (7, 0.0), (8, 3.4), (10, 3.1)),
        [
            ("SELECT user_id, password_hash, mfa_enabled FROM users WHERE email = $1", 0.41,
             {"CPU": 0.7, "IO:DataFileRead": 0.3}, 650.0),
            ("INSERT INTO sessions (token_hash, user_id, expires_at) VALUES ($1, $2, $3)", 0.27,
             {"IO:WALSync": 0.5, "CPU": 0.3, "IO:WALWrite": 0.2}, 210.0),
            ("UPDATE sessions SET last_seen_at = now() WHERE token_hash = $1", 0.19,
             {"IO:WALSync": 0.4, "CPU": 0.4, "Lock:transactionid": 0.2}, 330.0),
        ],
        {"auth_api": 0.9, "auth_admin": 0.03},
        {"10.50.2.17": 0.31, "10.50.2.18": 0.3, "10.50.3.40": 0.29},
    )  # fmt: skip
    for minute, message in (
        (7.55, "database system was interrupted; last known up at 2026-05-06 07:21:38 UTC"),
        (7.56, "database system was not properly shut down; automatic recovery in progress"),
        (7.57, "redo starts at 3C/1A000028"),
        (7.71, "redo done at 3C/1B2F0A10 system usage: CPU: user: 0.41 s, system: 0.22 s, elapsed: 8.40 s"),
        (7.72, "checkpoint starting: end-of-recovery immediate wait"),
        (7.78, "database system is ready to accept connections"),
    ):
        d.log_line(minute, "LOG", message, pid=388 if "ready" in message or "interrupted" in message else 402)
    d.offline = [(6.75, 7.78)]
    return d


BASICS = (s000, s001, s002, s003, s004, s005)
"""The first six scenarios' builders, in folder order (the traps and the Axis 2 ones follow: `gen_rds_pack.py`)."""

__all__ = [
    "BASICS",
    "LOW_STORAGE",
    "NO_STORAGE",
    "low_storage",
    "out_of_space",
    "refused_connections",
    "start",
    "walsender_timeouts",
]
