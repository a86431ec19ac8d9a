import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { ConfigError, parseConfig, secret } from "@flashgate/config";
import { appDbUser, databaseName, debeziumDbUser, maintainerDbUser, migrate } from "@flashgate/db";
import type { Command } from "commander";
import mysql from "mysql2/promise";
import { z } from "zod";
import { localStack } from "../local-stack.ts";

/** Your own server: an account that may create the database, users and the trigger, and the apps' and Debezium's passwords. */
const ownServerSchema = z.object({
  MIGRATE_ADMIN_URL: z.url(),
  // The admin's password as a file (a compose secret), so that it is in no process's environment.
  MIGRATE_ADMIN_PASSWORD_FILE: z.string().min(1).optional(),
  APP_DB_PASSWORD: secret(),
  MAINTAINER_DB_PASSWORD: secret(),
  DEBEZIUM_DB_PASSWORD: secret(),
  // A server starting beside this command (docker compose's one-shot setup): keep trying this long.
  MIGRATE_WAIT_S: z.coerce.number().int().min(0).default(0),
});

async function connectWithin(uri: string, waitS: number) {
  const deadline = Date.now() + waitS * 1000;
  for (;;) {
    try {
      return await mysql.createConnection({ uri, connectTimeout: 5000 });
    } catch (error) {
      if (Date.now() >= deadline)
        throw new ConfigError(`MIGRATE_ADMIN_URL: cannot connect (${(error as Error).message})`);
      process.stderr.write(`waiting for the database (${(error as Error).message})\n`);
      await sleep(1000);
    }
  }
}

function adminUrl(config: z.infer<typeof ownServerSchema>): string {
  if (!config.MIGRATE_ADMIN_PASSWORD_FILE) return config.MIGRATE_ADMIN_URL;
  const url = new URL(config.MIGRATE_ADMIN_URL);
  try {
    url.password = encodeURIComponent(readFileSync(config.MIGRATE_ADMIN_PASSWORD_FILE, "utf8").trim());
  } catch (error) {
    throw new ConfigError(`MIGRATE_ADMIN_PASSWORD_FILE: cannot read (${(error as Error).message})`);
  }
  return url.toString();
}

export function registerMigrateCommand(program: Command) {
  program
    .command("migrate")
    .description(
      "create the flashgate database, its users and its tables (idempotent): on the local stack, or on your own MySQL 8 / MariaDB with MIGRATE_ADMIN_URL",
    )
    .action(async () => {
      if (!process.env.MIGRATE_ADMIN_URL) {
        const { runMigrations, stackContext } = await localStack();
        return runMigrations(stackContext());
      }
      const config = parseConfig(ownServerSchema, process.env);
      const admin = await connectWithin(adminUrl(config), config.MIGRATE_WAIT_S);
      try {
        const { applied } = await migrate(admin, {
          database: databaseName,
          appUser: { name: appDbUser, password: config.APP_DB_PASSWORD },
          maintainerUser: { name: maintainerDbUser, password: config.MAINTAINER_DB_PASSWORD },
          debeziumUser: { name: debeziumDbUser, password: config.DEBEZIUM_DB_PASSWORD },
        });
        process.stdout.write(applied.length ? `applied ${applied.join(", ")}\n` : "up to date\n");
      } finally {
        await admin.end();
      }
    });
}
