import { join } from "node:path";
import type { Command } from "commander";
import { localStack } from "../local-stack.ts";

export function registerComposeEnvCommand(program: Command) {
  program
    .command("compose-env")
    .description(
      "write .env for docker compose: fresh secrets (those already there are kept) and the database engine",
    )
    .option("--db <engine>", "mysql or mariadb", "mysql")
    .option("--file <path>", "where to write it (default: the repository's .env)")
    .action(async (options: { db: string; file?: string }) => {
      const { databaseEngines, repoRoot, StackError, writeComposeEnv } = await localStack();
      const engine = databaseEngines.find((name) => name === options.db);
      if (!engine) throw new StackError(`--db must be one of ${databaseEngines.join(", ")}`);
      const file = options.file ?? join(repoRoot, ".env");
      const added = writeComposeEnv(file, engine);
      process.stdout.write(
        `${file}: ${added.length ? `added ${added.join(", ")}` : "complete"} (engine ${engine})\n`,
      );
    });
}
