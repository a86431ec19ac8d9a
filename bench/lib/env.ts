import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import {
  appEnv,
  consoleProgress,
  databaseEngineOf,
  readPid,
  runMigrations,
  type StackContext,
  sideStackHome,
  stackContext,
  up,
} from "@flashgate/stack";
import type { Pool, RowDataPacket } from "mysql2/promise";
import { cpuMsOf } from "./systems.ts";

/** The bench stack has its own ports and data dir, so a run never disturbs a dev or test stack. */
const engine = databaseEngineOf(process.env);

const benchStackEnv: Record<string, string> = {
  FLASHGATE_HOME: sideStackHome("bench", engine),
  FLASHGATE_DB: engine,
  FLASHGATE_DB_PORT: "23307",
  FLASHGATE_REDIS_PORT: "26380",
  FLASHGATE_KAFKA_PORT: "29092",
  FLASHGATE_KAFKA_CONTROLLER_PORT: "29093",
  FLASHGATE_CONNECT_PORT: "28083",
  FLASHGATE_API_PORT: "28080",
  FLASHGATE_API_METRICS_PORT: "28081",
  FLASHGATE_MAINTAINER_PORT: "28082",
  FLASHGATE_DASHBOARD_PORT: "28084",
};

export async function databaseFacts(pool: Pool, engine: string): Promise<string> {
  const [rows] = await pool.query<RowDataPacket[]>(
    "SELECT VERSION() AS version, @@sync_binlog AS sync_binlog, @@innodb_flush_log_at_trx_commit AS flush",
  );
  const { version, sync_binlog, flush } = rows[0] ?? {};
  return `${engine} ${version} (sync_binlog=${sync_binlog}, innodb_flush_log_at_trx_commit=${flush})`;
}

/** The cluster topology's bench stack (`--only topology`), beside the single one on ports of its own. */
const clusterBenchStackEnv: Record<string, string> = {
  FLASHGATE_HOME: sideStackHome("bench-cluster", engine),
  FLASHGATE_DB: engine,
  FLASHGATE_TOPOLOGY: "cluster",
  FLASHGATE_DB_PORT: "24307",
  FLASHGATE_REDIS_PORT: "27380",
  FLASHGATE_KAFKA_PORT: "21092",
  FLASHGATE_KAFKA_CONTROLLER_PORT: "21093",
  FLASHGATE_CONNECT_PORT: "22083",
  FLASHGATE_API_PORT: "22080",
  FLASHGATE_API_METRICS_PORT: "22081",
  FLASHGATE_MAINTAINER_PORT: "22082",
  FLASHGATE_DASHBOARD_PORT: "22084",
  FLASHGATE_KAFKA_HEAP: "384m",
  FLASHGATE_CONNECT_HEAP: "512m",
};

export async function startBenchStack(
  topology: "single" | "cluster" = "single",
): Promise<{ ctx: StackContext; env: Record<string, string> }> {
  const stackEnv = topology === "cluster" ? clusterBenchStackEnv : benchStackEnv;
  const ctx = stackContext({ env: { ...process.env, ...stackEnv }, progress: consoleProgress() });
  await up(ctx, { withApps: false });
  return { ctx, env: { ...stackEnv, ...appEnv(ctx) } };
}

/**
 * The baselines' own database on the bench's server: flashgate's schema under another name, outside what
 * flashgate's CDC captures. Their orders would otherwise be flashgate's CDC work (read, sent, stored,
 * applied to flashgate's Redis) and flashgate's drift check's, done on the cores of the baseline's turn.
 * The binlog is the server's: Debezium still reads their events and drops them, as it would any other
 * database's on a shared server.
 */
export async function baselinesDatabase(ctx: StackContext, env: Record<string, string>) {
  const database = "flashgate_baselines";
  await runMigrations(ctx, database);
  const url = new URL(env.DATABASE_URL);
  url.pathname = `/${database}`;
  return { ...env, DATABASE_URL: url.toString() };
}

const version = (command: string, args: string[]) => {
  const result = spawnSync(command, args, { encoding: "utf8" });
  return `${result.stdout}${result.stderr}`.split("\n")[0].trim() || "unknown";
};

/** `database` is the engine and the version the running server reports, durability settings included. */
export function machineFacts(database: string) {
  return {
    cpus: `${cpus().length} × ${cpus()[0]?.model ?? "?"}`,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    database,
    redis: version("redis-server", ["--version"]),
    java: version("java", ["-version"]),
  };
}

/** Busy CPU time of the whole machine so far (ms): every process of both stacks and the load generator. */
export function machineBusyMs(): number {
  // "cpu user nice system idle iowait irq softirq steal …", in ticks of 10 ms.
  const [user, nice, system, , , irq, softirq, steal] = readFileSync("/proc/stat", "utf8")
    .split("\n")[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (user + nice + system + irq + softirq + steal) * 10;
}

/** CPU time so far (ms) of each of the stack's servers, from /proc: where a stage's work is done. */
export function stackCpuMs(ctx: StackContext): Record<"database" | "kafka" | "connect" | "redis", number> {
  const of = (name: string) => cpuMsOf(readPid(ctx.paths.pids, name));
  return { database: of("database"), kafka: of("kafka"), connect: of("connect"), redis: of("redis") };
}

/**
 * CPU time so far (ms) of flashgate's CDC path: Connect (Debezium), Kafka and the cache-maintainers. In a
 * baseline's turn it is what the path spends with none of that design's orders to carry: its own idle work
 * and Debezium reading past the design's binlog events.
 */
export const cdcPathCpuMs = (ctx: StackContext, maintainersCpuMs: () => number) => {
  const { connect, kafka } = stackCpuMs(ctx);
  return connect + kafka + maintainersCpuMs();
};

/**
 * Waits (at most `maxMs`) until the machine's cores are mostly idle over a half second: a design's
 * queued work must not be measured as the next design's — a database pool draining requests whose
 * clients are gone, and Redis-as-truth's writer persisting a step's admissions, which the stack's CDC
 * then carries too (the 12-07 full run's open loop: 30 s was not enough after a step of 24,000
 * admissions a second, and the design that came next was measured beside it). Says so when it gives up.
 */
export async function machineSettled(maxMs = 120_000, busyShare = 0.4): Promise<void> {
  const deadline = Date.now() + maxMs;
  const cores = cpus().length;
  while (Date.now() < deadline) {
    const before = machineBusyMs();
    await new Promise((resolve) => setTimeout(resolve, 500));
    if ((machineBusyMs() - before) / (500 * cores) < busyShare) return;
  }
  process.stderr.write(`  the machine stayed busy for ${maxMs / 1000} s: measuring beside it\n`);
}
