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
    lastAppliedAt: new Gauge({
      name: "flashgate_cdc_last_applied_timestamp_seconds",
      help: "When a change was last applied",
      registers: [registry],
    }),
  };
}

export type MaintainerMetrics = ReturnType<typeof createMaintainerMetrics>;
