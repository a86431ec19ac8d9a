import { z } from "zod";

export const port = (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback);

/** A whole number at least `min`, from an environment string. */
export const int = (fallback: number, min = 1) => z.coerce.number().int().min(min).default(fallback);

/** An HMAC key: 32 bytes at least, the size of the SHA-256 output it keys. It is never logged. */
export const secret = () =>
  z.string().refine((value) => Buffer.byteLength(value) >= 32, "must be at least 32 bytes");

/** What every flashgate app reads: where it listens, its Redis, how much it logs. */
export const appFields = (defaultPort: number) => ({
  PORT: port(defaultPort),
  // Loopback unless told otherwise: a container publishes its port from 0.0.0.0 (docker-compose.yml).
  HOST: z.string().min(1).default("127.0.0.1"),
  REDIS_URL: z.string().startsWith("redis://", "must be a redis:// URL"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

/** What an app that talks to MySQL reads besides (the dashboard does not). */
export const databaseFields = {
  DATABASE_URL: z.string().startsWith("mysql://", "must be a mysql:// URL"),
};

/**
 * Where an app reaches Kafka and, where the listener asks (Kubernetes: the app's KafkaUser over TLS),
 * its user, password and the CA that signed the brokers' certificates (TLS when set). `kafkaSasl`
 * turns the three SASL fields into one.
 */
export const kafkaFields = {
  KAFKA_BROKERS: z.string().regex(/^[\w.-]+:\d+(,[\w.-]+:\d+)*$/, "must be host:port[,host:port…]"),
  KAFKA_SASL_MECHANISM: z.enum(["scram-sha-512", "scram-sha-256"]).optional(),
  KAFKA_USERNAME: z.string().min(1).optional(),
  KAFKA_PASSWORD: z.string().min(1).optional(),
  KAFKA_CA_FILE: z.string().min(1).optional(),
};

interface KafkaSaslFields {
  KAFKA_SASL_MECHANISM?: "scram-sha-512" | "scram-sha-256";
  KAFKA_USERNAME?: string;
  KAFKA_PASSWORD?: string;
}

/** A config's SASL fields as one (`KAFKA_SASL`), or an issue when the mechanism lacks its user. */
export function kafkaSasl<T extends KafkaSaslFields>(
  { KAFKA_SASL_MECHANISM: mechanism, KAFKA_USERNAME: username, KAFKA_PASSWORD: password, ...config }: T,
  ctx: z.RefinementCtx,
) {
  if (mechanism && !(username && password))
    ctx.addIssue({
      code: "custom",
      path: ["KAFKA_SASL_MECHANISM"],
      message: "needs KAFKA_USERNAME and KAFKA_PASSWORD",
    });
  return {
    ...config,
    KAFKA_SASL: mechanism && username && password ? { mechanism, username, password } : undefined,
  };
}
