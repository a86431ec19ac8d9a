import type { Logger } from "@flashgate/logger";
import type { PurchaseObserver, QueueWriterObserver } from "@flashgate/sale";
import { createFastHistogram } from "@flashgate/telemetry";
import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "flashgate_api_" });
  const requestDuration = createFastHistogram({
    name: "flashgate_http_request_duration_seconds",
    help: "HTTP request duration by route and status",
    labelNames: ["route", "status"],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const admissions = new Counter({
    name: "flashgate_purchase_admissions_total",
    help: "Purchase requests by outcome code",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const transactions = new Counter({
    name: "flashgate_purchase_transactions_total",
    help: "Database purchase transactions by outcome (committed, rejected, unknown, failed); their sum is attempts",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const reservations = new Gauge({
    name: "flashgate_reservations_outstanding",
    help: "Reservations this instance made that are not yet resolved or released",
    registers: [registry],
  });
  const overloaded = new Counter({
    name: "flashgate_purchase_overloaded_total",
    help: "Purchases answered 503 because the instance had no database slot for them (DB_MAX_IN_FLIGHT, DB_MAX_QUEUE)",
    registers: [registry],
  });
  const dependencyErrors = new Counter({
    name: "flashgate_dependency_errors_total",
    help: "Calls to Redis or the database that failed, by dependency and operation",
    labelNames: ["dependency", "operation"],
    registers: [registry],
  });
  const queued = new Counter({
    name: "flashgate_purchase_queued_total",
    help: "Buyers put on the purchase queue and answered 202 with a ticket",
    registers: [registry],
  });
  const queueBacklog = new Gauge({
    name: "flashgate_purchase_queue_backlog",
    help: "Queued buyers the writers have not decided, as this instance last read it",
    registers: [registry],
  });
  const queueDecided = createFastHistogram({
    name: "flashgate_purchase_queue_wait_seconds",
    help: "From a buyer's place in the queue to the writer's decision, by outcome (CREATED, REFUSED)",
    labelNames: ["outcome"],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  const queueUndecided = new Counter({
    name: "flashgate_purchase_queue_undecided_total",
    help: "Queued buyers the writer could not decide yet (the database away, an unknown outcome): handed again",
    registers: [registry],
  });
  return {
    registry,
    requestDuration,
    admissions,
    transactions,
    reservations,
    overloaded,
    dependencyErrors,
    queued,
    queueBacklog,
    queueDecided,
    queueUndecided,
  };
}

/**
 * The purchase service's observer: counts, and logs each failing dependency call — at most one line
 * per second per dependency and operation, with how many were not logged, since a dead Redis under a
 * storm fails thousands of calls a second.
 */
export function purchaseObserver(metrics: Metrics, logger: Logger): PurchaseObserver {
  const lastLogged = new Map<string, { at: number; suppressed: number }>();
  return {
    transaction: (outcome) => metrics.transactions.inc({ outcome }),
    reservations: (delta) => metrics.reservations.inc(delta),
    overloaded: () => metrics.overloaded.inc(),
    queued: () => metrics.queued.inc(),
    dependencyFailed(dependency, operation, error) {
      metrics.dependencyErrors.inc({ dependency, operation });
      const key = `${dependency}:${operation}`;
      const now = Date.now();
      const last = lastLogged.get(key);
      if (last && now - last.at < 1000) {
        last.suppressed += 1;
        return;
      }
      lastLogged.set(key, { at: now, suppressed: 0 });
      logger.warn(
        { dependency, operation, err: error, suppressedSinceLast: last?.suppressed ?? 0 },
        `${dependency} call failed`,
      );
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** The queue writer's observer: its transactions counted with the purchases', its waits, its retries (logged at most once a second). */
export function writerObserver(metrics: Metrics, logger: Logger): QueueWriterObserver {
  let lastLogged = 0;
  return {
    transaction: (outcome) => metrics.transactions.inc({ outcome }),
    decided: (outcome, waitedMs) => metrics.queueDecided.observe({ outcome }, waitedMs / 1000),
    undecided(error) {
      metrics.queueUndecided.inc();
      if (Date.now() - lastLogged < 1000) return;
      lastLogged = Date.now();
      logger.warn({ err: error }, "a queued buyer left undecided for now");
    },
  };
}
