"""The Axis 1 scenarios with a trap (006-010): a red herring, a noisy healthy system, a missing metric."""

from __future__ import annotations

from rds_drill import GB, MB, Drill, Instance, standard
from rds_pack_scenarios import NO_STORAGE, low_storage, out_of_space, refused_connections, start, walsender_timeouts

__all__ = ["TRAPS"]


def s006() -> Drill:
    d = Drill("006-replication-lag-cpu-redherring", start(7, 10, 20), 25, Instance("loyalty-pg-prod", "db.r6g.2xlarge",
              "eu-west-1", 1000, replica="loyalty-pg-replica-a"), 2, "critical", "replication_lag",
              ["CPUUtilization", "CPU at 75-85% from an unrelated read-only analytics query"])  # fmt: skip
    cpu = [min(max(x, 75.1), 84.9) for x in d.wave(80, 3.6, 7, noise=0.012)]
    standard(
        d,
        CPUUtilization=cpu,
        ReadIOPS=d.flat(5200, 0.05),
        WriteIOPS=d.curve((0, 1400), (6, 1450), (7, 8800), (24, 9100), noise=0.04),
        TransactionLogsGeneration=d.curve((0, 1.6 * MB), (6, 1.7 * MB), (7, 36 * MB), (24, 38 * MB), noise=0.04),
        ReplicaLag=d.curve((0, 2.5), (6, 3.0), (24, 813), noise=0.01),
        OldestReplicationSlotLag=d.curve((0, 30 * MB), (6, 32 * MB), (24, 24 * GB), noise=0.02),
        DatabaseConnections=d.flat(640, 0.02),
    )
    d.set_alert(
        title="ReplicaLag above 300 s on loyalty-pg-replica-a (primary CPUUtilization high)",
        alertname="RDSReplicaLagHigh",
        metric="ReplicaLag",
        dims="loyalty-pg-replica-a",
        threshold=300,
        comparison="GreaterThanThreshold",
        minute=13,
        summary=f"Replica loyalty-pg-replica-a is behind its source; CPU on loyalty-pg-prod is at {cpu[13]:.0f}%.",
        description="Member point balances read from the replica are out of date.",
    )
    d.set_insights(
        d.curve((0, 6.8), (6, 6.9), (7, 8.6), (24, 8.8)),
        [
            ("SELECT m.tier, date_trunc('week', t.created_at) AS week, sum(t.points) AS points, "
             "count(DISTINCT t.member_id) AS members FROM point_transactions t JOIN members m ON m.id = t.member_id "
             "WHERE t.created_at >= $1 GROUP BY 1, 2 ORDER BY 2", 0.62, {"CPU": 0.86, "IO:DataFileRead": 0.14}, 0.3),
            ("UPDATE member_points SET expired = true, expired_at = now() WHERE member_id = ANY($1) "
             "AND expires_at < $2 AND NOT expired", 0.24,
             {"IO:WALWrite": 0.45, "LWLock:WALWrite": 0.2, "CPU": 0.2, "IO:DataFileRead": 0.15}, 2.1),
            ("SELECT balance, tier FROM member_points WHERE member_id = $1", 0.07, {"CPU": 1.0}, 140.0),
        ],
        {"metabase_ro": 0.62, "points_expiry": 0.24, "loyalty_api": 0.1},
        {"10.70.1.5": 0.62, "10.70.4.33": 0.24, "10.70.2.8": 0.1},
    )  # fmt: skip
    walsender_timeouts(d, [12.2, 20.5], "10.70.9.14")
    return d


def s007() -> Drill:
    d = Drill("007-connection-pressure-noisy-healthy", start(7, 18, 0), 20, Instance("tickets-pg-prod",
              "db.r6g.xlarge", "us-west-2", 500, max_connections=3400), 2, "warning", "healthy",
              ["DatabaseConnections", "CPUUtilization",
               "connections and CPU oscillate near the alarm threshold"])  # fmt: skip
    conns = [min(max(x, 1840), 2160) for x in d.wave(2000, 128, 4, noise=0.012)]
    standard(
        d,
        DatabaseConnections=conns,
        CPUUtilization=[min(max(x, 40.2), 71.8) for x in d.wave(56, 14, 4, phase=0.3, noise=0.025)],
        ReadLatency=d.flat(0.0007, 0.08),
        WriteLatency=d.flat(0.0013, 0.08),
    )
    peak = max(range(4, 12), key=lambda i: conns[i])
    d.set_alert(
        title="DatabaseConnections above 55% of max_connections on tickets-pg-prod",
        alertname="RDSConnectionsWarning",
        metric="DatabaseConnections",
        threshold=1870,
        comparison="GreaterThanThreshold",
        minute=peak,
        summary="Connection count on tickets-pg-prod crossed the warning threshold (1870 of 3400).",
        description="Warning-level alarm; no error rate increase reported by the ticketing service.",
    )
    d.set_insights(
        d.wave(3.0, 1.0, 4, noise=0.05),
        [
            ("SELECT id, subject, status, assignee_id FROM tickets WHERE queue_id = $1 AND status = ANY($2) "
             "ORDER BY updated_at DESC LIMIT $3", 0.44, {"CPU": 0.75, "IO:DataFileRead": 0.25}, 520.0),
            ("UPDATE tickets SET status = $1, updated_at = now() WHERE id = $2", 0.18,
             {"CPU": 0.5, "IO:WALSync": 0.3, "IO:WALWrite": 0.2}, 95.0),
            ("SELECT id FROM ingest_queue WHERE claimed_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED",
             0.16, {"CPU": 0.8, "Client:ClientRead": 0.2}, 12.0),
        ],
        {"tickets_api": 0.66, "ingest_worker": 0.22, "reports_ro": 0.06},
        {"10.90.1.12": 0.34, "10.90.1.13": 0.33, "10.90.7.4": 0.22},
        {"Client:ClientRead": 0.12},
    )  # fmt: skip
    return d


def s008() -> Drill:
    d = Drill("008-storage-full-missing-metric", start(8, 3, 30), 20, Instance("media-meta-pg", "db.m6g.large",
              "ap-southeast-2", 200, storage_type="gp2"), 3, "critical", "storage_full",
              ["FreeStorageSpace_absent", "BurstBalance draining on gp2"])  # fmt: skip
    standard(
        d,
        FreeStorageSpace=None,
        WriteIOPS=d.curve((0, 2500), (15, 2550), (16, 1800), (17, 60), (19, 20), noise=0.04),
        ReadIOPS=d.curve((0, 310), (16, 300), (17, 12), (19, 6), noise=0.06),
        WriteLatency=d.curve((0, 0.004), (12, 0.009), (15, 0.06), (16, 0.21), (17, 0.23), (19, 0.22), noise=0.05),
        DatabaseConnections=d.curve((0, 95), (16, 102), (17, 0), noise=0.03),
        CPUUtilization=d.curve((0, 31), (16, 34), (17, 3), noise=0.05),
        BurstBalance=d.curve((0, 58), (16, 21), (19, 22), noise=0.005),
        TransactionLogsGeneration=d.curve((0, 21 * MB), (16, 22 * MB), (17, 0.1 * MB), noise=0.04),
    )
    low_storage(d, 1.4, 12.4 * GB)
    low_storage(d, 11.2, 4.3 * GB)
    d.event(16.6, NO_STORAGE.format(db=d.db.name), ["low storage", "failure"])
    d.set_alert(
        title="WriteLatency above 150 ms on media-meta-pg",
        alertname="RDSWriteLatencyHigh",
        metric="WriteLatency",
        threshold=0.15,
        comparison="GreaterThanThreshold",
        minute=16,
        summary="Write latency on media-meta-pg is above 150 ms; uploads are timing out.",
        description="The media upload API reports failed metadata writes.",
    )
    d.set_insights(
        d.curve((0, 2.6), (15, 3.4), (16, 4.1), (17, 0.0)),
        [
            ("INSERT INTO media_variants (media_id, variant, width, height, object_key, created_at) "
             "VALUES ($1, $2, $3, $4, $5, now())", 0.7,
             {"IO:DataFileExtend": 0.35, "IO:WALWrite": 0.25, "LWLock:WALWrite": 0.1, "CPU": 0.3}, 850.0),
            ("SELECT object_key, width, height FROM media_variants WHERE media_id = $1", 0.14,
             {"CPU": 0.6, "IO:DataFileRead": 0.4}, 300.0),
        ],
        {"variant_backfill": 0.7, "media_api": 0.24},
        {"10.100.3.7": 0.7, "10.100.1.20": 0.12, "10.100.1.21": 0.11},
    )  # fmt: skip
    out_of_space(d, 15.9, 16.55, "base/16399/24611")
    d.offline = [(16.55, d.n)]
    return d


def s009() -> Drill:
    d = Drill("009-dual-fault-connection-cpu", start(8, 20, 10), 20, Instance("recs-pg-prod", "db.r6g.4xlarge",
              "us-east-1", 1200), 4, "critical", "connection_exhaustion",
              ["DatabaseConnections", "CPUUtilization",
               "connections and CPU both fail with one shared cause"])  # fmt: skip
    load = d.curve((0, 4.0), (2, 4.2), (7, 19.0), (19, 19.5))
    conns = d.curve((0, 900), (2, 910), (7, 4990), (19, 4994), noise=0.004, hi=4996)
    standard(
        d,
        DatabaseConnections=conns,
        CPUUtilization=d.curve((0, 35), (2, 36), (7, 94), (19, 94.5), noise=0.01, hi=99),
        FreeableMemory=d.curve((0, 71 * GB), (2, 71 * GB), (7, 51 * GB), (19, 50 * GB), noise=0.004),
        DBLoad=load,
    )
    d.set_alert(
        title="CPUUtilization above 90% on recs-pg-prod",
        alertname="RDSCPUHigh",
        metric="CPUUtilization",
        threshold=90,
        comparison="GreaterThanThreshold",
        minute=8,
        summary=f"CPU on recs-pg-prod is above 90%; DatabaseConnections at {conns[8]:.0f}.",
        description="Recommendation carousels time out on the home page.",
    )
    d.set_insights(
        load,
        [
            ("SELECT item_id, score FROM recommendations WHERE user_id = $1 AND surface = $2 "
             "ORDER BY score DESC LIMIT $3", 0.62, {"CPU": 0.6, "LWLock:ProcArray": 0.3, "IO:DataFileRead": 0.1},
             2400.0),
            ("SELECT 1", 0.14, {"CPU": 0.5, "Client:ClientRead": 0.5}, 850.0),
        ],
        {"recs_api": 0.93, "recs_admin": 0.02},
        {"10.30.8.11": 0.16, "10.30.8.12": 0.16, "10.30.8.13": 0.15, "10.30.8.14": 0.15},
        {"Client:ClientRead": 0.15},
    )  # fmt: skip
    refused_connections(d, 6.5, d.n, (3, 6))
    return d


def s010() -> Drill:
    d = Drill("010-replication-lag-missing-metric", start(9, 8, 0), 20, Instance("geo-pg-primary", "db.r6g.xlarge",
              "us-east-2", 700, replica="geo-pg-replica-2"), 3, "warning", "replication_lag",
              ["ReplicaLag_absent"])  # fmt: skip
    slot = d.curve((0, 60 * MB), (3, 70 * MB), (19, 24 * GB), noise=0.02)
    standard(
        d,
        ReplicaLag=None,
        OldestReplicationSlotLag=slot,
        TransactionLogsDiskUsage=[1.2 * GB + s for s in slot],
        TransactionLogsGeneration=d.curve((0, 3.0 * MB), (3, 3.1 * MB), (4, 34 * MB), (19, 36 * MB), noise=0.04),
        WriteIOPS=d.curve((0, 700), (3, 720), (4, 6200), (19, 6400), noise=0.04),
        CPUUtilization=d.curve((0, 18), (3, 19), (5, 33), (19, 34), noise=0.05),
    )
    d.events_window = (start(8, 20, 0), start(9, 8, 20))
    # The same change window also resized the other replica (up, to serve the map tiles) and moved it to a new
    # parameter group: both replicas were modified that evening; only replica-2 was made smaller.
    other = "geo-pg-replica-1"
    d.event(-652, "Updated to use DBParameterGroup geo-replica-pg16", ["configuration change"], source=other)
    d.event(-640, "Applying modification to database instance class", ["configuration change"], source=other)
    d.event(-621, "DB instance restarted", ["availability"], source=other)
    d.event(-608, "Finished applying modification to database instance class", ["configuration change"],
            source=other)  # fmt: skip
    d.event(-569, "Applying modification to database instance class", ["configuration change"], source=d.db.replica)
    d.event(-548, "DB instance restarted", ["availability"], source=d.db.replica)
    d.event(-536, "Finished applying modification to database instance class", ["configuration change"],
            source=d.db.replica)  # fmt: skip
    d.set_alert(
        title="TransactionLogsDiskUsage above 10 GB on geo-pg-primary",
        alertname="RDSTransactionLogsDiskUsageHigh",
        metric="TransactionLogsDiskUsage",
        threshold=10 * GB,
        comparison="GreaterThanThreshold",
        minute=10,
        summary="Write-ahead log files on geo-pg-primary use more than 10 GB of storage.",
        description="Storage used by transaction logs keeps growing.",
    )
    d.set_insights(
        d.curve((0, 1.1), (3, 1.2), (5, 3.9), (19, 4.1)),
        [
            ("INSERT INTO places (place_id, name, geom, updated_at) VALUES ($1, $2, ST_GeomFromGeoJSON($3), now()) "
             "ON CONFLICT (place_id) DO UPDATE SET name = EXCLUDED.name, geom = EXCLUDED.geom, updated_at = now()",
             0.66, {"IO:WALWrite": 0.4, "CPU": 0.3, "LWLock:WALWrite": 0.15, "IO:DataFileRead": 0.15}, 1900.0),
            ("SELECT place_id, name FROM places WHERE ST_DWithin(geom, ST_MakePoint($1, $2)::geography, $3) LIMIT $4",
             0.2, {"CPU": 0.7, "IO:DataFileRead": 0.3}, 210.0),
        ],
        {"geocode_refresh": 0.66, "geo_api": 0.28},
        {"10.110.4.4": 0.66, "10.110.2.31": 0.14, "10.110.2.32": 0.13},
    )  # fmt: skip
    walsender_timeouts(d, [9.3, 16.8], "10.110.8.21")
    return d


TRAPS = (s006, s007, s008, s009, s010)
