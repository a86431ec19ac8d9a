import { setTimeout as sleep } from "node:timers/promises";
import { ApiProblem, type ClientAttempt, createClient, newIdempotencyKey } from "@flashgate/client";
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
  /** Passed before each buyer: a test holds the buyers with it for a moment. */
  gate?: BuyerGate;
}

/** Holds every buyer before its next purchase while closed; counts those held. */
export class BuyerGate {
  #opened: Promise<void> = Promise.resolve();
  #open = () => {};
  held = 0;

  close() {
    this.#opened = new Promise((resolve) => {
      this.#open = resolve;
    });
  }

  open() {
    this.#open();
  }

  async pass() {
    this.held += 1;
    await this.#opened;
    this.held -= 1;
  }
}

/**
 * Buyers through the product's client: one Idempotency-Key per purchase, reused on every retry; a 503,
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
    const key = newIdempotencyKey();
    // Each buyer starts on its own instance; every retry goes to the next.
    const first = userId % options.apis.length;
    let tries = 0;
    let last: ClientAttempt | undefined;
    const client = createClient({
      baseUrl: [...options.apis.slice(first), ...options.apis.slice(0, first)],
      token: userToken(options.secret, userId),
      attempts: Number.POSITIVE_INFINITY,
      giveUpAfterMs: patienceMs,
      retryRateLimited: true,
      baseDelayMs: 200,
      timeoutMs: 10_000,
      onAttempt: (attempt) => {
        tries += 1;
        last = attempt;
        attempts.push({ at: attempt.at, status: attempt.status });
      },
    });
    const outcome = (status: number, code?: string, orderId?: string) => ({
      userId,
      key,
      status,
      code,
      orderId,
      attempts: tries,
    });
    try {
      const { order, created } = await client.purchase(options.sale, key);
      return outcome(created ? 201 : 200, undefined, order.orderId);
    } catch (error) {
      if (error instanceof ApiProblem) return outcome(error.status, error.code);
      // Out of patience with no answer at all: the test fails on it.
      throw new Error(`buyer ${userId}: no answer after ${tries} attempts (last: ${last?.status})`, {
        cause: error,
      });
    }
  }

  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      for (let userId = queue.shift(); userId !== undefined; userId = queue.shift()) {
        await options.gate?.pass();
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
