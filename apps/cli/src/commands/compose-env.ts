import { join } from "node:path";
import { databaseEngines } from "@flashgate/config";
import { repoRoot, StackError, writeComposeEnv } from "@flashgate/stack";
import type { Command } from "commander";

export function registerComposeEnvCommand(program: Command) {
  program
    .command("compose-env")
    .description(
      "write .env for docker compose: fresh secrets (those already there are kept) and the database engine",
    )
    .option("--db <engine>", "mysql or mariadb", "mysql")
    .option("--file <path>", "where to write it", join(repoRoot, ".env"))
    .action((options: { db: string; file: string }) => {
      const engine = databaseEngines.find((name) => name === options.db);
      if (!engine) throw new StackError(`--db must be one of ${databaseEngines.join(", ")}`);
      const added = writeComposeEnv(options.file, engine);
      process.stdout.write(
        `${options.file}: ${added.length ? `added ${added.join(", ")}` : "complete"} (engine ${engine})\n`,
      );
    });
}
