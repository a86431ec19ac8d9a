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
  const observer: PurchaseObserver = {
    transaction: (outcome) => transactions.inc({ outcome }),
    reservations: (delta) => reservations.inc(delta),
  };
  return { registry, requestDuration, admissions, transactions, observer };
}

export type Metrics = ReturnType<typeof createMetrics>;
