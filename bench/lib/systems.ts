import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { repoRoot } from "@flashgate/stack";
import { freePort } from "@flashgate/testkit";

export interface RunningSystem {
  name: string;
  /** The first process: for one-process measurements. */
  url: string;
  /** Every process of the design, each on its own port; a load spreads its connections over them. */
  urls: string[];
  /** The first process's CPU time so far (user + system, ms), from /proc. */
  cpuMs: () => number;
  stop: () => Promise<void>;
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
  entry: string,
  env: Record<string, string>,
  readyPath: string,
  processes: number,
): Promise<RunningSystem> {
  const started: Awaited<ReturnType<typeof startProcess>>[] = [];
  for (let i = 0; i < processes; i++) started.push(await startProcess(name, entry, env, readyPath));
  return {
    name,
    url: started[0].url,
    urls: started.map((process) => process.url),
    cpuMs: () => cpuMsOf(started[0].child.pid),
    stop: async () => {
      await Promise.all(started.map((process) => process.stop()));
    },
  };
}

/** `processes` APIs and `maintainers` cache-maintainers (one consumer group) over one stack. */
export async function startFlashgate(env: Record<string, string>, processes: number, maintainers = 1) {
  const maintainerEnv = { ...env, DRIFT_INTERVAL_MS: "0", EXPIRY_INTERVAL_MS: "0" };
  const started: Awaited<ReturnType<typeof startProcess>>[] = [];
  for (let i = 0; i < maintainers; i++)
    started.push(
      await startProcess("cache-maintainer", "apps/cache-maintainer/src/main.ts", maintainerEnv, "/readyz"),
    );
  /**
   * Stops the maintainers (what CDC writes waits in Kafka); the returned call starts them again on their
   * ports, with `overrides` of their settings (order expiry, off in the bench, for a deadline).
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
            { ...maintainerEnv, ...overrides },
            "/readyz",
            port,
          ),
        );
    };
  }
  const api = await startProcesses(
    "flashgate",
    "apps/purchase-api/src/main.ts",
    // Every bench client connects from 127.0.0.1, as clients behind one proxy do: the per-address cap
    // (1,000) would refuse the flood's thousands of viewers as one greedy client.
    { ...env, RATE_LIMIT: "20", HTTP_MAX_CONNECTIONS_PER_ADDRESS: "10000" },
    "/readyz",
    processes,
  );
  return {
    ...api,
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

export const startMysqlOnly = (env: Record<string, string>, processes: number) =>
  startProcesses("mysql-only", "bench/baselines/mysql-only.ts", env, "/stats", processes);
export const startRedisTruth = (env: Record<string, string>, processes: number) =>
  startProcesses("redis-as-truth", "bench/baselines/redis-truth.ts", env, "/stats", processes);
export const startHello = () => startProcesses("node:http hello", "bench/baselines/hello.ts", {}, "/", 1);

/** The designs a bench run compares, each running on the bench stack. */
export interface Systems {
  flashgate: Awaited<ReturnType<typeof startFlashgate>>;
  mysqlOnly: RunningSystem;
  redisTruth: RunningSystem;
  hello: RunningSystem;
}
