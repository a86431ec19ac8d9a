import { setTimeout as sleep } from "node:timers/promises";

/** Polls an assertion until it passes or the deadline passes; the last failure is rethrown. */
export async function eventually<T>(
  assertion: () => Promise<T> | T,
  { timeoutMs = 20_000, intervalMs = 100 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await assertion();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(intervalMs);
    }
  }
}

/** What a promise rejected with, or undefined if it resolved: for asserting on a real server's error. */
export const failureOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );
