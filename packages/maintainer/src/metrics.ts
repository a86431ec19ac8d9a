import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export function createMaintainerMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "flashgate_maintainer_" });
  return {
    registry,
    lag: new Histogram({
      name: "flashgate_cdc_lag_seconds",
      help: "Commit (row DATETIME(3)) to Redis apply latency",
      labelNames: ["source"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    stageLag: new Histogram({
      name: "flashgate_cdc_stage_seconds",
      help: "Each stage between a commit and its Redis apply: binlog-read (commit to Debezium's envelope), kafka-send (to the broker's append of its record, the brokers' LogAppendTime), consumed (Kafka's replication and this maintainer's fetch, to its receipt), applied (to Redis)",
      labelNames: ["source", "stage"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    events: new Counter({
      name: "flashgate_cdc_events_total",
      help: "Change events by kind and result (applied, skipped as older or repeated)",
      labelNames: ["kind", "result"],
      registers: [registry],
    }),
    deadLetters: new Counter({
      name: "flashgate_cdc_dead_letters_total",
      help: "Events sent to the dead-letter topic",
      registers: [registry],
    }),
    rebuilds: new Counter({
      name: "flashgate_cache_rebuilds_total",
      help: "SKUs rebuilt from MySQL, by reason",
      labelNames: ["reason"],
      registers: [registry],
    }),
    isolatedSkus: new Gauge({
      name: "flashgate_cache_isolated_skus",
      help: "SKUs taken out of the cache after a failure of their own, awaiting a rebuild from MySQL",
      registers: [registry],
    }),
    isolations: new Counter({
      name: "flashgate_cache_isolations_total",
      help: "Times a SKU was isolated after a failure of its own",
      registers: [registry],
    }),
    sourceChanges: new Counter({
      name: "flashgate_binlog_source_changes_total",
      help: "Times the binlog source changed (failover, reset, restore) and every SKU was rebuilt, forced",
      registers: [registry],
    }),
    replicaLag: new Gauge({
      name: "flashgate_database_replica_lag_seconds",
      help: "How far a database replica's applier is behind its primary (Seconds_Behind_Source; NaN while it does not apply)",
      labelNames: ["node"],
      registers: [registry],
    }),
    replicaRunning: new Gauge({
      name: "flashgate_database_replica_running",
      help: "1 while a database replica receives and applies its primary's binlog",
      labelNames: ["node"],
      registers: [registry],
    }),
    lostChangesRecorded: new Gauge({
      name: "flashgate_lost_changes_recorded",
      help: "Rows of lost_change: every change the cache saw that a failover lost, named for operators",
      registers: [registry],
    }),
    lostChanges: new Counter({
      name: "flashgate_lost_changes_total",
      help: "Changes the cache saw from a primary lost in a failover whose transaction the new primary lacks (lost commits), by table",
      labelNames: ["table"],
      registers: [registry],
    }),
    applyRetries: new Counter({
      name: "flashgate_cdc_apply_retries_total",
      help: "Batches held and retried because Redis or MySQL failed (nothing committed meanwhile)",
      registers: [registry],
    }),
    assignedPartitions: new Gauge({
      name: "flashgate_kafka_assigned_partitions",
      help: "Partitions of each CDC topic this instance consumes (the group shares them among its instances)",
      labelNames: ["topic"],
      registers: [registry],
    }),
    consumerLag: new Gauge({
      name: "flashgate_kafka_consumer_lag",
      help: "Messages not yet consumed, per topic and partition",
      labelNames: ["topic", "partition"],
      registers: [registry],
    }),
    driftedSkus: new Gauge({
      name: "flashgate_drift_skus",
      help: "SKUs whose cache differed from MySQL at the last check",
      registers: [registry],
    }),
    driftLastCheck: new Gauge({
      name: "flashgate_drift_last_check_timestamp_seconds",
      help: "When the drift check last ran",
      registers: [registry],
    }),
    driftRepairs: new Counter({
      name: "flashgate_drift_repairs_total",
      help: "SKUs repaired from MySQL by the drift check",
      registers: [registry],
    }),
    connectorRestarts: new Counter({
      name: "flashgate_connector_restarts_total",
      help: "Restarts of a FAILED Debezium connector or task, by this instance's supervisor",
      registers: [registry],
    }),
    connectorRepositions: new Counter({
      name: "flashgate_connector_repositions_total",
      help: "Times the connector's binlog position was lost (reset, purged, another server) and reset to a fresh snapshot",
      registers: [registry],
    }),
    connectorGtidTrims: new Counter({
      name: "flashgate_connector_gtid_trims_total",
      help: "Times a failover's lost transactions were taken out of the connector's stored GTID set, so it resumed where it was",
      registers: [registry],
    }),
    connectorState: new Gauge({
      name: "flashgate_connector_state",
      help: 'The state (RUNNING, FAILED, PAUSED, …) of the connector (task="connector") and of each task at the supervisor\'s last check: 1 for the one it is in',
      labelNames: ["connector", "task", "state"],
      registers: [registry],
    }),
    connectorRunning: new Gauge({
      name: "flashgate_connector_running",
      help: '1 when the connector (task="connector") or one of its tasks is RUNNING, else 0; 0 for task="unreachable" when Connect did not answer',
      labelNames: ["connector", "task"],
      registers: [registry],
    }),
    cdcStalled: new Gauge({
      name: "flashgate_cdc_stalled",
      help: "1 while neither a heartbeat nor any change has been applied for CDC_STALL_MS and changed SKUs are loaded from MySQL directly",
      registers: [registry],
    }),
    lastAppliedAt: new Gauge({
      name: "flashgate_cdc_last_applied_timestamp_seconds",
      help: "When a change was last applied",
      registers: [registry],
    }),
  };
}

export type MaintainerMetrics = ReturnType<typeof createMaintainerMetrics>;
