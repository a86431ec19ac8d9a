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
    lastAppliedAt: new Gauge({
      name: "flashgate_cdc_last_applied_timestamp_seconds",
      help: "When a change was last applied",
      registers: [registry],
    }),
  };
}

export type MaintainerMetrics = ReturnType<typeof createMaintainerMetrics>;
