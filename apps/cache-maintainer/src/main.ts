import { withScripts } from "@flashgate/cache";
import { closeExpiredOrders, createPool } from "@flashgate/db";
import { createLogger } from "@flashgate/logger";
import {
  createApplier,
  createDeadLetterSink,
  createMaintainerMetrics,
  createRebuilder,
  startConsumer,
} from "@flashgate/maintainer";
import { serve } from "@hono/node-server";
import { Redis } from "ioredis";
import { createApp } from "./app.ts";
import { loadConfig } from "./config.ts";

const config = loadConfig(process.env);
const logger = createLogger("cache-maintainer", config.LOG_LEVEL);
const redis = withScripts(new Redis(config.REDIS_URL, { maxRetriesPerRequest: 2, connectTimeout: 1000 }));
redis.on("error", (error) => logger.warn({ err: error.message }, "redis connection error"));
const pool = createPool(config.DATABASE_URL, { connectionLimit: 8 });
const metrics = createMaintainerMetrics();
const brokers = config.KAFKA_BROKERS.split(",");

const rebuilder = createRebuilder({ redis, pool, metrics, logger });
await rebuilder.check();
const watchdog = setInterval(() => {
  rebuilder.check().catch((error) => logger.warn({ err: error.message }, "rebuild check failed"));
}, config.WATCHDOG_INTERVAL_MS);

// Order expiry writes MySQL only (PENDING → CLOSED + the unit back); the cache learns of it through CDC.
let expiring = false;
const expiry =
  config.EXPIRY_INTERVAL_MS > 0
    ? setInterval(async () => {
        if (expiring) return;
        expiring = true;
        try {
          const closed = await closeExpiredOrders(pool, config.EXPIRY_BATCH);
          if (closed) logger.info({ closed }, "expired orders closed");
        } catch (error) {
          logger.warn({ err: (error as Error).message }, "order expiry failed");
        } finally {
          expiring = false;
        }
      }, config.EXPIRY_INTERVAL_MS)
    : undefined;

const deadLetters = createDeadLetterSink(brokers);
const consumer = await startConsumer({
  brokers,
  groupId: config.CONSUMER_GROUP,
  applier: createApplier({ redis, pool, metrics, logger }),
  deadLetters,
  metrics,
  logger,
});

const server = serve(
  {
    fetch: createApp({ redis, metrics, consuming: () => consumer.ready }).fetch,
    port: config.PORT,
    hostname: "127.0.0.1",
  },
  (info) => logger.info({ port: info.port, group: config.CONSUMER_GROUP }, "cache-maintainer running"),
);

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  logger.info("stopping: finishing the batch in hand, committing, leaving the group");
  clearInterval(watchdog);
  clearInterval(expiry);
  setTimeout(() => process.exit(1), 15_000).unref();
  await consumer.stop();
  await deadLetters.close().catch(() => {});
  server.close();
  await pool.end().catch(() => {});
  redis.disconnect();
  process.exit(0);
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
