import { ConfigError, parseConfig, secret } from "@flashgate/config";
import { migrate } from "@flashgate/db";
import { appDbUser, databaseName, debeziumDbUser, runMigrations, stackContext } from "@flashgate/stack";
import type { Command } from "commander";
import mysql from "mysql2/promise";
import { z } from "zod";

/** Your own server: an account that may create the database, users and the trigger, and the two users' passwords. */
const ownServerSchema = z.object({
  MIGRATE_ADMIN_URL: z.url(),
  APP_DB_PASSWORD: secret(),
  DEBEZIUM_DB_PASSWORD: secret(),
});

export function registerMigrateCommand(program: Command) {
  program
    .command("migrate")
    .description(
      "create the flashgate database, its two users and its tables (idempotent): on the local stack, or on your own MySQL 8 / MariaDB with MIGRATE_ADMIN_URL",
    )
    .action(async () => {
      if (!process.env.MIGRATE_ADMIN_URL) return runMigrations(stackContext());
      const config = parseConfig(ownServerSchema, process.env);
      const admin = await mysql
        .createConnection({ uri: config.MIGRATE_ADMIN_URL, connectTimeout: 5000 })
        .catch((error: Error) => {
          throw new ConfigError(`MIGRATE_ADMIN_URL: cannot connect (${error.message})`);
        });
      try {
        const { applied } = await migrate(admin, {
          database: databaseName,
          appUser: { name: appDbUser, password: config.APP_DB_PASSWORD },
          debeziumUser: { name: debeziumDbUser, password: config.DEBEZIUM_DB_PASSWORD },
        });
        process.stdout.write(applied.length ? `applied ${applied.join(", ")}\n` : "up to date\n");
      } finally {
        await admin.end();
      }
    });
}
