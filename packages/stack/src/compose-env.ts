import { existsSync, readFileSync } from "node:fs";
import type { DatabaseEngine } from "@flashgate/config";
import { writePrivateFile } from "./private-file.ts";
import { generateSecrets } from "./secrets.ts";

/** The variables docker-compose.yml reads from .env: the engine and its profile, and every secret. */
export function composeEnv(existing: Record<string, string>, engine: DatabaseEngine): Record<string, string> {
  const fresh = generateSecrets();
  // A secret already in .env stays: the volumes were initialised with it.
  return {
    DB_ROOT_PASSWORD: fresh.databaseRootPassword,
    APP_DB_PASSWORD: fresh.appDbPassword,
    DEBEZIUM_DB_PASSWORD: fresh.debeziumDbPassword,
    REDIS_PASSWORD: fresh.redisPassword,
    AUTH_JWT_SECRET: fresh.authJwtSecret,
    ADMIN_JWT_SECRET: fresh.adminJwtSecret,
    PAYMENT_WEBHOOK_SECRET: fresh.paymentWebhookSecret,
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

/** Writes (or completes) an .env file, private to its owner; returns the names it added. */
export function writeComposeEnv(file: string, engine: DatabaseEngine): string[] {
  const existing = existsSync(file) ? parseEnvFile(readFileSync(file, "utf8")) : {};
  const env = composeEnv(existing, engine);
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
