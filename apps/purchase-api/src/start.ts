import { once } from "node:events";
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { redisClient, withScripts } from "@flashgate/cache";
import { createPool, warmPool } from "@flashgate/db";
import type { Logger } from "@flashgate/logger";
import { createApp } from "./app.ts";
import type { PurchaseApiConfig } from "./config.ts";
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
  const app = createApp({ config, redis, subscriber, pool, readPool, probePool, logger });
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
