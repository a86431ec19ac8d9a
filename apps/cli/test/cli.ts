import { execFile } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "@flashgate/stack";
import { stackEnv } from "@flashgate/testkit";

/** Runs the real `flashgate` command against the test stack. */
export function flashgate(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(repoRoot, "apps", "cli", "bin", "flashgate.js"), ...args],
      { env: { ...process.env, ...stackEnv() }, timeout: 180_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
