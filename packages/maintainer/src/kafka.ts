import type { Logger } from "@flashgate/logger";
import { Kafka, logLevel } from "kafkajs";

const levels = new Map<logLevel, "error" | "warn" | "info" | "debug">([
  [logLevel.ERROR, "error"],
  [logLevel.WARN, "warn"],
  [logLevel.INFO, "info"],
  [logLevel.DEBUG, "debug"],
]);

/**
 * The maintainer's Kafka client (kafkajs, ADR 0019), its own log lines written through the maintainer's
 * logger. Its warnings and errors only: a consumer's joins and fetches at info are the maintainer's
 * own lines to write.
 */
export function kafkaClient(brokers: string[], clientId: string, logger: Logger): Kafka {
  return new Kafka({
    clientId,
    brokers,
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
