import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { databaseName, dbaDbUser } from "@flashgate/db";
import type { DatabaseEngine } from "@flashgate/stack";
import type { Command } from "commander";
import { localStack } from "../local-stack.ts";

/** The engine's own client: MySQL's, or MariaDB's, which speaks to both. */
const clientCommand = (StackError: new (message: string) => Error) => {
  const found = ["mysql", "mariadb"].find((command) => !spawnSync(command, ["--version"]).error);
  if (!found)
    throw new StackError("no SQL client: install one with: apt-get install -y default-mysql-client");
  return found;
};

/**
 * The DBA's session, in one statement (the client runs one on connecting). UTC, as the apps stamp and read
 * times (updated_at, a sale's window), whatever the server's own zone. READ COMMITTED with a short lock
 * wait, as the apps' sessions: a transaction a DBA leaves open locks the rows it changed, not the ranges
 * around them (REPEATABLE READ's next-key locks on `by_sku` held every new order of the SKU, and so its
 * stock row, until buyers were refused as contended). MariaDB 10 names the isolation `tx_isolation`.
 */
const dbaSession = (engine: DatabaseEngine) =>
  `SET time_zone = '+00:00', SESSION ${engine === "mariadb" ? "tx_isolation" : "transaction_isolation"} = 'READ-COMMITTED', SESSION innodb_lock_wait_timeout = 5`;

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
          `init-command=${dbaSession(ctx.config.FLASHGATE_DB)}`,
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
