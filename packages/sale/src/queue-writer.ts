import { type FlashgateRedis, readTicket, recordOutcomes, releaseReservation } from "@flashgate/cache";
import type { PurchaseDecision } from "@flashgate/db";
import type { QueuedBuyer } from "@flashgate/kafka";
import type { Pool } from "mysql2/promise";
import { createDecisionBatcher, type TransactionOutcome } from "./decision-batcher.ts";
import { decisionResult, holdsItsUnit } from "./decision-outcome.ts";
import { createOverloadGuard } from "./overload-guard.ts";
import { decidedTicket, decodeTicket, encodeTicket, type Ticket } from "./ticket.ts";

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
 * own pace: nobody is refused for waiting on it. Answers how many buyers, from the first, are decided and
 * told — only those may be committed, and only those are told (a later buyer decided in MySQL meanwhile
 * finds their order when handed again). Each outcome goes to the buyer's ticket while it still holds that
 * place, and only then is a refused buyer's reservation freed (an order's stays until CDC applies it, as
 * on the synchronous path), so a retry on reading the refusal never meets it. A buyer whose ticket already
 * tells their outcome (delivered again after a writer died) is not decided again.
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

  /** The outcome the buyer's ticket already tells of this very place, if it does. */
  async function toldOutcome(buyer: QueuedBuyer): Promise<Ticket["state"] | undefined> {
    const stored = await readTicket(redis, buyer.userId, buyer.requestId);
    if (stored === null) return undefined;
    const ticket = decodeTicket(stored);
    const samePlace =
      ticket.queuedAtMs === buyer.queuedAtMs &&
      ticket.activityId === buyer.activityId &&
      ticket.skuId === buyer.skuId;
    return samePlace && ticket.state !== "QUEUED" ? ticket.state : undefined;
  }

  return async function decide(buyers: QueuedBuyer[]): Promise<number> {
    const told = await Promise.all(buyers.map(toldOutcome));
    const decisions = await Promise.allSettled(
      buyers.map((buyer, i): Promise<PurchaseDecision | undefined> => {
        if (told[i]) return Promise.resolve(undefined);
        const { activityId, skuId, userId, requestId } = buyer;
        return batcher.decide({ activityId, skuId, userId, requestId });
      }),
    );
    const decidedAtMs = Date.now();
    const outcomes: { buyer: QueuedBuyer; ticket: Ticket; frees: boolean }[] = [];
    /** Refused before, their reservation perhaps not freed yet (a writer died between the two). */
    const refusedBefore: QueuedBuyer[] = [];
    let prefix = 0;
    for (const [i, settled] of decisions.entries()) {
      if (settled.status === "rejected") {
        observer.undecided(settled.reason);
        break;
      }
      prefix += 1;
      const buyer = buyers[i];
      const decision = settled.value;
      if (!decision) {
        if (told[i] === "REFUSED") refusedBefore.push(buyer);
        continue;
      }
      const ticket = decidedTicket(buyer, decisionResult(decision), decidedAtMs);
      outcomes.push({ buyer, ticket, frees: !holdsItsUnit(decision, "inherited") });
    }
    const written = await recordOutcomes(
      redis,
      outcomes.map(({ buyer, ticket }) => ({ place: buyer, ticket: encodeTicket(ticket) })),
    );
    // Only a place whose outcome its ticket tells frees its reservation: a place queued again since under
    // the same key holds a reservation of its own.
    const freed = [
      ...outcomes.filter(({ frees }, i) => frees && written[i]).map(({ buyer }) => buyer),
      ...refusedBefore,
    ];
    await Promise.all(freed.map((buyer) => releaseReservation(redis, buyer)));
    for (const { ticket } of outcomes) observer.decided(ticket.state, decidedAtMs - ticket.queuedAtMs);
    return prefix;
  };
}
