import { setTimeout as sleep } from "node:timers/promises";
import type { StepProgress } from "./progress.ts";

export class StackError extends Error {
  override name = "StackError";
}

/** Polls `check` until it returns a value other than undefined/false, or the deadline passes. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  options: {
    timeoutMs: number;
    intervalMs?: number;
    progress?: StepProgress;
    failFast?: () => string | undefined;
  },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    const fatal = options.failFast?.();
    if (fatal) throw new StackError(`${what}: ${fatal}`);
    if (Date.now() > deadline) {
      const reason = lastError instanceof Error ? ` (last error: ${lastError.message})` : "";
      throw new StackError(`timed out after ${options.timeoutMs / 1000}s waiting for ${what}${reason}`);
    }
    options.progress?.waiting(what);
    await sleep(options.intervalMs ?? 250);
  }
}
