import { redisClient, withScripts } from "@flashgate/cache";
import { bumpHeartbeat, closeAllExpiredOrders, createPool } from "@flashgate/db";
import { kafkaClient } from "@flashgate/kafka";
import type { Logger } from "@flashgate/logger";
import {
  createApplier,
  createCdcFallback,
  createConnectorSupervisor,
  createDatabaseWatch,
  createDeadLetterSink,
  createDriftCheck,
  createLostCommits,
  createMaintainerMetrics,
  createRebuilder,
  startConsumer,
} from "@flashgate/maintainer";
import { serve } from "@hono/node-server";
import { createApp } from "./app.ts";
import type { MaintainerConfig } from "./config.ts";
import { connectorControl } from "./connector-control.ts";
import { every } from "./every.ts";

/**
 * The cache-maintainer running: its first cache check, its periodic tasks (watchdog, expiry, heartbeat,
 * drift check, connector supervisor, CDC stall fallback), the consumer and the operational routes;
 * `stop` finishes the batch in hand, commits, leaves the group and closes every client.
 */
export async function startMaintainer(config: MaintainerConfig, logger: Logger) {
  const redis = withScripts(redisClient(config.REDIS_URL, { maxRetriesPerRequest: 2, connectTimeout: 1000 }));
  redis.on("error", (error) => logger.warn({ err: error.message }, "redis connection error"));
  const pool = createPool(config.DATABASE_URL, { connectionLimit: 8 });
  const metrics = createMaintainerMetrics();
  const brokers = config.KAFKA_BROKERS.split(",");

  const kafka = kafkaClient(brokers, `flashgate-cache-maintainer-${process.pid}`, logger, {
    caFile: config.KAFKA_CA_FILE,
    sasl: config.KAFKA_SASL,
  });
  const lostCommits = createLostCommits({
    kafka,
    pool,
    redis,
    metrics,
    logger,
    lookbackMs: config.LOST_COMMIT_LOOKBACK_MS,
  });
  const rebuilder = createRebuilder({ redis, pool, metrics, logger, findLostCommits: lostCommits.find });
  // A dependency down at start is not fatal: the watchdog retries, and the consumer holds its batches.
  await rebuilder
    .check()
    .catch((error) =>
      logger.error({ err: (error as Error).message }, "initial cache check failed; the watchdog retries"),
    );
  const stopWatchdog = every(config.WATCHDOG_INTERVAL_MS, "rebuild check", () => rebuilder.check(), logger);

  // Order expiry writes MySQL only (PENDING → CLOSED + the unit back); the cache learns of it through CDC.
  const stopExpiry = every(
    config.EXPIRY_INTERVAL_MS,
    "order expiry",
    async () => {
      const closed = await closeAllExpiredOrders(pool, config.EXPIRY_BATCH);
      if (closed) logger.info({ closed }, "expired orders closed");
    },
    logger,
  );

  // The lag probe, and what keeps the drift watermark advancing on a quiet database (bumpHeartbeat).
  const stopHeartbeat = every(
    config.HEARTBEAT_INTERVAL_MS,
    "heartbeat probe",
    () => bumpHeartbeat(pool),
    logger,
  );

  const stopDriftCheck = every(
    config.DRIFT_INTERVAL_MS,
    "drift check",
    createDriftCheck({ pool, redis, metrics, logger, repair: config.DRIFT_AUTO_REPAIR }),
    logger,
  );

  const database = createDatabaseWatch({ pool, nodeUrls: config.DATABASE_NODE_URLS, metrics, logger });
  const stopDatabaseWatch = every(5000, "database watch", database.check, logger);

  const supervisor = createConnectorSupervisor({
    connect: connectorControl(config),
    connector: config.CONNECTOR_NAME,
    pool,
    redis,
    metrics,
    logger,
  });
  const stopSupervisor = every(
    config.CONNECTOR_CHECK_INTERVAL_MS,
    "connector check",
    supervisor.check,
    logger,
  );

  const deadLetters = createDeadLetterSink(kafka);
  const consumer = await startConsumer({
    kafka,
    groupId: config.CONSUMER_GROUP,
    applier: createApplier({
      redis,
      pool,
      metrics,
      logger,
      isolate: rebuilder.isolate,
      lostCommits,
    }),
    redis,
    deadLetters,
    metrics,
    logger,
  });

  // Started once the group is joined: the stream gets its stall time from then to show it moves.
  const fallback = createCdcFallback({
    pool,
    redis,
    rebuilder,
    metrics,
    logger,
    stallMs: config.CDC_STALL_MS,
  });
  const stopFallback = every(
    config.CDC_STALL_MS > 0 ? 1000 : 0,
    "CDC stall fallback",
    fallback.check,
    logger,
  );

  const server = serve(
    {
      fetch: createApp({ redis, metrics, consuming: () => consumer.ready }).fetch,
      port: config.PORT,
      hostname: config.HOST,
    },
    (info) => logger.info({ port: info.port, group: config.CONSUMER_GROUP }, "cache-maintainer running"),
  );

  return {
    async stop() {
      for (const stop of [
        stopWatchdog,
        stopExpiry,
        stopHeartbeat,
        stopDriftCheck,
        stopSupervisor,
        stopFallback,
        stopDatabaseWatch,
      ])
        stop();
      await database.close().catch(() => {});
      await consumer.stop();
      await deadLetters.close().catch(() => {});
      server.close();
      await pool.end().catch(() => {});
      redis.disconnect();
    },
  };
}
