import {
  type FastPathLimits,
  type FlashgateRedis,
  forgetPlace,
  lookupDirectory,
  type QueuedPlace,
  type Queueing,
  type RedisClient,
  type ReserveOutcome,
  readTicket,
  rebuildQueueKey,
  recordOutcomes,
  recordQueued,
  releaseReservation,
  reserveUnit,
  skuRef,
} from "@flashgate/cache";
import {
  DecisionConflictError,
  findPurchase,
  findReplay,
  type Order,
  OutcomeUnknownError,
  type PurchaseDecision,
  type PurchaseInput,
  soldOutBuyers,
} from "@flashgate/db";
import type { QueuedBuyer } from "@flashgate/kafka";
import type { Pool } from "mysql2/promise";
import { createDecisionBatcher, type TransactionOutcome } from "./decision-batcher.ts";
import { decisionResult, holdsItsUnit } from "./decision-outcome.ts";
import { OverloadedError, type OverloadGuard } from "./overload-guard.ts";
import { type PurchaseResult, refusals } from "./refusals.ts";
import { createSkuWindows } from "./sku-window.ts";
import { createSoldOutShortcut, followUnitsBack } from "./sold-out-shortcut.ts";
import { decidedTicket, decodeTicket, encodeTicket, type Ticket } from "./ticket.ts";

type Dependency = "redis" | "database" | "kafka";

export interface PurchaseObserver {
  transaction(outcome: TransactionOutcome): void;
  reservations(delta: number): void;
  /** A buyer was answered 503 because this instance had no database slot for them (the overload guard). */
  overloaded(): void;
  /** A buyer was put on the purchase queue and answered with their ticket. */
  queued(): void;
  /** A dependency failed and the buyer was answered 503 (or a cleanup was skipped): count it and log it. */
  dependencyFailed(dependency: Dependency, operation: string, error: unknown): void;
}

export interface PurchaseServiceOptions {
  redis: FlashgateRedis;
  /** Purchase decisions, and the reads a buyer's answer depends on. */
  pool: Pool;
  /**
   * Reads anyone can cause (the public SKU view, a SKU missing from Redis): a small pool of their own
   * whose queue is bounded, so that they never wait in line with purchase decisions.
   */
  readPool: Pool;
  guard: OverloadGuard;
  /** Buyers decided per transaction, at most; transactions at once, at most; how long one may wait for
   * their batch; how long a SKU's batch after a batch gathers buyers. */
  batch: { maxSize: number; maxConcurrent: number; maxWaitMs: number; gatherMs: number };
  limits: FastPathLimits;
  /** How long a SOLD_OUT seen in Redis (with nothing reserved) is answered locally. This bounds staleness. */
  soldOutCacheMs: number;
  /**
   * A connection of its own on which to hear that units came back (see followUnitsBack). Without it
   * the sold-out shortcut stays off: every request asks Redis.
   */
  subscriber?: RedisClient;
  /** Where admitted buyers go instead of waiting for the database (ADR 0030); none: they always wait. */
  queue?: PurchaseQueueOptions;
  observer?: PurchaseObserver;
}

/** Queued admission (ADR 0030). */
export interface PurchaseQueueOptions {
  /**
   * The admission of an activity without its own: sync, every admitted buyer decided at once; queued, every
   * one queued; auto, those admitted while a decision waits past `afterWaitMs`.
   */
  admission: Queueing["fallback"];
  afterWaitMs: number;
  /** How long a queued buyer's reservation (and ticket) lasts: beyond the queue's worst wait. */
  reservationTtlMs: number;
  /** Buyers the writers have not decided, beyond which nobody more is queued (503 with Retry-After). */
  maxBacklog: number;
  send(buyer: QueuedBuyer): Promise<void>;
  /** False while the queue refuses sends (it failed a moment ago): buyers are decided at once. */
  accepting(): boolean;
  backlog(): number;
}

const noObserver: PurchaseObserver = {
  transaction: () => {},
  reservations: () => {},
  overloaded: () => {},
  queued: () => {},
  dependencyFailed: () => {},
};

export function createPurchaseService(options: PurchaseServiceOptions) {
  const { redis, pool, guard, limits } = options;
  const observer = options.observer ?? noObserver;
  const batcher = createDecisionBatcher({
    pool,
    guard,
    maxBatch: options.batch.maxSize,
    maxConcurrent: options.batch.maxConcurrent,
    maxWaitMs: options.batch.maxWaitMs,
    gatherMs: options.batch.gatherMs,
    onTransaction: (outcome) => observer.transaction(outcome),
  });
  const soldOut = createSoldOutShortcut(options.soldOutCacheMs, (activityId, skuId, known) =>
    soldOutBuyers(pool, activityId, skuId, known),
  );
  if (options.subscriber) followUnitsBack(options.subscriber, soldOut);
  const skuWindow = createSkuWindows(options.readPool);
  const overloaded = (): PurchaseResult => {
    observer.overloaded();
    return refusals.overloaded;
  };

  const { queue } = options;
  /** Which buyers the script sends to the queue, by their activity's admission, as this instance stands now. */
  const queueing = (): Queueing | undefined =>
    queue && {
      fallback: queue.admission,
      now: !queue.accepting() ? "off" : batcher.oldestWaitMs() > queue.afterWaitMs ? "busy" : "calm",
      reservationTtlMs: queue.reservationTtlMs,
    };

  async function fastPath(request: PurchaseInput): Promise<ReserveOutcome | "REDIS_DOWN"> {
    try {
      return await reserveUnit(redis, request, limits, queueing());
    } catch (error) {
      observer.dependencyFailed("redis", "reserve", error);
      return "REDIS_DOWN";
    }
  }

  /** `counted`: this call made the reservation; `inherited`: an earlier attempt with the same key did. */
  /** Frees the request's reservation (`counted`: this instance's own, so its gauge goes down). */
  async function release(request: PurchaseInput, reservation: "counted" | "inherited") {
    await releaseReservation(redis, request).catch((error) =>
      observer.dependencyFailed("redis", "release", error),
    );
    if (reservation === "counted") observer.reservations(-1);
  }

  async function decide(
    request: PurchaseInput,
    reservation: "counted" | "inherited",
  ): Promise<PurchaseResult> {
    let decision: PurchaseDecision;
    try {
      decision = await batcher.decide(request);
    } catch (error) {
      if (error instanceof OutcomeUnknownError) {
        observer.dependencyFailed("database", "decide", error);
        // The unit may be sold: keep the reservation until its TTL so nobody else can take it twice.
        return refusals.outcomeUnknown;
      }
      // An inherited reservation is an earlier attempt's, whose order may hold the unit: it stays until
      // CDC applies that order or its TTL ends, or this key's retry would be told SOLD_OUT meanwhile.
      if (reservation === "counted") await release(request, reservation);
      if (error instanceof OverloadedError) return overloaded();
      // A database that answers but whose rows stayed locked is told apart from one that does not answer.
      if (error instanceof DecisionConflictError) {
        observer.dependencyFailed("database", "decide-contended", error);
        return refusals.contended;
      }
      observer.dependencyFailed("database", "decide", error);
      return refusals.databaseDown;
    }
    if (!holdsItsUnit(decision, reservation)) await release(request, reservation);
    return decisionResult(decision);
  }

  /**
   * What a key that may already hold an order is told when it has none: the order (or a refused reuse
   * of the key) is read from MySQL through the overload guard, so that a buyer hammering new keys never
   * becomes a flood of reads.
   */
  async function replayOr(request: PurchaseInput, otherwise: PurchaseResult): Promise<PurchaseResult> {
    try {
      const decision = await guard.run(() => findReplay(pool, request));
      return decision ? decisionResult(decision) : otherwise;
    } catch (error) {
      if (error instanceof OverloadedError) return overloaded();
      observer.dependencyFailed("database", "replay", error);
      return refusals.databaseDown;
    }
  }

  /**
   * Redis has no state for this SKU: the sale directory says whether it exists and whether its sale has
   * ended (an ended sale keeps no state: its keys expired, or a rebuild would write them already
   * expired); a live one the maintainer is asked to rebuild. MySQL is asked only while the directory is
   * not loaded whole (once per SKU at a time, see createSkuWindows). Throws when MySQL cannot be asked.
   */
  async function missingSku(
    activityId: number,
    skuId: number,
  ): Promise<"NOT_FOUND" | "ENDED" | "REBUILDING"> {
    const known = await lookupDirectory(redis, activityId, skuId).catch((error) => {
      observer.dependencyFailed("redis", "sale-directory", error);
      return "INCOMPLETE" as const;
    });
    if (known === "NOT_FOUND" || known === "ENDED") return known;
    if (known === "INCOMPLETE") {
      const window = await skuWindow(activityId, skuId);
      if (!window) return "NOT_FOUND";
      if (window.endsMs <= Date.now()) return "ENDED";
    }
    await redis
      .sadd(rebuildQueueKey, skuRef(activityId, skuId))
      .catch((error) => observer.dependencyFailed("redis", "request-rebuild", error));
    return "REBUILDING";
  }

  /** A purchase of a SKU missing from Redis: the closed window (or the key's order), or come back. */
  async function notLoaded(request: PurchaseInput): Promise<PurchaseResult> {
    let missing: Awaited<ReturnType<typeof missingSku>>;
    try {
      missing = await missingSku(request.activityId, request.skuId);
    } catch (error) {
      observer.dependencyFailed("database", "sku-window", error);
      return refusals.databaseDown;
    }
    switch (missing) {
      case "NOT_FOUND":
        return refusals.unknownSku;
      case "ENDED":
        return replayOr(request, refusals.ended);
      case "REBUILDING":
        return refusals.rebuilding;
    }
  }

  /** The answer this process knows without asking anyone (a sold-out SKU's snapshot), or undefined. */
  function answerLocally(request: PurchaseInput): PurchaseResult | undefined {
    switch (soldOut.answer(request.activityId, request.skuId, request.userId, request.requestId)) {
      case "SOLD_OUT":
        return refusals.soldOut;
      case "ALREADY_PURCHASED":
        return refusals.alreadyPurchased;
    }
  }

  /**
   * An admitted buyer put on the queue, their ticket written first so that it is there to read once
   * they hear of it. A full queue refuses them; a queue that does not take them sends them to the
   * database at once (a second delivery of a send that seemed lost is idempotent on their key).
   */
  async function enqueue(
    request: PurchaseInput,
    queue: PurchaseQueueOptions,
    traceId: string,
  ): Promise<PurchaseResult> {
    const giveUp = async (refusal: PurchaseResult) => {
      await release(request, "counted");
      return refusal;
    };
    if (queue.backlog() >= queue.maxBacklog) return giveUp(refusals.queueFull);
    const { requestId, activityId, skuId } = request;
    const ticket: Ticket = { state: "QUEUED", activityId, skuId, queuedAtMs: Date.now() };
    const place = { ...request, queuedAtMs: ticket.queuedAtMs };
    let recorded: Awaited<ReturnType<typeof recordQueued>>;
    try {
      recorded = await recordQueued(redis, place, encodeTicket(ticket));
    } catch (error) {
      observer.dependencyFailed("redis", "ticket", error);
      // Written perhaps (its answer lost): a ticket with no place in line behind it must not stay.
      await forgetPlace(redis, place).catch(() => {});
      return giveUp(refusals.cacheDown);
    }
    // The key names a live purchase already: this SKU's place still in line (its reservation had lapsed)
    // is that ticket again; another SKU's place or order makes this a reused key; this SKU's order is
    // replayed by the database.
    if (!recorded.written)
      switch (recorded.named) {
        case "QUEUED":
          return giveUp({ kind: "QUEUED", requestId, ticket: decodeTicket(recorded.ticket) });
        case "TAKEN":
          return giveUp(refusals.keyReused);
        case "CREATED":
          return decide(request, "counted");
      }
    try {
      await queue.send({ ...place, traceId });
    } catch (error) {
      observer.dependencyFailed("kafka", "enqueue", error);
      return decideAtOnce(request, place);
    }
    // The reservation is the queue's now: its writers free it or CDC applies its order.
    observer.reservations(-1);
    observer.queued();
    return { kind: "QUEUED", requestId, ticket };
  }

  /**
   * A buyer the queue did not take, decided at once. The database's decision goes on their ticket too (a
   * retry that read it as queued meanwhile follows it there; a send that did land after all is handed to
   * a writer, which finds it told); a decision the database did not make (overloaded, away, unknown)
   * forgets the place instead, so that a send that landed is still decided.
   */
  async function decideAtOnce(request: PurchaseInput, place: QueuedPlace): Promise<PurchaseResult> {
    const result = await decide(request, "counted");
    const final = result.kind !== "QUEUED" && result.kind !== "UNAVAILABLE";
    try {
      if (final)
        await recordOutcomes(redis, [
          { place, ticket: encodeTicket(decidedTicket(place, result, Date.now())) },
        ]);
      else await forgetPlace(redis, place);
    } catch (error) {
      observer.dependencyFailed("redis", "ticket", error);
      if (final) await forgetPlace(redis, place).catch(() => {});
    }
    return result;
  }

  /** The same key again while its ticket is in line for this SKU: the same ticket, never a second place. */
  async function stillQueued(request: PurchaseInput): Promise<PurchaseResult | undefined> {
    const stored = await readTicket(redis, request.userId, request.requestId).catch((error) => {
      observer.dependencyFailed("redis", "ticket", error);
      return null;
    });
    const ticket = stored === null ? undefined : decodeTicket(stored);
    return ticket?.state === "QUEUED" &&
      ticket.activityId === request.activityId &&
      ticket.skuId === request.skuId
      ? { kind: "QUEUED", requestId: request.requestId, ticket }
      : undefined;
  }

  async function throughRedis(request: PurchaseInput, traceId: string): Promise<PurchaseResult> {
    const fast = await fastPath(request);
    if (fast === "REDIS_DOWN") return refusals.cacheDown;
    switch (fast.outcome) {
      case "RESERVED":
        observer.reservations(1);
        return fast.queued && queue ? enqueue(request, queue, traceId) : decide(request, "counted");
      case "IN_FLIGHT":
        // The same key again while its first attempt is unresolved: the transaction is idempotent on the key.
        if (fast.requestId === request.requestId)
          return (queue && (await stillQueued(request))) ?? decide(request, "inherited");
        return refusals.purchaseInProgress;
      case "SOLD_OUT":
        soldOut.soldOut(request.activityId, request.skuId);
        return refusals.soldOut;
      case "ALREADY":
        return replayOr(request, refusals.alreadyPurchased);
      case "BOUGHT":
        return refusals.alreadyPurchased;
      case "RATE_LIMITED":
        return { ...refusals.rateLimited, retryAfterS: Math.ceil(fast.retryAfterMs / 1000) };
      case "NOT_STARTED":
        return refusals.notStarted;
      case "ENDED":
        return refusals.ended;
      case "NOT_LOADED":
        return notLoaded(request);
    }
  }

  return {
    /**
     * A result at once when this process already knows it (a storm's sold-out answer: no promise to
     * wait for), else the fast path and, for a plausible buyer, the database.
     */
    purchase(request: PurchaseInput, traceId = ""): PurchaseResult | Promise<PurchaseResult> {
      return answerLocally(request) ?? throughRedis(request, traceId);
    },
    missingSku,
    /** A buyer's own order by their key. */
    ownOrder: (userId: string, requestId: string): Promise<Order | undefined> =>
      findPurchase(pool, userId, requestId),
  };
}

export type PurchaseService = ReturnType<typeof createPurchaseService>;
