import { redisClient, withScripts } from "@flashgate/cache";
import { warmPool } from "@flashgate/db";
import { createLogger } from "@flashgate/logger";
import { createApp, createPools } from "./app.ts";
import { loadConfig } from "./config.ts";
import { createHttpServer } from "./server.ts";

const config = loadConfig(process.env);
const logger = createLogger("purchase-api", config.LOG_LEVEL);
// Fail fast: with Redis down a request must get 503 at once, not wait in an offline queue.
const redis = withScripts(
  redisClient(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 1000 }),
);
redis.on("error", (error) => logger.warn({ err: error.message }, "redis connection error"));
const subscriber = redisClient(config.REDIS_URL, { connectTimeout: 1000 });
subscriber.on("error", (error) => logger.warn({ err: error.message }, "redis subscriber connection error"));
const { pool, readPool } = createPools(config);
await warmPool(pool, config.DB_POOL_SIZE).catch((error) =>
  logger.warn({ err: error.message }, "database not reachable yet"),
);
const app = createApp({ config, redis, subscriber, pool, readPool, logger });

const server = createHttpServer(app.listener, {
  headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
  requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
  keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  maxConnections: config.HTTP_MAX_CONNECTIONS,
  maxConnectionsPerAddress: config.HTTP_MAX_CONNECTIONS_PER_ADDRESS,
}).listen(config.PORT, config.HOST, () => logger.info({ port: config.PORT }, "purchase-api listening"));

const shutdown = () => {
  logger.info("shutting down");
  server.close(async () => {
    await pool.end().catch(() => {});
    await readPool.end().catch(() => {});
    redis.disconnect();
    subscriber.disconnect();
    process.exit(0);
  });
  setTimeout(() => process.exit(0), 5000).unref();
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
