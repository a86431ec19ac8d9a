import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Logger } from "@flashgate/logger";
import { Kafka, type KafkaConfig, logLevel, type SASLOptions } from "kafkajs";

const levels = new Map<logLevel, "error" | "warn" | "info" | "debug">([
  [logLevel.ERROR, "error"],
  [logLevel.WARN, "warn"],
  [logLevel.INFO, "info"],
  [logLevel.DEBUG, "debug"],
]);

/**
 * kafkajs 2.2.4's request queue (pinned, ADR 0019), once a connection has had a response, re-checks its
 * pending requests every millisecond for as long as the connection lives, with none pending: the delay
 * is computed from an unset throttle time (-1 − now), which Node turns into 1 ms (the
 * TimeoutNegativeWarning it prints). Each maintainer spent 6.5–6.8 % of a core on it while idle on the
 * cluster topology. A check with nothing pending is dropped: a request queued later schedules its own.
 */
const requestQueue: { prototype: { pending: unknown[]; scheduleCheckPendingRequests(): void } } =
  createRequire(import.meta.url)("kafkajs/src/network/requestQueue/index.js");
const scheduleCheck = requestQueue.prototype.scheduleCheckPendingRequests;
requestQueue.prototype.scheduleCheckPendingRequests = function (this: { pending: unknown[] }) {
  if (this.pending.length > 0) scheduleCheck.call(this);
};

/**
 * A Kafka client (kafkajs, ADR 0019), its own log lines written through the app's
 * logger. Its warnings and errors only: a consumer's joins and fetches at info are the app's
 * own lines to write.
 */
export function kafkaClient(
  brokers: string[],
  clientId: string,
  logger: Logger,
  security: KafkaSecurity = {},
): Kafka {
  return new Kafka({
    clientId,
    brokers,
    ...kafkaSecurity(security),
    logLevel: logLevel.WARN,
    // Kafka gone for a while (a broker restart, a failover) is waited out, not given up on.
    retry: { retries: 8, initialRetryTime: 250, maxRetryTime: 5000 },
    logCreator:
      () =>
      ({ level, log }) => {
        const { message, ...fields } = log;
        logger[levels.get(level) ?? "info"]({ kafka: fields }, `kafka: ${message}`);
      },
  });
}

/** How an app proves itself to Kafka, where the listener asks (Kubernetes: a KafkaUser over TLS). */
export interface KafkaSecurity {
  /** The CA the brokers' certificates are signed by: TLS to the brokers when given. */
  caFile?: string;
  sasl?: { mechanism: "scram-sha-512" | "scram-sha-256"; username: string; password: string };
}

function kafkaSecurity({ caFile, sasl }: KafkaSecurity): Pick<KafkaConfig, "ssl" | "sasl"> {
  const ssl = caFile ? { ssl: { ca: [readFileSync(caFile, "utf8")] } } : {};
  // One object per mechanism in kafkajs's types: the same shape for both SCRAM ones.
  return sasl ? { ...ssl, sasl: sasl as SASLOptions } : ssl;
}
