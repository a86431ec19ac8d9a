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
