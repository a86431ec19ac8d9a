import type { Logger } from "@flashgate/logger";
import type { PurchaseObserver } from "@flashgate/sale";
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
  return { registry, requestDuration, admissions, transactions, reservations, overloaded, dependencyErrors };
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
