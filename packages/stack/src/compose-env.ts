import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { DatabaseEngine } from "./config.ts";
import { writePrivateFile } from "./private-file.ts";
import { generateSecrets, secretToken } from "./secrets.ts";

/** The variables docker-compose.yml reads from .env: the engine and its profile, and every secret. */
export function composeEnv(existing: Record<string, string>, engine: DatabaseEngine): Record<string, string> {
  const fresh = generateSecrets();
  // A secret already in .env stays: the volumes were initialised with it.
  return {
    DB_ROOT_PASSWORD: fresh.databaseRootPassword,
    APP_DB_PASSWORD: fresh.appDbPassword,
    MAINTAINER_DB_PASSWORD: fresh.maintainerDbPassword,
    DEBEZIUM_DB_PASSWORD: fresh.debeziumDbPassword,
    REDIS_PASSWORD: fresh.redisPassword,
    AUTH_JWT_SECRET: fresh.authJwtSecret,
    ADMIN_JWT_SECRET: fresh.adminJwtSecret,
    PAYMENT_WEBHOOK_SECRET: fresh.paymentWebhookSecret,
    // The dashboard's operators sign in with it (user operator).
    DASHBOARD_PASSWORD: fresh.dashboardPassword,
    DASHBOARD_REDIS_PASSWORD: fresh.dashboardRedisPassword,
    // Kafka Connect's REST API asks for it in compose (user flashgate); the native stack's listens on 127.0.0.1.
    CONNECT_REST_PASSWORD: secretToken(),
    COMPOSE_PROJECT_NAME: "flashgate",
    ...existing,
    // The profile starts the engine's service (docker-compose.yml); the engine picks its connector file.
    COMPOSE_PROFILES: engine,
    FLASHGATE_DB: engine,
  };
}

export const parseEnvFile = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith("#") && line.includes("="))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );

/**
 * Where compose-env keeps the database's root password beside an .env file: a directory only its owner
 * may enter, holding a file the database's own user inside the container can read (compose mounts a
 * secret with the file's own mode and owner).
 */
export const rootPasswordFileOf = (envFile: string) =>
  join(dirname(envFile), ".flashgate-compose-secrets", "db-root-password");

/**
 * Writes (or completes) an .env file, private to its owner, and the root password's file it names;
 * returns the names it added. An .env from before the file keeps its root password, moved to the file.
 */
export function writeComposeEnv(file: string, engine: DatabaseEngine): string[] {
  const existing = existsSync(file) ? parseEnvFile(readFileSync(file, "utf8")) : {};
  const { DB_ROOT_PASSWORD: rootPassword, ...env } = composeEnv(existing, engine);
  env.DB_ROOT_PASSWORD_FILE ??= rootPasswordFileOf(file);
  if (!existsSync(env.DB_ROOT_PASSWORD_FILE)) {
    mkdirSync(dirname(env.DB_ROOT_PASSWORD_FILE), { recursive: true, mode: 0o700 });
    chmodSync(dirname(env.DB_ROOT_PASSWORD_FILE), 0o700);
    writeFileSync(env.DB_ROOT_PASSWORD_FILE, rootPassword, { mode: 0o644 });
  }
  writePrivateFile(
    file,
    `# docker compose reads this (docker-compose.yml); written by \`flashgate compose-env\`. Keep it private.\n${Object.entries(
      env,
    )
      .map(([name, value]) => `${name}=${value}`)
      .join("\n")}\n`,
  );
  return Object.keys(env).filter((name) => !(name in existing));
}
