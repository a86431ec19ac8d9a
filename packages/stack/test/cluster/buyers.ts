import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { userToken } from "@flashgate/testkit";

/** One buyer's last answer, after retrying 503s, 429s and dead connections with the same key. */
export interface Outcome {
  userId: number;
  key: string;
  status: number;
  code?: string;
  orderId?: string;
  attempts: number;
}

/** Every answer or failed attempt, when it came: where a fault's window shows. */
export interface Attempt {
  at: number;
  status: number | "network";
}

export interface BuyersOptions {
  apis: string[];
  secret: string;
  sale: { activityId: number; skuId: number };
  users: number[];
  concurrency: number;
  /** Each of the `concurrency` clients waits this long between two buyers. */
  paceMs?: number;
  /** A buyer gives up (and the test fails on its missing answer) after this long. */
  patienceMs?: number;
  onAnswer?: (outcome: Outcome) => void;
}

/**
 * Buyers as a careful client behaves: one Idempotency-Key per purchase, reused on every retry; a 503,
 * a 429 or a dead connection is retried on the next API instance after the Retry-After it was given.
 */
export async function runBuyers(
  options: BuyersOptions,
): Promise<{ outcomes: Outcome[]; attempts: Attempt[] }> {
  const outcomes: Outcome[] = [];
  const attempts: Attempt[] = [];
  const queue = [...options.users];
  const patienceMs = options.patienceMs ?? 90_000;

  async function buy(userId: number): Promise<Outcome> {
    const key = randomUUID();
    const token = userToken(options.secret, userId);
    const giveUpAt = Date.now() + patienceMs;
    for (let attempt = 0; ; attempt += 1) {
      const api = options.apis[(userId + attempt) % options.apis.length];
      let retryAfterMs = 200;
      try {
        const response = await fetch(`${api}/v1/purchases`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "idempotency-key": key,
            "content-type": "application/json",
          },
          body: JSON.stringify(options.sale),
          signal: AbortSignal.timeout(10_000),
        });
        const body = (await response.json()) as { code?: string; orderId?: string };
        attempts.push({ at: Date.now(), status: response.status });
        const outcome = {
          userId,
          key,
          status: response.status,
          code: body.code,
          orderId: body.orderId,
          attempts: attempt + 1,
        };
        if (response.status !== 503 && response.status !== 429) return outcome;
        retryAfterMs = Number(response.headers.get("retry-after") ?? "1") * 1000;
        if (Date.now() > giveUpAt) return outcome;
      } catch (error) {
        attempts.push({ at: Date.now(), status: "network" });
        if (Date.now() > giveUpAt) throw error;
      }
      await sleep(retryAfterMs);
    }
  }

  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      for (let userId = queue.shift(); userId !== undefined; userId = queue.shift()) {
        const outcome = await buy(userId);
        outcomes.push(outcome);
        options.onAnswer?.(outcome);
        if (options.paceMs) await sleep(options.paceMs);
      }
    }),
  );
  return { outcomes, attempts };
}

/** From the fault until the last failed attempt (503 or a dead connection) after it: 0 when none failed. */
export function disruptionMs(attempts: Attempt[], faultAt: number): number {
  const failed = attempts.filter((a) => a.at >= faultAt && (a.status === 503 || a.status === "network"));
  return failed.length ? Math.max(...failed.map((a) => a.at)) - faultAt : 0;
}
