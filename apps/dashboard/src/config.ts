import { parseConfig } from "@flashgate/config";
import { z } from "zod";

const dashboardConfigSchema = z.object({
  PORT: z.coerce.number().int().min(1).max(65535).default(8084),
  DATABASE_URL: z.string().startsWith("mysql://", "must be a mysql:// URL"),
  REDIS_URL: z.string().startsWith("redis://", "must be a redis:// URL"),
  KAFKA_CONNECT_URL: z.url().default("http://127.0.0.1:8083"),
  MAINTAINER_URL: z.url().default("http://127.0.0.1:8082"),
  PURCHASE_API_URL: z.url().default("http://127.0.0.1:8080"),
  SAMPLE_INTERVAL_MS: z.coerce.number().int().min(200).default(2000),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

export const loadConfig = (env: Record<string, string | undefined>) =>
  parseConfig(dashboardConfigSchema, env);
