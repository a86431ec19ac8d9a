import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { maintainerEnv, repoRoot } from "@flashgate/stack";
import { freePort } from "@flashgate/testkit";
import type { Pool } from "mysql2/promise";
import { startRedisServer } from "./redis-server.ts";

/** The three designs a bench compares; a design may run in several variants (a stronger, a more durable). */
type Design = "flashgate" | "mysql-only" | "redis-as-truth";

/** Servers of one kind, started by the bench. */
export interface RunningServer {
  name: string;
  design: Design | "hello";
  /** The first process: for one-process measurements. */
  url: string;
  /** Every process of the design, each on its own port; a load spreads its connections over them. */
  urls: string[];
  /** The first process's CPU time so far (user + system, ms), from /proc. */
  cpuMs: () => number;
  stop: () => Promise<void>;
}

/**
 * A design's servers and the database they decide in: flashgate's, or for a baseline a database of the
 * baselines' own with flashgate's schema, which flashgate's CDC does not capture (else each baseline's
 * turn would carry flashgate's CDC of its orders). The bench opens a design's sales and reads its
 * orders through `pool`.
 */
export interface RunningSystem extends RunningServer {
  pool: Pool;
}

async function startProcess(
  name: string,
  entry: string,
  env: Record<string, string>,
  readyPath: string,
  port?: number,
): Promise<{ url: string; port: number; child: ChildProcess; stop: () => Promise<void> }> {
  port ??= await freePort();
  const child = spawn(process.execPath, [join(repoRoot, entry)], {
    env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: "warn" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}${readyPath}`)).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${name} did not become ready`);
    await sleep(200);
  }
  return {
    url,
    port,
    child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

export function cpuMsOf(pid: number | undefined): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime, in clock ticks of 10 ms.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** `processes` copies of one server, as a deployment runs one per core behind a balancer. */
async function startProcesses(
  name: string,
  design: RunningServer["design"],
  entry: string,
  /** Each process's environment (the i-th), or one for all. */
  env: Record<string, string> | ((index: number) => Record<string, string>),
  readyPath: string,
  processes: number,
): Promise<RunningServer> {
  const started: Awaited<ReturnType<typeof startProcess>>[] = [];
  for (let i = 0; i < processes; i++)
    started.push(await startProcess(name, entry, typeof env === "function" ? env(i) : env, readyPath));
  return {
    name,
    design,
    url: started[0].url,
    urls: started.map((process) => process.url),
    cpuMs: () => cpuMsOf(started[0].child.pid),
    stop: async () => {
      await Promise.all(started.map((process) => process.stop()));
    },
  };
}

/**
 * `processes` APIs and `maintainers` cache-maintainers (one consumer group) over one stack, as deployed:
 * every background task (drift check, order expiry, the CDC supervisor, the sold-out snapshot's refresh)
 * at its default.
 */
export async function startFlashgate(
  env: Record<string, string>,
  pool: Pool,
  processes: number,
  maintainers = 1,
) {
  const started: Awaited<ReturnType<typeof startProcess>>[] = [];
  for (let i = 0; i < maintainers; i++)
    started.push(
      await startProcess(
        "cache-maintainer",
        "apps/cache-maintainer/src/main.ts",
        maintainerEnv(env),
        "/readyz",
      ),
    );
  /**
   * Stops the maintainers (what CDC writes waits in Kafka); the returned call starts them again on their
   * ports, with `overrides` of their settings.
   */
  async function pauseMaintainers() {
    const ports = started.map((maintainer) => maintainer.port);
    for (const maintainer of started.splice(0)) await maintainer.stop();
    return async (overrides: Record<string, string> = {}) => {
      for (const port of ports)
        started.push(
          await startProcess(
            "cache-maintainer",
            "apps/cache-maintainer/src/main.ts",
            { ...maintainerEnv(env), ...overrides },
            "/readyz",
            port,
          ),
        );
    };
  }
  // Each API serves its metrics on a port of its own, as deployed (METRICS_PORT).
  const metricsPorts: number[] = [];
  for (let i = 0; i < processes; i++) metricsPorts.push(await freePort());
  const api = await startProcesses(
    "flashgate",
    "flashgate",
    "apps/purchase-api/src/main.ts",
    // Every bench client connects from 127.0.0.1, as clients behind one proxy do, and a deployment behind
    // a proxy raises the per-address cap (1,000) as this does: else the flood's thousands of viewers would
    // be refused as one greedy client. Every other setting is the default a deployment runs.
    (i) => ({ ...env, HTTP_MAX_CONNECTIONS_PER_ADDRESS: "10000", METRICS_PORT: String(metricsPorts[i]) }),
    "/readyz",
    processes,
  );
  return {
    ...api,
    pool,
    /** Where each API serves /metrics. */
    metricsUrls: metricsPorts.map((port) => `http://127.0.0.1:${port}`),
    maintainerUrl: started[0].url,
    maintainerUrls: started.map((maintainer) => maintainer.url),
    /** The maintainers' CPU time so far (ms). */
    maintainersCpuMs: () => started.reduce((sum, maintainer) => sum + cpuMsOf(maintainer.child.pid), 0),
    pauseMaintainers,
    /** The maintainers stopped and started again with `overrides` of their settings. */
    restartMaintainers: async (overrides: Record<string, string> = {}) =>
      (await pauseMaintainers())(overrides),
    stop: async () => {
      await api.stop();
      for (const maintainer of started) await maintainer.stop();
    },
  };
}

/**
 * flashgate in queued admission (ADR 0030): `processes` APIs that answer every admitted buyer 202 and
 * decide them through the purchase queue, their writers in the same processes; the CDC path is the
 * synchronous design's maintainers' on the same stack.
 */
export async function startFlashgateQueued(
  env: Record<string, string>,
  pool: Pool,
  processes: number,
): Promise<RunningSystem> {
  const servers = await startProcesses(
    "flashgate, queued",
    "flashgate",
    "apps/purchase-api/src/main.ts",
    { ...env, PURCHASE_ADMISSION: "queued", HTTP_MAX_CONNECTIONS_PER_ADDRESS: "10000" },
    "/readyz",
    processes,
  );
  return { ...servers, pool };
}

/**
 * MySQL-only at its strongest: group commit and a memory of sold-out SKUs (`naive`: a transaction per
 * request), deciding in the database of `env`'s DATABASE_URL, which `pool` reaches.
 */
export async function startMysqlOnly(
  env: Record<string, string>,
  pool: Pool,
  processes: number,
  naive = false,
): Promise<RunningSystem> {
  const servers = await startProcesses(
    naive ? "mysql-only, naive" : "mysql-only",
    "mysql-only",
    naive ? "bench/baselines/mysql-only.ts" : "bench/baselines/mysql-group-commit.ts",
    env,
    "/stats",
    processes,
  );
  return { ...servers, pool };
}

/**
 * Redis-as-truth on a Redis of its own that syncs its append-only file `appendfsync` (everysec as the
 * design is deployed, always as durable as MySQL), with the in-process sold-out marker of the same life
 * as flashgate's sold-out snapshot (`naive`: without it).
 */
export async function startRedisTruth(
  env: Record<string, string>,
  pool: Pool,
  processes: number,
  appendfsync: "everysec" | "always",
  naive = false,
): Promise<RunningSystem> {
  const redis = await startRedisServer(env.FLASHGATE_HOME, appendfsync);
  const name = naive
    ? "redis-as-truth, naive"
    : appendfsync === "always"
      ? "redis-as-truth, fsync always"
      : "redis-as-truth";
  const system = await startProcesses(
    name,
    "redis-as-truth",
    "bench/baselines/redis-truth.ts",
    { ...env, REDIS_URL: redis.url, SOLD_OUT_MARK_MS: naive ? "0" : "250" },
    "/stats",
    processes,
  );
  return {
    ...system,
    pool,
    stop: async () => {
      await system.stop();
      await redis.stop();
    },
  };
}

export const startHello = () =>
  startProcesses("node:http hello", "hello", "bench/baselines/hello.ts", {}, "/", 1);

/** The designs a bench run compares, each running on the bench stack. */
export interface Systems {
  flashgate: Awaited<ReturnType<typeof startFlashgate>>;
  /** flashgate and every baseline a scenario compares it with, in the order of a round's first turn. */
  designs: RunningSystem[];
  hello: RunningServer;
}
