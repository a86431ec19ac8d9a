import { type FlashgateRedis, recordOutcomes, releaseReservation } from "@flashgate/cache";
import type { PurchaseInput } from "@flashgate/db";
import type { QueuedBuyer } from "@flashgate/kafka";
import type { Pool } from "mysql2/promise";
import { createDecisionBatcher, type TransactionOutcome } from "./decision-batcher.ts";
import { decisionResult, holdsItsUnit } from "./decision-outcome.ts";
import { createOverloadGuard } from "./overload-guard.ts";
import { encodeTicket, type Ticket } from "./ticket.ts";

export interface QueueWriterObserver {
  transaction(outcome: TransactionOutcome): void;
  /** A queued buyer decided and told, after waiting `waitedMs` since they were queued. */
  decided(outcome: Ticket["state"], waitedMs: number): void;
  /** A queued buyer left undecided for now (the database away, an unknown outcome): tried again. */
  undecided(error: unknown): void;
}

/** The longest timer Node keeps: a queued buyer waits for the database however long it takes. */
const forever = 2 ** 31 - 1;

/**
 * Decides queued buyers (ADR 0030) with the synchronous path's decision and batching, at the database's
 * own pace: nobody is refused for waiting. Each outcome goes to the buyer's ticket; a refused buyer's
 * reservation is freed first (so a retry on reading the refusal finds it gone), an order's stays until
 * CDC applies it, as on the synchronous path. A buyer delivered twice finds their order (idempotent on
 * user and key). Answers how many buyers, from the first, are decided and told: only those may be
 * committed; the rest are handed again.
 */
export function createQueueWriter(deps: {
  redis: FlashgateRedis;
  pool: Pool;
  batch: { maxSize: number; maxConcurrent: number; gatherMs: number };
  observer: QueueWriterObserver;
}) {
  const { redis, pool, observer } = deps;
  const { maxSize, maxConcurrent, gatherMs } = deps.batch;
  const batcher = createDecisionBatcher({
    pool,
    guard: createOverloadGuard({ maxInFlight: maxConcurrent, maxQueue: forever, maxWaitMs: forever }),
    maxBatch: maxSize,
    maxConcurrent,
    maxWaitMs: forever,
    gatherMs,
    onTransaction: (outcome) => observer.transaction(outcome),
  });
  const inputOf = ({ activityId, skuId, userId, requestId }: QueuedBuyer): PurchaseInput => ({
    activityId,
    skuId,
    userId,
    requestId,
  });

  return async function decide(buyers: QueuedBuyer[]): Promise<number> {
    const settled = await Promise.allSettled(buyers.map((buyer) => batcher.decide(inputOf(buyer))));
    const decidedAtMs = Date.now();
    const told: { userId: string; requestId: string; ticket: Ticket }[] = [];
    const freed: QueuedBuyer[] = [];
    for (const [i, result] of settled.entries()) {
      if (result.status === "rejected") {
        observer.undecided(result.reason);
        continue;
      }
      const buyer = buyers[i];
      const answer = decisionResult(result.value);
      const queued = { activityId: buyer.activityId, skuId: buyer.skuId, queuedAtMs: buyer.queuedAtMs };
      const ticket: Ticket =
        "order" in answer
          ? { ...queued, state: "CREATED", order: answer.order, decidedAtMs }
          : { ...queued, state: "REFUSED", code: answer.kind, detail: answer.detail, decidedAtMs };
      told.push({ userId: buyer.userId, requestId: buyer.requestId, ticket });
      if (!holdsItsUnit(result.value, "inherited")) freed.push(buyer);
    }
    await Promise.all(freed.map((buyer) => releaseReservation(redis, buyer)));
    await recordOutcomes(
      redis,
      told.map(({ ticket, ...buyer }) => ({ ...buyer, ticket: encodeTicket(ticket) })),
    );
    for (const { ticket } of told) observer.decided(ticket.state, decidedAtMs - ticket.queuedAtMs);
    const firstUndecided = settled.findIndex((result) => result.status === "rejected");
    return firstUndecided === -1 ? settled.length : firstUndecided;
  };
}
