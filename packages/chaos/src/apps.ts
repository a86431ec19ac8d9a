import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { repoRoot } from "@flashgate/stack";

/**
 * One flashgate app as its own process on a fixed port, so the faults can kill -9, stop and continue
 * it while clients keep the same address.
 */
export function appProcess(
  app: "purchase-api" | "cache-maintainer",
  port: number,
  env: Record<string, string>,
) {
  let child: ChildProcess | undefined;
  let output = "";
  const url = `http://127.0.0.1:${port}`;

  async function start() {
    child = spawn(process.execPath, [join(repoRoot, "apps", app, "src", "main.ts")], {
      env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: env.LOG_LEVEL ?? "warn" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const started = child;
    const keep = (chunk: Buffer) => {
      output = (output + chunk).slice(-20_000);
    };
    started.stdout?.on("data", keep);
    started.stderr?.on("data", keep);
    for (const deadline = Date.now() + 60_000; ; ) {
      if (started.exitCode !== null) throw new Error(`${app} exited (${started.exitCode}): ${output}`);
      const ready = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) })
        .then((response) => response.ok)
        .catch(() => false);
      if (ready) return;
      if (Date.now() > deadline) throw new Error(`${app} not ready after 60 s: ${output}`);
      await sleep(100);
    }
  }

  async function kill(signal: NodeJS.Signals = "SIGKILL") {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    running.kill("SIGCONT");
    await new Promise<void>((resolve) => {
      running.once("exit", () => resolve());
      running.kill(signal);
    });
  }

  return {
    url,
    start,
    kill,
    signal: (signal: NodeJS.Signals) => child?.kill(signal),
    output: () => output,
  };
}

export type AppHandle = ReturnType<typeof appProcess>;
