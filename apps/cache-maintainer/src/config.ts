import {
  appFields,
  databaseFields,
  defaultPorts,
  kafkaFields,
  kafkaSasl,
  parseConfig,
} from "@flashgate/config";
import { z } from "zod";

const maintainerConfigSchema = z
  .object({
    ...appFields(defaultPorts.cacheMaintainer),
    ...databaseFields,
    ...kafkaFields,
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
    // Who carries out the supervisor's actions: Connect's REST API, or Strimzi's operator through the
    // connector's KafkaConnector resource where Strimzi owns it (README: Kubernetes).
    CONNECTOR_CONTROL: z.enum(["rest", "strimzi"]).default("rest"),
    // The Kubernetes API for CONNECTOR_CONTROL=strimzi: the pod's own, through its service account, unless given.
    KUBERNETES_API_URL: z.url().optional(),
    KUBERNETES_TOKEN_FILE: z.string().min(1).optional(),
    KUBERNETES_NAMESPACE: z.string().min(1).optional(),
    CONNECTOR_CHECK_INTERVAL_MS: z.coerce.number().int().min(0).default(2000),
    // No heartbeat applied for this long: changed SKUs are loaded from MySQL directly (0: never).
    CDC_STALL_MS: z.coerce.number().int().min(0).default(3000),
    // Every database server's own URL (comma-separated), where the database runs a primary and replicas:
    // whichever replicates reports its lag (flashgate_database_replica_lag_seconds).
    DATABASE_NODE_URLS: z
      .string()
      .default("")
      .transform((value) => value.split(",").filter(Boolean))
      .pipe(z.array(z.url())),
    // After a failover, a CDC partition with no GTID mark the new primary holds is read back this far
    // before it to name the commits it lost: at least the replica's worst lag.
    LOST_COMMIT_LOOKBACK_MS: z.coerce.number().int().min(1000).default(600_000),
  })
  .transform(kafkaSasl);

export const loadConfig = (env: Record<string, string | undefined>) =>
  parseConfig(maintainerConfigSchema, env);

export type MaintainerConfig = z.infer<typeof maintainerConfigSchema>;
