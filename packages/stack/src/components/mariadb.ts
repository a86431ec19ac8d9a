import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import mysql, { type Connection } from "mysql2/promise";
import type { Component, StackContext } from "../context.ts";
import { sbinPath } from "../prerequisites.ts";
import { startDaemon, tailLog } from "../processes.ts";
import { StackError, waitFor } from "../wait.ts";

export function adminConnection(
  ctx: StackContext,
  password: string = ctx.secrets.mariadbRootPassword,
): Promise<Connection> {
  return mysql.createConnection({
    socketPath: ctx.paths.mariadbSocket,
    user: "root",
    password,
    multipleStatements: false,
    connectTimeout: 2000,
  });
}

function initialiseDataDir(ctx: StackContext) {
  mkdirSync(ctx.paths.mariadbData, { recursive: true });
  const result = spawnSync(
    "mariadb-install-db",
    [
      "--no-defaults",
      `--datadir=${ctx.paths.mariadbData}`,
      `--user=${userInfo().username}`,
      "--auth-root-authentication-method=normal",
      "--skip-test-db",
    ],
    { encoding: "utf8", env: { ...process.env, PATH: sbinPath() } },
  );
  if (result.status !== 0)
    throw new StackError(`mariadb-install-db failed: ${(result.stderr || result.stdout).slice(-2000)}`);
}

/** Fresh data dirs come up with a password-less root; the first start gives it the local secret. */
async function secureRoot(ctx: StackContext) {
  let connection: Connection;
  try {
    connection = await adminConnection(ctx);
  } catch {
    connection = await adminConnection(ctx, "");
    await connection.query("ALTER USER 'root'@'localhost' IDENTIFIED BY ?", [
      ctx.secrets.mariadbRootPassword,
    ]);
  }
  await connection.end();
}

export const mariadb: Component = {
  name: "mariadb",
  port: (ctx) => ({ port: ctx.config.FLASHGATE_MARIADB_PORT, variable: "FLASHGATE_MARIADB_PORT" }),
  async start(ctx) {
    const step = ctx.progress.step(`MariaDB on 127.0.0.1:${ctx.config.FLASHGATE_MARIADB_PORT}`);
    if (!existsSync(join(ctx.paths.mariadbData, "mysql"))) {
      step.waiting("initialising a fresh data dir");
      initialiseDataDir(ctx);
    }
    const daemon = startDaemon(
      {
        name: "mariadb",
        command: "mariadbd",
        env: { PATH: sbinPath() },
        args: [
          "--no-defaults",
          `--datadir=${ctx.paths.mariadbData}`,
          `--user=${userInfo().username}`,
          `--port=${ctx.config.FLASHGATE_MARIADB_PORT}`,
          "--bind-address=127.0.0.1",
          `--socket=${ctx.paths.mariadbSocket}`,
          `--pid-file=${join(ctx.paths.mariadbData, "mariadbd.pid")}`,
          `--log-bin=${join(ctx.paths.mariadbData, "binlog")}`,
          "--binlog-format=ROW",
          "--binlog-row-image=FULL",
          "--server-id=1",
          "--expire-logs-days=3",
          "--default-time-zone=+00:00",
          "--character-set-server=utf8mb4",
          "--collation-server=utf8mb4_bin",
          "--max-connections=400",
          "--innodb-buffer-pool-size=256M",
          `--log-error=${join(ctx.paths.logs, "mariadb-error.log")}`,
        ],
      },
      ctx.paths,
    );
    await waitFor(
      "MariaDB to accept connections",
      async () => {
        try {
          await secureRoot(ctx);
          return true;
        } catch {
          return false;
        }
      },
      {
        timeoutMs: 60_000,
        progress: step,
        failFast: () =>
          daemon.exited() !== null
            ? `mariadbd exited:\n${tailLog(join(ctx.paths.logs, "mariadb-error.log"))}${tailLog(daemon.logFile)}`
            : undefined,
      },
    );
    step.done();
  },
  async healthy(ctx) {
    try {
      const connection = await adminConnection(ctx);
      await connection.query("SELECT 1");
      await connection.end();
      return true;
    } catch {
      return false;
    }
  },
};
