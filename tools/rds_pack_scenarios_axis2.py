"""The Axis 2 scenarios of the `rds_postgres` pack (011-017): red herrings, stale alerts, dual faults."""

from __future__ import annotations

from rds_drill import GB, MB, Drill, Instance, standard
from rds_pack_scenarios import NO_STORAGE, low_storage, refused_connections, start, walsender_timeouts

__all__ = ["AXIS2", "NO_STORAGE"]


def s011() -> Drill:
    d = Drill("011-cpu-storage-compositional", start(10, 13, 0), 25, Instance("warehouse-pg-prod", "db.r6g.2xlarge",
              "us-east-1", 500, replica="warehouse-pg-ro"), 4, "critical", "dual_resource_exhaustion",
              ["two independent faults: a CPU-bound report and an insert flood filling storage",
               "DatabaseConnections and ReplicaLag rise as side effects"])  # fmt: skip
    standard(
        d,
        CPUUtilization=d.curve((0, 30), (3, 31), (6, 96), (24, 96.5), noise=0.01, hi=99),
        FreeStorageSpace=d.curve((0, 48 * GB), (1, 47.6 * GB), (24, 6.5 * GB), noise=0.003),
        DatabaseConnections=d.curve((0, 210), (6, 232), (14, 540), (24, 545), noise=0.02),
        ReplicaLag=d.curve((0, 0.8), (4, 1.5), (12, 90), (24, 180), noise=0.03),
        TransactionLogsGeneration=d.curve((0, 3 * MB), (1, 18 * MB), (24, 19 * MB), noise=0.04),
        WriteIOPS=d.curve((0, 900), (1, 4200), (24, 4350), noise=0.04),
        OldestReplicationSlotLag=d.curve((0, 25 * MB), (4, 40 * MB), (24, 3.1 * GB), noise=0.03),
    )
    low_storage(d, 13.6, 25.1 * GB)
    low_storage(d, 21.9, 10.2 * GB)
    d.set_alert(
        title="CPUUtilization above 90% on warehouse-pg-prod",
        alertname="RDSCPUHigh",
        metric="CPUUtilization",
        threshold=90,
        comparison="GreaterThanThreshold",
        minute=7,
        summary="CPU on warehouse-pg-prod has been above 90% for 3 datapoints.",
        description="Pick-list generation in the warehouse app is slow.",
    )
    d.set_insights(
        d.curve((0, 2.5), (3, 2.6), (6, 11.0), (24, 11.5)),
        [
            ("SELECT s.sku, s.warehouse_id, sum(m.quantity) AS movement, max(c.counted_qty) AS counted "
             "FROM stock_movements m JOIN skus s ON s.id = m.sku_id LEFT JOIN cycle_counts c "
             "ON c.sku_id = m.sku_id AND c.warehouse_id = m.warehouse_id WHERE m.moved_at >= $1 "
             "GROUP BY s.sku, s.warehouse_id HAVING sum(m.quantity) <> max(c.counted_qty)", 0.66,
             {"CPU": 0.92, "IO:DataFileRead": 0.08}, 0.02),
            ("INSERT INTO outbox_events (aggregate_id, event_type, payload, created_at) VALUES ($1, $2, $3, now())",
             0.2, {"IO:WALWrite": 0.4, "CPU": 0.3, "LWLock:WALWrite": 0.15, "IO:DataFileExtend": 0.15}, 2600.0),
            ("SELECT id, bin, quantity FROM stock WHERE sku_id = $1 AND warehouse_id = $2", 0.08,
             {"CPU": 0.7, "IO:DataFileRead": 0.3}, 330.0),
        ],
        {"recon_job": 0.66, "inventory_svc": 0.24, "warehouse_api": 0.08},
        {"10.14.9.2": 0.66, "10.14.3.17": 0.13, "10.14.3.18": 0.12},
    )  # fmt: skip
    return d


def s012() -> Drill:
    d = Drill("012-replication-lag-misleading-events", start(11, 12, 30), 25, Instance("fleet-pg-prod",
              "db.r6g.xlarge", "us-west-2", 1500, replica="fleet-pg-reader"), 3, "critical", "replication_lag",
              ["three earlier infrastructure events: maintenance patching, a Multi-AZ failover,"
               " a reader restart"])  # fmt: skip
    standard(
        d,
        ReplicaLag=d.curve((0, 4), (2, 5), (24, 1259), noise=0.01),
        TransactionLogsGeneration=d.curve((0, 3.5 * MB), (2, 3.6 * MB), (3, 52 * MB), (24, 55 * MB), noise=0.04),
        WriteIOPS=d.curve((0, 1100), (2, 1150), (3, 12800), (24, 13200), noise=0.03),
        CPUUtilization=d.curve((0, 26), (2, 27), (4, 44), (24, 46), noise=0.05),
        OldestReplicationSlotLag=d.curve((0, 40 * MB), (2, 45 * MB), (24, 58 * GB), noise=0.02),
        DatabaseConnections=d.flat(380, 0.02),
    )
    d.events_window = (start(11, 4, 0), start(11, 12, 55))
    d.event(-410, "Applying off-line patches to DB instance", ["maintenance"])
    d.event(-402.7, "Multi-AZ instance failover started.", ["failover"])
    d.event(-401.4, "Multi-AZ instance failover completed.", ["failover"])
    d.event(-392, "Finished applying off-line patches to DB instance", ["maintenance"])
    d.event(-305, "DB instance restarted", ["availability"], source=d.db.replica)
    d.set_alert(
        title="ReplicaLag above 900 seconds on fleet-pg-reader",
        alertname="RDSReplicaLagHigh",
        metric="ReplicaLag",
        dims="fleet-pg-reader",
        threshold=900,
        comparison="GreaterThanThreshold",
        minute=18,
        summary="Reader fleet-pg-reader is more than 15 minutes behind fleet-pg-prod.",
        description="Dispatch maps read vehicle positions from the reader and show stale locations.",
    )
    d.set_insights(
        d.curve((0, 1.6), (2, 1.7), (4, 5.2), (24, 5.4)),
        [
            ("COPY vehicle_pings_2026_05_11 (vehicle_id, recorded_at, lat, lon, speed_kph, heading) FROM STDIN", 0.64,
             {"IO:WALWrite": 0.35, "CPU": 0.35, "IO:DataFileWrite": 0.15, "LWLock:WALWrite": 0.15}, 0.2),
            ("INSERT INTO vehicle_status (vehicle_id, last_seen_at, lat, lon) VALUES ($1, $2, $3, $4) "
             "ON CONFLICT (vehicle_id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at, lat = EXCLUDED.lat, "
             "lon = EXCLUDED.lon", 0.12, {"CPU": 0.5, "IO:WALWrite": 0.3, "Lock:tuple": 0.2}, 320.0),
            ("SELECT recorded_at, lat, lon FROM vehicle_pings WHERE vehicle_id = $1 AND recorded_at > $2", 0.1,
             {"CPU": 0.6, "IO:DataFileRead": 0.4}, 180.0),
        ],
        {"etl_loader": 0.64, "fleet_api": 0.3},
        {"10.16.2.50": 0.64, "10.16.1.10": 0.15, "10.16.1.11": 0.14},
    )  # fmt: skip
    walsender_timeouts(d, [8.1, 15.3, 21.6], "10.16.7.9")
    return d


def s013() -> Drill:
    d = Drill("013-storage-recovery-false-alert", start(11, 15, 0), 20, Instance("invoicing-pg-prod",
              "db.m6g.2xlarge", "eu-west-1", 400), 3, "warning", "healthy",
              ["FreeStorageSpace dip already recovered by storage autoscaling", "WriteLatency briefly elevated",
               "the alert is still firing"])  # fmt: skip
    free = d.curve((0, 44 * GB), (4, 36.2 * GB), (5, 35.9 * GB), (6, 95.8 * GB), (19, 95.6 * GB), noise=0.002)
    standard(
        d,
        FreeStorageSpace=free,
        WriteIOPS=d.curve((0, 3400), (4, 3500), (5, 900), (19, 880), noise=0.04),
        WriteLatency=d.curve((0, 0.0016), (5, 0.0017), (6, 0.0068), (8, 0.0072), (9, 0.0019), (19, 0.0017),
                             noise=0.05),
        TransactionLogsGeneration=d.curve((0, 24 * MB), (4, 25 * MB), (5, 3 * MB), (19, 2.8 * MB), noise=0.05),
        CPUUtilization=d.curve((0, 38), (4, 39), (5, 17), (19, 16), noise=0.06),
    )  # fmt: skip
    low_storage(d, 3.6, 36.9 * GB)
    d.event(4.9, "Applying autoscaling-initiated modification to allocated storage.", ["configuration change"])
    d.event(9.3, "Finished applying autoscaling-initiated modification to allocated storage.",
            ["configuration change"])  # fmt: skip
    d.set_alert(
        title="FreeStorageSpace below 10% on invoicing-pg-prod",
        alertname="RDSFreeStorageLow",
        metric="FreeStorageSpace",
        threshold=40 * GB,
        comparison="LessThanThreshold",
        minute=3,
        summary="Free storage on invoicing-pg-prod is below 10% of its allocated storage.",
        description="Month-end invoice rendering is running.",
    )
    d.set_insights(
        d.curve((0, 3.2), (4, 3.3), (5, 1.4), (19, 1.3)),
        [
            ("INSERT INTO invoice_documents (invoice_id, customer_id, pdf_object_key, rendered_at, metadata) "
             "VALUES ($1, $2, $3, now(), $4)", 0.45, {"IO:WALWrite": 0.35, "CPU": 0.4, "LWLock:WALWrite": 0.25},
             640.0),
            ("SELECT i.id, i.total_cents, c.billing_email FROM invoices i JOIN customers c ON c.id = i.customer_id "
             "WHERE i.period = $1 AND i.status = $2", 0.27, {"CPU": 0.6, "IO:DataFileRead": 0.4}, 22.0),
        ],
        {"invoice_renderer": 0.55, "billing_api": 0.3},
        {"10.120.5.2": 0.55, "10.120.1.40": 0.16, "10.120.1.41": 0.15},
    )  # fmt: skip
    return d


def s014() -> Drill:
    d = Drill("014-checkpoint-storm-cpu-saturation", start(12, 22, 0), 25, Instance("subscriptions-pg",
              "db.r6g.xlarge", "us-west-2", 2000), 4, "critical", "checkpoint_io_storm",
              ["CPUUtilization at 92% is a symptom of the write storm",
               "an automated backup runs in the same window"])  # fmt: skip
    load = d.curve((0, 2.1), (3, 2.2), (5, 12.5), (24, 13.0))
    standard(
        d,
        CPUUtilization=d.curve((0, 35), (3, 36), (6, 92), (24, 92.5), noise=0.01, hi=97),
        TransactionLogsGeneration=d.curve((0, 4 * MB), (3, 4.2 * MB), (4, 146 * MB), (24, 152 * MB), noise=0.03),
        TransactionLogsDiskUsage=d.curve((0, 1.4 * GB), (3, 1.4 * GB), (5, 8.6 * GB), (24, 9.1 * GB), noise=0.02),
        CheckpointLag=d.checkpoint_lag(storm=(4, 25, 38)),
        WriteIOPS=d.curve((0, 1100), (3, 1150), (5, 14700), (24, 14850), noise=0.005, hi=15000),
        ReadIOPS=d.curve((0, 1400), (3, 1450), (5, 6200), (24, 6300), noise=0.04),
        WriteLatency=d.curve((0, 0.0014), (3, 0.0015), (5, 0.152), (24, 0.168), noise=0.03),
        ReadLatency=d.curve((0, 0.0009), (3, 0.0009), (5, 0.021), (24, 0.024), noise=0.05),
        DiskQueueDepth=d.curve((0, 1.2), (3, 1.3), (5, 34), (24, 38), noise=0.04),
        MaximumUsedTransactionIDs=d.curve((0, 1_204_000_000), (24, 1_204_300_000), noise=0.0),
        DBLoad=load,
    )
    d.metric("ReadLatency", d.curve((0, 0.003), (3, 0.003), (5, 0.09), (24, 0.1), noise=0.06), stat="p99")
    d.event(0.7, "Backing up DB instance", ["backup"])
    d.event(9.0, "Finished DB Instance backup", ["backup"])
    d.set_alert(
        title="CPUUtilization above 90% on subscriptions-pg",
        alertname="RDSCPUHigh",
        metric="CPUUtilization",
        threshold=90,
        comparison="GreaterThanThreshold",
        minute=7,
        summary="CPU on subscriptions-pg has been above 90% for 3 datapoints.",
        description="Renewal charges are queuing up in the billing worker.",
    )
    d.set_insights(
        load,
        [
            ("VACUUM (FREEZE, VERBOSE) public.billing_events", 0.4,
             {"IO:DataFileRead": 0.35, "IO:WALWrite": 0.3, "CPU": 0.2, "LWLock:WALWrite": 0.15}, 0.0),
            ("INSERT INTO billing_events (subscription_id, event_type, amount_cents, occurred_at) "
             "VALUES ($1, $2, $3, $4)", 0.26,
             {"LWLock:BufferMapping": 0.3, "IO:DataFileWrite": 0.25, "LWLock:WALWrite": 0.25, "CPU": 0.2}, 420.0),
            ("UPDATE subscriptions SET current_period_end = $1, status = $2 WHERE id = $3", 0.18,
             {"LWLock:BufferMapping": 0.3, "IO:DataFileWrite": 0.3, "IO:WALSync": 0.2, "CPU": 0.2}, 160.0),
            ("SELECT id, plan_id, status FROM subscriptions WHERE customer_id = $1", 0.1,
             {"IO:DataFileRead": 0.5, "CPU": 0.5}, 380.0),
        ],
        {"billing_svc": 0.52, "maintenance_job": 0.4, "rdsadmin": 0.02},
        {"10.130.7.7": 0.4, "10.130.2.21": 0.27, "10.130.2.22": 0.26},
    )  # fmt: skip
    d.checkpoint_storm = (4, 25, 38)
    return d


def s015() -> Drill:
    d = Drill("015-connection-storage-compositional", start(13, 10, 40), 25, Instance("crm-pg-prod", "db.r6g.large",
              "eu-central-1", 300, max_connections=1700), 4, "critical", "connection_exhaustion",
              ["two independent faults: leaked idle-in-transaction sessions and temporary files filling storage",
               "the alert names only the connections"])  # fmt: skip
    standard(
        d,
        DatabaseConnections=d.curve((0, 420), (2, 430), (16, 1690), (24, 1696), noise=0.006, hi=1697),
        FreeStorageSpace=d.curve((0, 31 * GB), (5, 30.9 * GB), (24, 2.1 * GB), noise=0.003),
        CPUUtilization=d.curve((0, 24), (5, 30), (24, 42), noise=0.04, hi=44.5),
        ReadIOPS=d.curve((0, 800), (5, 820), (6, 2900), (24, 3000), noise=0.05),
        WriteIOPS=d.curve((0, 500), (5, 520), (6, 3100), (24, 3150), noise=0.05),
        ReadLatency=d.curve((0, 0.0009), (5, 0.0009), (7, 0.0031), (24, 0.0034), noise=0.06),
        FreeableMemory=d.curve((0, 6.1 * GB), (2, 6.1 * GB), (16, 4.3 * GB), (24, 4.2 * GB), noise=0.005),
    )
    low_storage(d, 15.5, 15.0 * GB)
    low_storage(d, 21.4, 6.0 * GB)
    d.set_alert(
        title="DatabaseConnections above 1600 on crm-pg-prod",
        alertname="RDSConnectionsHigh",
        metric="DatabaseConnections",
        threshold=1600,
        comparison="GreaterThanThreshold",
        minute=16,
        summary="crm-pg-prod is close to max_connections (1700); the CRM web app reports connection timeouts.",
        description="Connection alarm for the CRM database.",
    )
    d.set_insights(
        d.curve((0, 1.1), (5, 2.4), (16, 4.5), (24, 4.8)),
        [
            ("SELECT id, external_id, updated_at FROM contacts WHERE sync_state = $1 ORDER BY updated_at "
             "LIMIT $2 FOR UPDATE SKIP LOCKED", 0.4, {"Client:ClientRead": 0.85, "CPU": 0.15}, 60.0),
            ("SELECT o.owner_id, date_trunc('month', o.closed_at) AS month, sum(o.amount) AS revenue, "
             "percentile_cont(0.5) WITHIN GROUP (ORDER BY o.amount) AS median_deal FROM opportunities o "
             "JOIN accounts a ON a.id = o.account_id WHERE o.closed_at >= $1 GROUP BY 1, 2 ORDER BY 1, 2", 0.36,
             {"IO:BufFileWrite": 0.45, "CPU": 0.3, "IO:BufFileRead": 0.25}, 0.01),
            ("UPDATE contacts SET sync_state = $1, synced_at = now() WHERE id = $2", 0.12,
             {"Lock:transactionid": 0.8, "CPU": 0.2}, 25.0),
        ],
        {"crm_sync": 0.52, "reporting": 0.36, "crm_api": 0.1},
        {"10.18.6.3": 0.27, "10.18.6.4": 0.25, "10.18.9.90": 0.36, "10.18.1.5": 0.1},
    )  # fmt: skip
    refused_connections(d, 15.6, d.n, (2, 4))
    report = d.insights["top_sql"][1]["statement"]
    minute = 6.3
    while minute < d.n - 0.1:  # the reporting query spills its sorts to disk
        pid = d.log_rng.randint(20_000, 64_000)
        for k in range(d.log_rng.randint(1, 3)):
            size = d.log_rng.randint(600, 1900) * 1024 * 1024
            d.log_line(minute, "LOG", f'temporary file: path "base/pgsql_tmp/pgsql_tmp{pid}.{k}", size {size}',
                       user="reporting", client="10.18.9.90(48812)", pid=pid)  # fmt: skip
        d.log_line(minute, "STATEMENT", report, user="reporting", client="10.18.9.90(48812)", pid=pid)
        minute += d.log_rng.uniform(1.2, 2.2)
    return d


def s016() -> Drill:
    d = Drill("016-checkpoint-replication-compositional", start(14, 1, 10), 25, Instance("notifications-pg",
              "db.r6g.2xlarge", "us-east-1", 1500, replica="notifications-pg-ro1"), 4, "critical",
              "checkpoint_io_storm",
              ["two faults: a checkpoint storm on the primary and paused replay on the replica",
               "the alert names only write latency"])  # fmt: skip
    standard(
        d,
        TransactionLogsGeneration=d.curve((0, 2.8 * MB), (2, 2.9 * MB), (3, 118 * MB), (24, 121 * MB), noise=0.03),
        TransactionLogsDiskUsage=d.curve((0, 1.5 * GB), (2, 1.5 * GB), (4, 6.0 * GB), (24, 6.4 * GB), noise=0.02),
        CheckpointLag=d.checkpoint_lag(storm=(3, 25, 40)),
        WriteIOPS=d.curve((0, 1300), (2, 1350), (4, 11800), (24, 11900), noise=0.005, hi=12000),
        WriteLatency=d.curve((0, 0.0013), (2, 0.0014), (4, 0.118), (24, 0.125), noise=0.03),
        DiskQueueDepth=d.curve((0, 1.1), (2, 1.2), (4, 26), (24, 28), noise=0.04),
        CPUUtilization=d.curve((0, 46), (3, 52), (24, 58), noise=0.03, lo=45.2, hi=59.8),
        ReplicaLag=d.curve((0, 0.7), (3, 1.0), (24, 1261), noise=0.002),
        OldestReplicationSlotLag=d.curve((0, 20 * MB), (3, 40 * MB), (24, 180 * MB), noise=0.05),
    )
    d.set_alert(
        title="WriteLatency above 100 ms on notifications-pg",
        alertname="RDSWriteLatencyHigh",
        metric="WriteLatency",
        threshold=0.1,
        comparison="GreaterThanThreshold",
        minute=6,
        summary="Write latency on notifications-pg is above 100 ms.",
        description="Push delivery receipts are being written slowly; the delivery queue is growing.",
    )
    d.set_insights(
        d.curve((0, 2.4), (2, 2.5), (4, 10.5), (24, 11.0)),
        [
            ("VACUUM (FREEZE) public.push_deliveries", 0.42,
             {"IO:WALWrite": 0.35, "IO:DataFileRead": 0.3, "CPU": 0.2, "LWLock:WALWrite": 0.15}, 0.0),
            ("INSERT INTO push_deliveries (device_id, campaign_id, status, sent_at) VALUES ($1, $2, $3, now())", 0.3,
             {"LWLock:BufferMapping": 0.3, "IO:DataFileWrite": 0.25, "LWLock:WALWrite": 0.25, "CPU": 0.2}, 900.0),
            ("UPDATE push_deliveries SET status = $1, delivered_at = $2 WHERE id = $3", 0.16,
             {"IO:DataFileWrite": 0.35, "CPU": 0.35, "IO:WALSync": 0.3}, 640.0),
        ],
        {"notify_svc": 0.5, "maintenance_cron": 0.42},
        {"10.22.1.8": 0.42, "10.22.4.19": 0.25, "10.22.4.20": 0.24},
    )  # fmt: skip
    d.checkpoint_storm = (3, 25, 40)
    return d


def s017() -> Drill:
    d = Drill("017-cpu-replication-compositional", start(15, 9, 30), 25, Instance("merch-pg-prod", "db.r6g.2xlarge",
              "ap-northeast-1", 900, replica="merch-pg-replica"), 4, "critical", "cpu_saturation",
              ["two independent faults: a CPU-bound search query and a WAL-heavy price import",
               "the replica lag starts while CPU is already saturated"])  # fmt: skip
    standard(
        d,
        CPUUtilization=d.curve((0, 28), (2, 29), (5, 97), (24, 97.5), noise=0.008, hi=99.5),
        TransactionLogsGeneration=d.curve((0, 2 * MB), (6, 2.1 * MB), (7, 42 * MB), (24, 43 * MB), noise=0.04),
        ReplicaLag=d.curve((0, 2.0), (6, 2.4), (24, 1010), noise=0.01),
        OldestReplicationSlotLag=d.curve((0, 15 * MB), (6, 18 * MB), (24, 26 * GB), noise=0.02),
        DatabaseConnections=d.curve((0, 300), (2, 305), (6, 600), (24, 620), noise=0.02),
        WriteIOPS=d.curve((0, 1000), (6, 1050), (7, 8900), (24, 9050), noise=0.04),
    )
    d.set_alert(
        title="CPUUtilization above 95% on merch-pg-prod",
        alertname="RDSCPUHigh",
        metric="CPUUtilization",
        threshold=95,
        comparison="GreaterThanThreshold",
        minute=6,
        summary="CPU on merch-pg-prod has been above 95% for 3 datapoints.",
        description="Product search on the storefront is slow.",
    )
    d.set_insights(
        d.curve((0, 2.4), (2, 2.5), (5, 9.5), (24, 10.8)),
        [
            ("SELECT p.id, p.title, p.price FROM products p WHERE p.description ILIKE $1 AND p.active "
             "ORDER BY p.popularity DESC LIMIT $2", 0.5, {"CPU": 0.95, "IO:DataFileRead": 0.05}, 85.0),
            # The same search page also counts its hits and builds its facets: CPU-heavy, but steady all day.
            ("SELECT count(*) FROM products p WHERE p.description ILIKE $1 AND p.active", 0.12,
             {"CPU": 0.95, "IO:DataFileRead": 0.05}, 85.0),
            ("SELECT c.slug, count(*) FROM products p JOIN categories c ON c.id = p.category_id "
             "WHERE p.active GROUP BY c.slug", 0.09, {"CPU": 0.85, "IO:DataFileRead": 0.15}, 40.0),
            ("UPDATE product_prices SET price = s.price, currency = s.currency, updated_at = now() "
             "FROM supplier_price_feed s WHERE product_prices.product_id = s.product_id AND s.feed_id = $1", 0.08,
             {"IO:WALWrite": 0.45, "LWLock:WALWrite": 0.2, "CPU": 0.2, "IO:DataFileRead": 0.15}, 0.5),
            ("SELECT id, title, price, stock FROM products WHERE id = ANY($1)", 0.06,
             {"CPU": 0.8, "IO:DataFileRead": 0.2}, 410.0),
        ],
        {"search_api": 0.71, "price_import": 0.08, "merch_api": 0.06},
        {"10.24.3.1": 0.24, "10.24.3.2": 0.23, "10.24.3.3": 0.23, "10.24.8.60": 0.16},
    )  # fmt: skip
    walsender_timeouts(d, [13.5, 21.2], "10.24.9.8")
    return d


AXIS2 = (s011, s012, s013, s014, s015, s016, s017)
