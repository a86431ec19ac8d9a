import { redisClient, withScripts } from "@flashgate/cache";
import { createLogger } from "@flashgate/logger";
import { serve } from "@hono/node-server";
import { createApp } from "./app.ts";
import { createCollector } from "./collector.ts";
import { loadConfig } from "./config.ts";

const config = loadConfig(process.env);
const logger = createLogger("dashboard", config.LOG_LEVEL);
const redis = withScripts(redisClient(config.REDIS_URL, { maxRetriesPerRequest: 1, connectTimeout: 1000 }));
redis.on("error", (error) => logger.warn({ err: error.message }, "redis connection error"));
const collector = createCollector({
  redis,
  maintainerUrl: config.MAINTAINER_URL,
  apiMetricsUrl: config.PURCHASE_API_METRICS_URL,
});
const app = createApp({
  collector,
  redis,
  logger,
  sampleIntervalMs: config.SAMPLE_INTERVAL_MS,
  password: config.DASHBOARD_PASSWORD,
});
const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST }, (info) =>
  logger.info({ port: info.port }, "dashboard listening"),
);

const shutdown = () => {
  server.close();
  redis.disconnect();
  setTimeout(() => process.exit(0), 500).unref();
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
