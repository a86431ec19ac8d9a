import { execFile } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "@flashgate/stack";
import { stackEnv } from "@flashgate/testkit";

/** The installed `flashgate` command's entry point. */
export const flashgateBin = join(repoRoot, "apps", "cli", "bin", "flashgate.js");

type Result = { code: number; stdout: string; stderr: string };

const run =
  (env: Record<string, string> = {}) =>
  (...args: string[]): Promise<Result> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        [flashgateBin, ...args],
        { env: { ...process.env, ...stackEnv(), ...env }, timeout: 180_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });

/** Runs the real `flashgate` command against the test stack; `withEnv` adds variables of its own. */
export const flashgate = Object.assign(run(), { withEnv: run });
