import {
  type Order,
  OutcomeUnknownError,
  type PurchaseDecision,
  type PurchaseInput,
  placeOrder,
  placeOrders,
} from "@flashgate/db";
import type { Pool } from "mysql2/promise";
import { OverloadedError, type OverloadGuard } from "./overload-guard.ts";
import type { TransactionOutcome } from "./purchase.ts";

interface Queue {
  waiting: Waiting[];
  /** Set while the queue gathers after a batch: ends the gathering early once a batch is full. */
  full?: () => void;
}

interface Waiting {
  input: PurchaseInput;
  since: number;
  resolve: (decision: PurchaseDecision) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for the hot row. Buyers of one SKU who arrive while that SKU's transaction runs wait
 * for the next one, which decides all of them at once (up to `maxBatch`): the row is locked and the
 * redo log flushed once per batch instead of once per buyer (ADR 0007). A lone buyer goes at once.
 * A batch that cannot commit whole (too few units, a duplicate) is decided buyer by buyer, so every
 * outcome stays exact. The number waiting is bounded by the reservations Redis handed out.
 * Right after a batch, the next one gathers for up to `gatherMs` (or until full): the buyers just
 * answered come back as a burst, and the first of them must not go alone with the rest queued behind.
 */
export function createDecisionBatcher(deps: {
  pool: Pool;
  guard: OverloadGuard;
  maxBatch: number;
  /** A buyer who waited longer than this for their batch is answered "overloaded" instead. */
  maxWaitMs: number;
  /** How long the batch after a batch gathers buyers (0: it goes at once, as the first batch does). */
  gatherMs: number;
  onTransaction: (outcome: TransactionOutcome) => void;
}) {
  const { pool, guard, maxBatch, maxWaitMs, gatherMs, onTransaction } = deps;
  const skus = new Map<string, Queue>();

  async function decideAlone(input: PurchaseInput): Promise<PurchaseDecision> {
    const decision = await placeOrder(pool, input);
    onTransaction(decision.kind === "created" ? "committed" : "rejected");
    return decision;
  }

  async function decideBatch(batch: Waiting[]): Promise<void> {
    if (batch.length === 1) {
      const decision = await decideAlone(batch[0].input);
      batch[0].resolve(decision);
      return;
    }
    const orders: Order[] | null = await placeOrders(
      pool,
      batch.map((waiting) => waiting.input),
    );
    onTransaction(orders ? "committed" : "rejected");
    if (orders) {
      batch.forEach((waiting, i) => {
        waiting.resolve({ kind: "created", order: orders[i] });
      });
      return;
    }
    for (const waiting of batch) waiting.resolve(await decideAlone(waiting.input));
  }

  const gather = (queue: Queue) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => queue.full?.(), gatherMs);
      queue.full = () => {
        clearTimeout(timer);
        queue.full = undefined;
        resolve();
      };
    });

  async function drain(key: string, queue: Queue) {
    while (queue.waiting.length > 0) {
      const tooOld = performance.now() - maxWaitMs;
      const batch = queue.waiting.splice(0, maxBatch).filter((waiting) => {
        if (waiting.since >= tooOld) return true;
        waiting.reject(new OverloadedError("waited too long for a database slot"));
        return false;
      });
      if (batch.length === 0) continue;
      try {
        await guard.run(() => decideBatch(batch));
      } catch (error) {
        if (error instanceof OutcomeUnknownError) onTransaction("unknown");
        else if (!(error instanceof OverloadedError)) onTransaction("failed");
        // Whoever is still undecided shares the failure (overload, lost database, unknown outcome).
        for (const waiting of batch) waiting.reject(error);
      }
      if (gatherMs > 0 && queue.waiting.length < maxBatch) await gather(queue);
    }
    skus.delete(key);
  }

  return {
    decide(input: PurchaseInput): Promise<PurchaseDecision> {
      return new Promise((resolve, reject) => {
        const key = `${input.activityId}:${input.skuId}`;
        const waiting = { input, since: performance.now(), resolve, reject };
        const queue = skus.get(key);
        if (queue) {
          queue.waiting.push(waiting);
          if (queue.waiting.length >= maxBatch) queue.full?.();
          return;
        }
        const fresh: Queue = { waiting: [waiting] };
        skus.set(key, fresh);
        void drain(key, fresh);
      });
    },
  };
}
