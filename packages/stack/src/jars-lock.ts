import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { StepProgress } from "./progress.ts";
import { StackError } from "./wait.ts";

/**
 * The jars dir is shared by every home on the machine, and several stacks can be set up at once (turbo runs
 * two workspaces' fast tiers side by side): whatever writes it — the Maven fetch, unpacking MySQL — runs in
 * one process at a time. The lock is the kernel's (flock), held by a child that lives as long as its stdin
 * is open, so a process that dies holding it releases it with its child.
 */
export async function withJarsLock<T>(
  jars: string,
  step: StepProgress,
  work: () => T | Promise<T>,
): Promise<T> {
  mkdirSync(jars, { recursive: true });
  const holder = spawn(
    "flock",
    ["--exclusive", join(jars, ".lock"), "sh", "-c", "echo held; exec cat >/dev/null"],
    {
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  await new Promise<void>((resolve, reject) => {
    const waiting = setInterval(() => step.waiting(`waiting for another process writing ${jars}`), 1000);
    const settle = (error?: Error) => {
      clearInterval(waiting);
      if (error) reject(error);
      else resolve();
    };
    holder.stdout.once("data", () => settle());
    holder.once("error", (error) => settle(new StackError(`could not run flock: ${error.message}`)));
    holder.once("exit", (code) =>
      settle(new StackError(`flock on ${jars} exited (${code}) before it held the lock`)),
    );
  });
  try {
    return await work();
  } finally {
    const released = new Promise((resolve) => holder.once("exit", resolve));
    holder.stdin.end();
    await released;
  }
}
