import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { repoRoot } from "@flashgate/stack";
import { freePort } from "@flashgate/testkit";

export interface RunningSystem {
  name: string;
  url: string;
  stop: () => Promise<void>;
}

async function startProcess(
  name: string,
  entry: string,
  env: Record<string, string>,
  readyPath: string,
): Promise<RunningSystem & { child: ChildProcess }> {
  const port = await freePort();
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
    name,
    url,
    child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

export async function startFlashgate(env: Record<string, string>) {
  const maintainer = await startProcess(
    "cache-maintainer",
    "apps/cache-maintainer/src/main.ts",
    { ...env, DRIFT_INTERVAL_MS: "0", EXPIRY_INTERVAL_MS: "0" },
    "/readyz",
  );
  const api = await startProcess(
    "purchase-api",
    "apps/purchase-api/src/main.ts",
    { ...env, RATE_LIMIT: "20" },
    "/readyz",
  );
  return {
    name: "flashgate",
    url: api.url,
    maintainerUrl: maintainer.url,
    stop: async () => {
      await api.stop();
      await maintainer.stop();
    },
  };
}

export const startMysqlOnly = (env: Record<string, string>) =>
  startProcess("mysql-only", "bench/baselines/mysql-only.ts", env, "/stats");
export const startRedisTruth = (env: Record<string, string>) =>
  startProcess("redis-as-truth", "bench/baselines/redis-truth.ts", env, "/stats");
export const startHello = () => startProcess("node:http hello", "bench/baselines/hello.ts", {}, "/");
