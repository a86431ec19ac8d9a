import { once } from "node:events";
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { type FlashgateRedis, redisClient, withScripts } from "@flashgate/cache";
import { createPool, warmPool } from "@flashgate/db";
import {
  createQueueProducer,
  ensurePurchaseQueue,
  followQueueBacklog,
  type Kafka,
  kafkaClient,
  type QueueBacklog,
  runQueueWriter,
} from "@flashgate/kafka";
import type { Logger } from "@flashgate/logger";
import { createQueueWriter } from "@flashgate/sale";
import { createApp } from "./app.ts";
import type { PurchaseApiConfig } from "./config.ts";
import { type Metrics, writerObserver } from "./metrics.ts";
import { createHttpServer } from "./server.ts";

/**
 * The decisions' pool, a small one with a bounded queue for the reads anyone can cause, and one
 * connection for the readiness probe: it must not queue behind decisions waiting for row locks, or every
 * instance would turn unready at once while its database answers.
 */
function createPools(config: PurchaseApiConfig) {
  return {
    pool: createPool(config.DATABASE_URL, { connectionLimit: config.DB_POOL_SIZE, multipleStatements: true }),
    // A full queue refuses at once ("Queue limit reached"): the caller gets a 503, the purchases nothing.
    readPool: createPool(config.DATABASE_URL, {
      connectionLimit: config.DB_READ_POOL_SIZE,
      queueLimit: config.DB_READ_QUEUE,
    }),
    probePool: createPool(config.DATABASE_URL, { connectionLimit: 1, queueLimit: 8 }),
  };
}

/**
 * The purchase API running: its Redis clients, its pools, the app behind its bounded HTTP server,
 * listening on `listen` (the config's port and host unless told otherwise); `close` ends them all.
 * A dependency down at start is not fatal: requests get 503 until it answers.
 */
export async function startPurchaseApi(
  config: PurchaseApiConfig,
  logger: Logger,
  listen: { port: number; host: string } = { port: config.PORT, host: config.HOST },
) {
  // Fail fast: with Redis down a request must get 503 at once, not wait in an offline queue.
  const redis = withScripts(
    redisClient(config.REDIS_URL, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1000,
    }),
  );
  redis.on("error", (error) => logger.warn({ err: error.message }, "redis connection error"));
  const subscriber = redisClient(config.REDIS_URL, { connectTimeout: 1000 });
  subscriber.on("error", (error) => logger.warn({ err: error.message }, "redis subscriber connection error"));
  const { pool, readPool, probePool } = createPools(config);
  await warmPool(pool, config.DB_POOL_SIZE).catch((error) =>
    logger.warn({ err: error.message }, "database not reachable yet"),
  );
  const kafka =
    config.KAFKA_BROKERS &&
    kafkaClient(config.KAFKA_BROKERS.split(","), `flashgate-purchase-api-${process.pid}`, logger, {
      caFile: config.KAFKA_CA_FILE,
      sasl: config.KAFKA_SASL,
    });
  const writing = config.QUEUE_WRITER === "on";
  // The queue's backlog and arrival rate: where this instance queues buyers (an activity may ask for the
  // queue whatever PURCHASE_ADMISSION says), and where its writer yields.
  const backlog = kafka ? followQueueBacklog(kafka, 1000, logger) : undefined;
  const queue = kafka && backlog ? queueAdmission(kafka, backlog, config, logger) : undefined;
  const app = createApp({ config, redis, subscriber, pool, readPool, probePool, logger, queue });
  if (backlog) setInterval(() => app.metrics.queueBacklog.set(backlog.backlog()), 1000).unref();
  const writer =
    kafka && backlog && writing
      ? startWriter(kafka, backlog, config, { redis, metrics: app.metrics, logger })
      : undefined;
  const server = createHttpServer(app.listener, {
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: config.HTTP_MAX_CONNECTIONS,
    maxConnectionsPerAddress: config.HTTP_MAX_CONNECTIONS_PER_ADDRESS,
  });
  // A sale's buyers connect all at once: a deep accept queue (node's default is 511) lets the kernel hold
  // them until the server takes them, rather than drop their handshakes.
  server.listen({ port: listen.port, host: listen.host, backlog: 4096 });
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  logger.info({ port }, "purchase-api listening");
  const metricsServer =
    config.METRICS_PORT === undefined
      ? undefined
      : await listenForMetrics(app.metricsListener, config.METRICS_PORT, listen.host);
  return {
    app,
    url: `http://${listen.host}:${port}`,
    /** Where /metrics is served, when METRICS_PORT is set. */
    metricsUrl: metricsServer && `http://${listen.host}:${(metricsServer.address() as AddressInfo).port}`,
    redis,
    pool,
    /** Stops taking connections, waits for the open ones' requests, then closes every client. */
    close: () =>
      new Promise<void>((done) =>
        server.close(async () => {
          metricsServer?.close();
          await writer?.stop().catch(() => {});
          await queue?.stop().catch(() => {});
          await backlog?.stop().catch(() => {});
          await pool.end().catch(() => {});
          await readPool.end().catch(() => {});
          await probePool.end().catch(() => {});
          redis.disconnect();
          subscriber.disconnect();
          done();
        }),
      ),
  };
}

/** The operators' listener: a plain server (a scraper, not a crowd), on METRICS_PORT of the API's host. */
async function listenForMetrics(listener: RequestListener, port: number, host: string) {
  const server = createServer(listener);
  server.listen({ port, host });
  await once(server, "listening");
  return server;
}

/**
 * Where this instance queues buyers (by their activity's admission, else PURCHASE_ADMISSION; ADR 0030): the
 * queue's producer and its backlog. Kafka away at start is not fatal: buyers wait for their decision until it answers.
 */
function queueAdmission(kafka: Kafka, backlog: QueueBacklog, config: PurchaseApiConfig, logger: Logger) {
  void ensurePurchaseQueue(kafka, config.QUEUE_PARTITIONS).catch((error) =>
    logger.warn({ err: error.message }, "the purchase queue's topic not checked: Kafka not reachable yet"),
  );
  const producer = createQueueProducer(kafka, {
    sendTimeoutMs: config.QUEUE_SEND_TIMEOUT_MS,
    pauseMs: 1000,
    maxBatch: config.DB_MAX_BATCH,
    logger,
  });
  return {
    send: producer.send,
    accepting: producer.accepting,
    backlog: backlog.backlog,
    stop: () => producer.close(),
  };
}

/**
 * The queue's writer in this instance (QUEUE_WRITER, ADR 0030): up to DB_MAX_IN_FLIGHT transactions on a
 * pool of its own (the synchronous path's waits stay bounded by its guard), holding off while buyers arrive
 * faster than QUEUE_WRITER_YIELD_ABOVE a second. Kafka away at start, or a consumer kafkajs gave up on, is
 * waited out: it joins the writers' group again once Kafka answers.
 */
function startWriter(
  kafka: Kafka,
  backlog: QueueBacklog,
  config: PurchaseApiConfig,
  deps: { redis: FlashgateRedis; metrics: Metrics; logger: Logger },
) {
  const { logger } = deps;
  const pool = createPool(config.DATABASE_URL, {
    connectionLimit: config.DB_MAX_IN_FLIGHT,
    multipleStatements: true,
  });
  const decide = createQueueWriter({
    ...deps,
    pool,
    batch: {
      maxSize: config.DB_MAX_BATCH,
      maxConcurrent: config.DB_MAX_IN_FLIGHT,
      gatherMs: config.DB_BATCH_GATHER_MS,
    },
    observer: writerObserver(deps.metrics, logger),
  });
  let stopped = false;
  let running: { stop: () => Promise<void> } | undefined;
  let gaveUp: () => void = () => {};
  const loop = (async () => {
    while (!stopped) {
      try {
        await ensurePurchaseQueue(kafka, config.QUEUE_PARTITIONS);
        const ended = new Promise<void>((resolve) => {
          gaveUp = resolve;
          if (stopped) resolve();
        });
        running = await runQueueWriter(kafka, {
          decide,
          maxPerDecide: config.DB_MAX_BATCH * config.DB_MAX_IN_FLIGHT,
          partitionsAtOnce: 4,
          retryPauseMs: 500,
          queueArrivals: backlog.arrivalsPerSecond,
          yieldAbove: config.QUEUE_WRITER_YIELD_ABOVE,
          quietMs: config.QUEUE_WRITER_QUIET_MS,
          maxDeferMs: config.QUEUE_WRITER_MAX_DEFER_MS,
          onStopped: () => gaveUp(),
          logger,
        });
        logger.info("purchase queue writer running");
        await ended;
        await running.stop().catch(() => {});
      } catch (error) {
        logger.warn({ err: (error as Error).message }, "purchase queue writer not started; retrying");
      }
      if (!stopped) await sleep(2000);
    }
  })();
  return {
    async stop() {
      stopped = true;
      gaveUp();
      await running?.stop().catch(() => {});
      await loop;
      await pool.end().catch(() => {});
    },
  };
}
