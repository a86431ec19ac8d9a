import { skuRef } from "@flashgate/cache";
import {
  OutcomeUnknownError,
  type PurchaseDecision,
  type PurchaseInput,
  placeOrder,
  placeOrders,
} from "@flashgate/db";
import type { Pool } from "mysql2/promise";
import { OverloadedError, type OverloadGuard } from "./overload-guard.ts";

/** How a decision transaction ended: an order committed, none (every buyer refused), unknown (the connection lost around COMMIT), or an error. */
export type TransactionOutcome = "committed" | "rejected" | "unknown" | "failed";

interface Waiting {
  input: PurchaseInput;
  /** The SKU's key ("activity:sku"). */
  sku: string;
  since: number;
  resolve: (decision: PurchaseDecision) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit. Buyers who arrive while the database is busy wait for the next transaction, which
 * decides many of them at once (up to `maxBatch`), across the SKUs of one activity: MySQL's cost is per
 * transaction far more than per order, so a hot SKU's row is locked and the redo log flushed once per
 * batch (ADR 0007), and a catalogue's buyers spread over many SKUs share transactions too (ADR 0015).
 * At most `maxConcurrent` batches run at once and a SKU is in one of them at a time (its row would
 * serialise them anyway); a buyer goes at once when a slot and their SKU are free. The buyers of a SKU
 * with some units but fewer than them are decided one by one after their batch, so every outcome stays exact.
 * The number waiting is bounded by the reservations Redis handed out. Right after a SKU's batch, its
 * next one gathers for up to `gatherMs` (or until full): the buyers just answered come back as a burst,
 * and the first of them must not go alone with the rest queued behind. And while one of this instance's
 * transactions runs, a new batch gathers for up to `gatherMs` too (or until full): a buyer goes at once
 * only to an idle database.
 */
export function createDecisionBatcher(deps: {
  pool: Pool;
  guard: OverloadGuard;
  maxBatch: number;
  /** Batches in flight at once, at most. */
  maxConcurrent: number;
  /** A buyer who waited longer than this for their batch is answered "overloaded" instead. */
  maxWaitMs: number;
  /** How long a SKU's batch after a batch gathers buyers (0: it goes at once, as the first batch does). */
  gatherMs: number;
  onTransaction: (outcome: TransactionOutcome) => void;
}) {
  const { pool, guard, maxBatch, maxConcurrent, maxWaitMs, gatherMs, onTransaction } = deps;
  let waiting: Waiting[] = [];
  /** Buyers waiting per SKU. */
  const waitingFor = new Map<string, number>();
  /** SKUs in a running batch, or gathering after one (the function ends the gathering early). */
  const busy = new Map<string, (() => void) | undefined>();
  let running = 0;
  const leave = (sku: string) => {
    const left = (waitingFor.get(sku) ?? 1) - 1;
    if (left > 0) waitingFor.set(sku, left);
    else waitingFor.delete(sku);
  };

  /** A transaction that threw: an unknown outcome, or a failure (an overload refused it before it ran). */
  const failed = (error: unknown) => {
    if (error instanceof OutcomeUnknownError) onTransaction("unknown");
    else if (!(error instanceof OverloadedError)) onTransaction("failed");
  };

  /** A buyer the batch could not answer, decided in a transaction of their own; a failure is theirs alone. */
  async function decideAlone(buyer: Waiting): Promise<void> {
    try {
      const decision = await placeOrder(pool, buyer.input);
      onTransaction(decision.kind === "created" ? "committed" : "rejected");
      buyer.resolve(decision);
    } catch (error) {
      failed(error);
      buyer.reject(error);
    }
  }

  async function decideBatch(batch: Waiting[]): Promise<void> {
    const decisions = await placeOrders(
      pool,
      batch.map((waiting) => waiting.input),
    );
    onTransaction(decisions.some((decision) => decision?.kind === "created") ? "committed" : "rejected");
    for (const [i, waiting] of batch.entries()) {
      const decision = decisions[i];
      if (decision) waiting.resolve(decision);
      else await decideAlone(waiting);
    }
  }

  /** The oldest waiting buyers whose SKUs are free, of one activity, up to `maxBatch`. */
  function nextBatch(): Waiting[] {
    const tooOld = performance.now() - maxWaitMs;
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    for (const buyer of waiting) {
      if (buyer.since < tooOld) {
        leave(buyer.sku);
        buyer.reject(new OverloadedError("waited too long for a database slot"));
      } else if (
        batch.length < maxBatch &&
        !busy.has(buyer.sku) &&
        (batch.length === 0 || batch[0].input.activityId === buyer.input.activityId)
      ) {
        batch.push(buyer);
        leave(buyer.sku);
      } else rest.push(buyer);
    }
    waiting = rest;
    for (const buyer of batch) busy.set(buyer.sku, undefined);
    return batch;
  }

  /** After a batch, its SKUs gather buyers for `gatherMs` (a full SKU ends it early), then are free. */
  function gather(skus: Set<string>) {
    for (const sku of skus) {
      if (gatherMs <= 0 || (waitingFor.get(sku) ?? 0) >= maxBatch) {
        busy.delete(sku);
        continue;
      }
      const done = () => {
        clearTimeout(timer);
        if (busy.get(sku) !== done) return;
        busy.delete(sku);
        pump();
      };
      const timer = setTimeout(done, gatherMs);
      busy.set(sku, done);
    }
  }

  async function run(batch: Waiting[]) {
    try {
      await guard.run(() => decideBatch(batch));
    } catch (error) {
      failed(error);
      // Whoever is still undecided shares the failure (overload, lost database, unknown outcome).
      for (const buyer of batch) buyer.reject(error);
    }
  }

  let gathering: NodeJS.Timeout | undefined;
  /**
   * While a transaction of this instance runs, the database is busy: the next batch gathers the buyers of
   * free SKUs until the first of them has waited `gatherMs` (or `maxBatch` wait), so that a catalogue's
   * buyers share a transaction rather than each taking one of the slots.
   */
  function stillGathering(): boolean {
    if (running === 0 || gatherMs <= 0 || waiting.length >= maxBatch) return false;
    const first = waiting.find((buyer) => !busy.has(buyer.sku));
    const left = first ? first.since + gatherMs - performance.now() : 0;
    if (left <= 0) return false;
    gathering ??= setTimeout(() => {
      gathering = undefined;
      pump();
    }, left);
    return true;
  }

  function pump() {
    while (running < maxConcurrent && waiting.length > 0) {
      if (stillGathering()) return;
      const batch = nextBatch();
      if (batch.length === 0) return;
      running += 1;
      void run(batch).then(() => {
        running -= 1;
        gather(new Set(batch.map((buyer) => buyer.sku)));
        pump();
      });
    }
  }

  function enqueue(input: PurchaseInput): Promise<PurchaseDecision> {
    return new Promise((resolve, reject) => {
      const sku = skuRef(input.activityId, input.skuId);
      waiting.push({ input, sku, since: performance.now(), resolve, reject });
      const count = (waitingFor.get(sku) ?? 0) + 1;
      waitingFor.set(sku, count);
      if (count >= maxBatch) busy.get(sku)?.();
      pump();
    });
  }

  /** Decisions not yet made, by buyer: the same purchase sent again meanwhile shares its decision. */
  const undecided = new Map<string, Promise<PurchaseDecision>>();

  /**
   * The purchase decided. A request whose user, key and SKU are being decided already gets that
   * decision as a request that did not create the order (only the first is told "created"); if the
   * first attempt fails, it is decided on its own.
   */
  function decide(input: PurchaseInput): Promise<PurchaseDecision> {
    const buyer = `${input.userId}/${input.requestId}/${input.activityId}/${input.skuId}`;
    const pending = undecided.get(buyer);
    if (pending) return pending.then(asAnotherRequest, () => decide(input));
    const decision = enqueue(input);
    undecided.set(buyer, decision);
    const forget = () => undecided.delete(buyer);
    decision.then(forget, forget);
    return decision;
  }

  return {
    decide,
    /** How long the longest-waiting buyer has waited for a transaction (ms), 0 with nobody waiting. */
    oldestWaitMs: () => (waiting.length === 0 ? 0 : performance.now() - waiting[0].since),
  };
}

/** The decision as a request told of an order it did not create. */
const asAnotherRequest = (decision: PurchaseDecision): PurchaseDecision =>
  decision.kind === "created" ? { kind: "replayed", order: decision.order } : decision;
