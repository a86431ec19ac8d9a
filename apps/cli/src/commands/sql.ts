import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { databaseName, dbaDbUser } from "@flashgate/db";
import type { Command } from "commander";
import { localStack } from "../local-stack.ts";

/** The engine's own client: MySQL's, or MariaDB's, which speaks to both. */
const clientCommand = (StackError: new (message: string) => Error) => {
  const found = ["mysql", "mariadb"].find((command) => !spawnSync(command, ["--version"]).error);
  if (!found)
    throw new StackError("no SQL client: install one with: apt-get install -y default-mysql-client");
  return found;
};

export function registerSqlCommand(program: Command) {
  program
    .command("sql")
    .description(
      "the SQL client (mysql or mariadb) on the running stack's database as its DBA account: rows of the sale tables, nothing else; interactive, -e, or a file",
    )
    .argument("[file]", "a file of statements to run")
    .option("-e, --execute <statements>", "run these statements and exit")
    .action(async (file: string | undefined, options: { execute?: string }) => {
      const { StackError, stackContext, writePrivateFile } = await localStack();
      const ctx = stackContext();
      // The password goes in a private file the client reads, never on a command line `ps` shows.
      const dir = mkdtempSync(join(tmpdir(), "flashgate-sql-"));
      const defaults = join(dir, "client.cnf");
      writePrivateFile(
        defaults,
        [
          "[client]",
          "host=127.0.0.1",
          `port=${ctx.config.FLASHGATE_DB_PORT}`,
          `user=${dbaDbUser}`,
          `password=${ctx.secrets.dbaDbPassword}`,
          `database=${databaseName}`,
          // The apps stamp and read times in UTC (updated_at, a sale's window); a DBA's NOW() must too,
          // whatever the server's own zone.
          "init-command=SET time_zone = '+00:00'",
          "",
        ].join("\n"),
      );
      try {
        const client = spawn(
          clientCommand(StackError),
          [`--defaults-extra-file=${defaults}`, ...(options.execute ? ["-e", options.execute] : [])],
          { stdio: [file ? openSync(file, "r") : "inherit", "inherit", "inherit"] },
        );
        process.exitCode = await new Promise<number>((resolve, reject) => {
          client.once("error", reject);
          client.once("exit", (code) => resolve(code ?? 1));
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
}
