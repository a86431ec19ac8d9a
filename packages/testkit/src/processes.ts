import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { repoRoot } from "@flashgate/stack";
import { eventually } from "./eventually.ts";

export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

export interface AppProcess {
  url: string;
  child: ChildProcess;
  output: () => string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Runs an app's main.ts as its own process, as production would, so tests can SIGKILL it. */
export async function startAppProcess(
  app: string,
  env: Record<string, string>,
  options: { port?: number } = {},
): Promise<AppProcess> {
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, [join(repoRoot, "apps", app, "src", "main.ts")], {
    env: { ...process.env, ...env, PORT: String(port), LOG_LEVEL: env.LOG_LEVEL ?? "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output = (output + chunk).slice(-20_000);
  });
  child.stderr?.on("data", (chunk) => {
    output = (output + chunk).slice(-20_000);
  });
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`${app} exited (${child.exitCode}): ${output}`);
      const response = await fetch(`${url}/readyz`);
      if (response.status !== 200) throw new Error(`${app} not ready: ${await response.text()}`);
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  return {
    url,
    child,
    output: () => output,
    kill: (signal = "SIGTERM") =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill(signal);
      }),
  };
}
