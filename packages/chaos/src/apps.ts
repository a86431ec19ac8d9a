import { type AppProcess, startAppProcess } from "@flashgate/testkit/processes";

/**
 * One flashgate app as its own process on a fixed port, so the faults can kill -9, stop and continue
 * it, and start it again, while clients keep the same address.
 */
export function appProcess(
  app: "purchase-api" | "cache-maintainer",
  port: number,
  env: Record<string, string>,
) {
  let running: AppProcess | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    async start() {
      running = await startAppProcess(app, env, { port });
    },
    /** Stops it (kill -9 by default); a stopped (SIGSTOP) process is continued first so the signal lands. */
    async kill(signal: NodeJS.Signals = "SIGKILL") {
      running?.child.kill("SIGCONT");
      await running?.kill(signal);
    },
    signal: (signal: NodeJS.Signals) => running?.child.kill(signal),
  };
}

export type AppHandle = ReturnType<typeof appProcess>;
