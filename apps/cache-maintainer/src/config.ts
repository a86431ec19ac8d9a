import { appFields, databaseFields, defaultPorts, parseConfig } from "@flashgate/config";
import { z } from "zod";

const maintainerConfigSchema = z.object({
  ...appFields(defaultPorts.cacheMaintainer),
  ...databaseFields,
  KAFKA_BROKERS: z.string().regex(/^[\w.-]+:\d+(,[\w.-]+:\d+)*$/, "must be host:port[,host:port…]"),
  CONSUMER_GROUP: z.string().min(1).default("flashgate-cache-maintainer"),
  EXPIRY_INTERVAL_MS: z.coerce.number().int().min(0).default(1000),
  EXPIRY_BATCH: z.coerce.number().int().min(1).default(200),
  HEARTBEAT_INTERVAL_MS: z.coerce.number().int().min(100).default(1000),
  DRIFT_INTERVAL_MS: z.coerce.number().int().min(0).default(10_000),
  // On: a drifted SKU is rebuilt from MySQL (fenced by position) without waiting for a human.
  DRIFT_AUTO_REPAIR: z
    .enum(["true", "false"])
    .default("true")
    .transform((v) => v === "true"),
  WATCHDOG_INTERVAL_MS: z.coerce.number().int().min(50).default(500),
  // The Debezium connector this maintainer keeps reading (restarted when FAILED, repositioned when its
  // binlog position is lost); 0 turns the supervision off.
  KAFKA_CONNECT_URL: z.url().default(`http://127.0.0.1:${defaultPorts.connect}`),
  CONNECTOR_NAME: z.string().min(1).default("flashgate-sale"),
  CONNECTOR_CHECK_INTERVAL_MS: z.coerce.number().int().min(0).default(2000),
  // No heartbeat applied for this long: changed SKUs are loaded from MySQL directly (0: never).
  CDC_STALL_MS: z.coerce.number().int().min(0).default(3000),
  // After a failover, the CDC topics are read back this far before it to name the commits it lost: at
  // least the replica's worst lag.
  // Every database server's own URL (comma-separated), where the database runs a primary and replicas:
  // whichever replicates reports its lag (flashgate_database_replica_lag_seconds).
  DATABASE_NODE_URLS: z
    .string()
    .default("")
    .transform((value) => value.split(",").filter(Boolean))
    .pipe(z.array(z.url())),
  LOST_COMMIT_LOOKBACK_MS: z.coerce.number().int().min(1000).default(600_000),
});

export const loadConfig = (env: Record<string, string | undefined>) =>
  parseConfig(maintainerConfigSchema, env);

export type MaintainerConfig = z.infer<typeof maintainerConfigSchema>;
