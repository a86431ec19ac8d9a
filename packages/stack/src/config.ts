import { defaultPorts, parseConfig, port } from "@flashgate/config";
import { z } from "zod";

/** Default ports of the dev stack (docs/architecture.md, Stacks and ports): the apps' own, and its stores'. */
export const stackPorts = {
  ...defaultPorts,
  database: 3307,
  redis: 6380,
  kafka: 9092,
  kafkaController: 9093,
} as const;

/** The database engines the stack can run; MySQL 8 is what production runs. */
export const databaseEngines = ["mysql", "mariadb"] as const;
export type DatabaseEngine = (typeof databaseEngines)[number];

/**
 * single: one process of each kind. cluster: what production past one node runs — Redis Cluster (3 masters,
 * 3 replicas), 3 Kafka brokers, 2 Connect workers, 2 purchase APIs and 2 cache-maintainers.
 */
export const topologies = ["single", "cluster"] as const;
export type Topology = (typeof topologies)[number];

export const stackConfigSchema = z.object({
  FLASHGATE_HOME: z.string().min(1).optional(),
  /** The downloaded jars (Kafka, Connect, Debezium, MySQL), shared by every home; .flashgate/jars by default. */
  FLASHGATE_JARS: z.string().min(1).optional(),
  FLASHGATE_DB: z.enum(databaseEngines).default("mysql"),
  FLASHGATE_TOPOLOGY: z.enum(topologies).default("single"),
  FLASHGATE_DB_PORT: port(stackPorts.database),
  FLASHGATE_REDIS_PORT: port(stackPorts.redis),
  FLASHGATE_KAFKA_PORT: port(stackPorts.kafka),
  FLASHGATE_KAFKA_CONTROLLER_PORT: port(stackPorts.kafkaController),
  FLASHGATE_CONNECT_PORT: port(stackPorts.connect),
  FLASHGATE_API_PORT: port(stackPorts.purchaseApi),
  FLASHGATE_API_METRICS_PORT: port(stackPorts.purchaseApiMetrics),
  FLASHGATE_MAINTAINER_PORT: port(stackPorts.cacheMaintainer),
  FLASHGATE_DASHBOARD_PORT: port(stackPorts.dashboard),
  FLASHGATE_KAFKA_HEAP: z
    .string()
    .regex(/^\d+[mg]$/, "must look like 512m or 1g")
    .default("512m"),
  FLASHGATE_CONNECT_HEAP: z
    .string()
    .regex(/^\d+[mg]$/, "must look like 512m or 1g")
    .default("768m"),
});

export type StackConfig = z.infer<typeof stackConfigSchema>;

/** The engine FLASHGATE_DB names (MySQL unless it says mariadb): the test, bench and chaos stacks follow it. */
export const databaseEngineOf = (env: Record<string, string | undefined>): DatabaseEngine =>
  parseConfig(stackConfigSchema.pick({ FLASHGATE_DB: true }), env).FLASHGATE_DB;
