import {
  buyerField,
  type FlashgateRedis,
  rebuildQueueKey,
  skuKeys,
  skuRef,
  withScripts,
  writeSkuLoad,
} from "@flashgate/cache";
import { closeOrder, createPool } from "@flashgate/db";
import {
  createSale,
  dbaConnection,
  eventually,
  fastDatabaseUrl,
  fastRedisUrl,
  fastTierContext,
  freshIds,
  openSkuLoad,
  skuInDatabase,
  startTcpProxy,
  untilLockWait,
} from "@flashgate/testkit";
import { Redis } from "ioredis";
import type { Pool } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TransactionOutcome } from "./decision-batcher.ts";
import { createOverloadGuard } from "./overload-guard.ts";
import { createPurchaseService, type PurchaseObserver, type PurchaseServiceOptions } from "./purchase.ts";
import { type PurchaseResult, refusals } from "./refusals.ts";

const hour = 3_600_000;

/** What the service told its observer: transactions, the reservation gauge, dependency failures. */
function recorder() {
  const seen = {
    transactions: [] as TransactionOutcome[],
    reservations: 0,
    overloaded: 0,
    failures: [] as string[],
  };
  const observer: PurchaseObserver = {
    transaction: (outcome) => seen.transactions.push(outcome),
    reservations: (delta) => {
      seen.reservations += delta;
    },
    overloaded: () => {
      seen.overloaded += 1;
    },
    queued: () => {},
    dependencyFailed: (dependency, operation) => seen.failures.push(`${dependency} ${operation}`),
  };
  return { seen, observer };
}

describe("the purchase service across Redis and the database (no CDC: the tests apply what it would)", () => {
  let redis: FlashgateRedis;
  let pool: Pool;
  let readPool: Pool;
  beforeAll(() => {
    redis = withScripts(new Redis(fastRedisUrl()));
    pool = createPool(fastDatabaseUrl(), { connectionLimit: 4, multipleStatements: true });
    readPool = createPool(fastDatabaseUrl(), { connectionLimit: 2 });
  });
  afterAll(async () => {
    redis.disconnect();
    await Promise.all([pool.end(), readPool.end()]);
  });

  const service = (options: Partial<PurchaseServiceOptions> = {}) => {
    const { seen, observer } = recorder();
    const purchases = createPurchaseService({
      redis,
      pool,
      readPool,
      guard: createOverloadGuard({ maxInFlight: 4, maxQueue: 64, maxWaitMs: 2000 }),
      batch: { maxSize: 8, maxConcurrent: 4, maxWaitMs: 2000, gatherMs: 0 },
      limits: { reservationTtlMs: 10_000, rateLimit: 100, rateWindowMs: 60_000 },
      soldOutCacheMs: 60_000,
      observer,
      ...options,
    });
    return { purchases, seen };
  };

  /** A sale in MySQL and the same sale loaded in Redis (as the maintainer would load it). */
  async function sale(units: number, fields: { startsAt?: Date; endsAt?: Date; cachedUnits?: number } = {}) {
    const ids = freshIds();
    const startsAt = fields.startsAt ?? new Date(Date.now() - hour);
    const endsAt = fields.endsAt ?? new Date(Date.now() + hour);
    await createSale(pool, { ...ids, units, startsAt, endsAt });
    await writeSkuLoad(
      redis,
      ids.activityId,
      ids.skuId,
      openSkuLoad({ available: fields.cachedUnits ?? units, startsAt, endsAt }),
    );
    const keys = skuKeys(ids.activityId, ids.skuId);
    return {
      ids,
      request: (user: number, key = `svc-${ids.activityId}-${user}`) => ({
        ...ids,
        userId: String(user),
        requestId: key,
      }),
      reservations: () => redis.zcard(keys.reservations),
      /** What CDC does once an order is applied: the buyer is known, the reservation gone. */
      applyOrder: async (user: number) => {
        await redis.hset(keys.sku, buyerField(String(user)), 1);
        await redis.zrem(keys.reservations, String(user));
        await redis.hdel(keys.reservationRequests, String(user));
      },
    };
  }

  /** User 1 buys with their default key, and CDC applies it: Redis then knows the buyer. */
  async function boughtAndApplied(s: Awaited<ReturnType<typeof sale>>) {
    await service().purchases.purchase(s.request(1));
    await s.applyOrder(1);
  }

  const orderOf = (result: PurchaseResult) => (result as Extract<PurchaseResult, { order: unknown }>).order;

  it("creates the order in MySQL and keeps the reservation until CDC applies it; a retry with the key gets the same order", async () => {
    const { purchases, seen } = service();
    const s = await sale(3);
    const created = await purchases.purchase(s.request(1));
    expect(created.kind).toBe("CREATED");
    expect(orderOf(created)).toMatchObject({
      userId: "1",
      requestId: s.request(1).requestId,
      state: "PENDING",
    });
    expect(await s.reservations()).toBe(1);
    expect(seen).toEqual({ transactions: ["committed"], reservations: 1, overloaded: 0, failures: [] });
    expect((await skuInDatabase(pool, s.ids.activityId, s.ids.skuId)).available).toBe(2);

    // Before CDC: the reservation is in flight, and the same key inherits it.
    const inFlight = await purchases.purchase(s.request(1));
    expect(inFlight).toEqual({ kind: "REPLAYED", order: orderOf(created) });
    expect(await s.reservations()).toBe(1);
    // Another key of the same buyer meanwhile is not a second purchase.
    expect(await purchases.purchase(s.request(1, `svc-${s.ids.activityId}-other`))).toEqual(
      refusals.purchaseInProgress,
    );

    // After CDC: Redis knows the buyer; the key still gets its order, any other key is refused.
    await s.applyOrder(1);
    expect(await purchases.purchase(s.request(1))).toEqual({ kind: "REPLAYED", order: orderOf(created) });
    expect(await purchases.purchase(s.request(1, `svc-${s.ids.activityId}-third`))).toEqual(
      refusals.alreadyPurchased,
    );
    expect(await purchases.ownOrder("1", s.request(1).requestId)).toEqual(orderOf(created));
    expect(await purchases.ownOrder("2", s.request(1).requestId)).toBeUndefined();
  });

  it("releases the reservation of every purchase MySQL refuses, and says why", async () => {
    const { purchases, seen } = service();
    // Redis believes in units MySQL no longer has (a sale CDC has not applied yet).
    const s = await sale(0, { cachedUnits: 5 });
    expect(await purchases.purchase(s.request(1))).toEqual(refusals.soldOut);
    expect(await s.reservations()).toBe(0);
    expect(seen.reservations).toBe(0);
    expect(seen.transactions).toEqual(["rejected"]);

    // A buyer whose order Redis has not seen yet, with a new key.
    const t = await sale(5);
    await purchases.purchase(t.request(2));
    await t.applyOrder(2);
    await redis.hdel(skuKeys(t.ids.activityId, t.ids.skuId).sku, buyerField("2"));
    expect(await purchases.purchase(t.request(2, `svc-${t.ids.activityId}-again`))).toEqual(
      refusals.alreadyPurchased,
    );
    expect(await t.reservations()).toBe(0);

    // The buyer's key used again for another SKU.
    const u = await sale(5);
    expect(await purchases.purchase({ ...u.ids, userId: "2", requestId: t.request(2).requestId })).toEqual(
      refusals.keyReused,
    );
    expect(await u.reservations()).toBe(0);
  });

  it("answers outside the window, over the rate limit and for a sold-out SKU without the database", async () => {
    const { purchases, seen } = service({
      limits: { reservationTtlMs: 10_000, rateLimit: 1, rateWindowMs: 60_000 },
    });
    const early = await sale(5, {
      startsAt: new Date(Date.now() + hour),
      endsAt: new Date(Date.now() + 2 * hour),
    });
    expect(await purchases.purchase(early.request(1))).toEqual(refusals.notStarted);
    const late = await sale(5, {
      startsAt: new Date(Date.now() - 2 * hour),
      endsAt: new Date(Date.now() - 1000),
    });
    expect(await purchases.purchase(late.request(1))).toEqual(refusals.ended);
    const limited = await sale(5, { cachedUnits: 5 });
    await purchases.purchase(limited.request(1));
    const refused = await purchases.purchase(limited.request(1, `svc-${limited.ids.activityId}-2nd`));
    expect(refused.kind).toBe("RATE_LIMITED");
    // A window of 60 s: told to come back within it, in whole seconds.
    const retryAfterS = (refused as { retryAfterS: number }).retryAfterS;
    expect(retryAfterS).toBeGreaterThanOrEqual(59);
    expect(retryAfterS).toBeLessThanOrEqual(60);
    expect(seen.transactions).toEqual(["committed"]);
  });

  it("answers a storm's sold-out locally once Redis said so, but a buyer of the SKU is told of their order", async () => {
    const subscriber = new Redis(fastRedisUrl());
    try {
      const { purchases } = service({ subscriber });
      const s = await sale(1);
      const created = await purchases.purchase(s.request(1));
      await s.applyOrder(1);
      await redis.hset(skuKeys(s.ids.activityId, s.ids.skuId).sku, "available", 0);
      // The shortcut stands once the subscription does; until then every answer comes from Redis.
      await eventually(async () => {
        await purchases.purchase(s.request(2));
        expect(purchases.purchase(s.request(3))).toEqual(refusals.soldOut);
      });
      expect(purchases.purchase(s.request(1, `svc-${s.ids.activityId}-new`))).toEqual(
        refusals.alreadyPurchased,
      );
      // The buyer's own key is not answered locally: it goes on to get its order.
      const replay = purchases.purchase(s.request(1));
      expect(replay).toBeInstanceOf(Promise);
      expect(await replay).toEqual({ kind: "REPLAYED", order: orderOf(created) });
    } finally {
      subscriber.disconnect();
    }
  });

  it("renews a sold-out snapshot from its unchanged stock row without reading the buyers again", async () => {
    const subscriber = new Redis(fastRedisUrl());
    try {
      const ttlMs = 200;
      const { purchases } = service({ subscriber, soldOutCacheMs: ttlMs });
      const s = await sale(1);
      await purchases.purchase(s.request(1));
      await s.applyOrder(1);
      await redis.hset(skuKeys(s.ids.activityId, s.ids.skuId).sku, "available", 0);
      await eventually(async () => {
        await purchases.purchase(s.request(2));
        expect(purchases.purchase(s.request(3))).toEqual(refusals.soldOut);
      });
      // An order the stock row does not know of: a renewal that read the buyers would name user 9.
      await pool.query(
        `INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
         VALUES (?, ?, ?, 9, 'PENDING', 1999, 'EUR', NOW(3), NOW(3) + INTERVAL 1 HOUR)`,
        [`svc-${s.ids.activityId}-9`, s.ids.activityId, s.ids.skuId],
      );
      // Answering on past several lifetimes of the first snapshot: it has been renewed meanwhile.
      const since = performance.now();
      await eventually(async () => {
        await purchases.purchase(s.request(2));
        expect(performance.now() - since).toBeGreaterThan(4 * ttlMs);
        // Both answered locally, from the renewed snapshot, which still does not name user 9.
        expect(purchases.purchase(s.request(3))).toEqual(refusals.soldOut);
        expect(purchases.purchase(s.request(9, `svc-${s.ids.activityId}-9-new`))).toEqual(refusals.soldOut);
      });
    } finally {
      subscriber.disconnect();
    }
  });

  it("a SKU missing from Redis: unknown is 404, open asks for a rebuild (503), ended answers from MySQL", async () => {
    const { purchases } = service();
    const unknown = freshIds();
    expect(
      await purchases.purchase({ ...unknown, userId: "1", requestId: `svc-${unknown.activityId}-1` }),
    ).toEqual(refusals.unknownSku);

    const open = freshIds();
    await createSale(pool, { ...open, units: 5 });
    expect(await purchases.purchase({ ...open, userId: "1", requestId: `svc-${open.activityId}-1` })).toEqual(
      refusals.rebuilding,
    );
    expect(await redis.sismember(rebuildQueueKey, skuRef(open.activityId, open.skuId))).toBe(1);
    await redis.srem(rebuildQueueKey, skuRef(open.activityId, open.skuId));
    // The public view follows the same rule: it asks for the rebuild too.
    expect(await purchases.missingSku(open.activityId, open.skuId)).toBe("REBUILDING");
    expect(await redis.sismember(rebuildQueueKey, skuRef(open.activityId, open.skuId))).toBe(1);
    await redis.srem(rebuildQueueKey, skuRef(open.activityId, open.skuId));
    expect(await purchases.missingSku(unknown.activityId, unknown.skuId)).toBe("NOT_FOUND");

    // Its cache dropped after it ended: a key with an order gets it, any other the closed window.
    const ended = await sale(5);
    const created = await service().purchases.purchase(ended.request(1));
    await pool.query("UPDATE activity SET ends_at = NOW(3) - INTERVAL 1 SECOND WHERE id = ?", [
      ended.ids.activityId,
    ]);
    const keys = skuKeys(ended.ids.activityId, ended.ids.skuId);
    await redis.del(keys.sku, keys.reservations, keys.reservationRequests);
    expect(await purchases.purchase(ended.request(1))).toEqual({ kind: "REPLAYED", order: orderOf(created) });
    expect(await purchases.purchase(ended.request(2))).toEqual(refusals.ended);
    expect(await purchases.missingSku(ended.ids.activityId, ended.ids.skuId)).toBe("ENDED");
    expect(await redis.sismember(rebuildQueueKey, skuRef(ended.ids.activityId, ended.ids.skuId))).toBe(0);
  });

  it("answers what MySQL decides when Redis still believes otherwise: not open, no such SKU", async () => {
    const { purchases } = service();
    const closing = await sale(5);
    await pool.query("UPDATE activity SET ends_at = NOW(3) - INTERVAL 1 SECOND WHERE id = ?", [
      closing.ids.activityId,
    ]);
    expect(await purchases.purchase(closing.request(1))).toEqual(refusals.notOpen);
    expect(await closing.reservations()).toBe(0);
    const gone = await sale(5);
    const dba = await dbaConnection(fastTierContext());
    await dba.query("DELETE FROM sale_stock WHERE activity_id = ? AND sku_id = ?", [
      gone.ids.activityId,
      gone.ids.skuId,
    ]);
    await dba.end();
    expect(await purchases.purchase(gone.request(1))).toEqual(refusals.unknownSku);
    expect(await gone.reservations()).toBe(0);
  });

  it("a retry that inherits the reservation of an order since closed gives it back; its own count stays", async () => {
    const { purchases, seen } = service();
    const s = await sale(5);
    const created = await purchases.purchase(s.request(1));
    expect((await closeOrder(pool, orderOf(created).orderId)).kind).toBe("closed");
    // CDC has applied neither the order nor its closing: the reservation is still the buyer's.
    const retry = await purchases.purchase(s.request(1));
    expect(retry).toMatchObject({ kind: "REPLAYED", order: { state: "CLOSED" } });
    expect(await s.reservations()).toBe(0);
    // The reservation was counted by the first attempt, which kept it; the retry did not count one.
    expect(seen.reservations).toBe(1);
  });

  it("a retry that finds the database down or full keeps the reservation it inherited: until CDC, it is the order's unit", async () => {
    const s = await sale(1);
    const created = await service().purchases.purchase(s.request(1));
    expect(created.kind).toBe("CREATED");
    const deadPool = createPool("mysql://nobody:nothing@127.0.0.1:1/flashgate", {
      connectionLimit: 1,
      multipleStatements: true,
    });
    try {
      expect(await service({ pool: deadPool }).purchases.purchase(s.request(1))).toEqual(
        refusals.databaseDown,
      );
    } finally {
      await deadPool.end();
    }
    const full = service({ guard: createOverloadGuard({ maxInFlight: 0, maxQueue: 0, maxWaitMs: 1 }) });
    expect(await full.purchases.purchase(s.request(1))).toEqual(refusals.overloaded);
    // CDC has not applied the order: its reservation is all that tells Redis the last unit is taken.
    expect(await s.reservations()).toBe(1);
    const { purchases } = service();
    expect(await purchases.purchase(s.request(2))).toEqual(refusals.soldOut);
    expect(await purchases.purchase(s.request(1))).toEqual({ kind: "REPLAYED", order: orderOf(created) });
  });

  it("a key that may hold an order is read through the overload guard: 503 when it is full or MySQL is down", async () => {
    const s = await sale(5);
    await boughtAndApplied(s);
    const full = service({ guard: createOverloadGuard({ maxInFlight: 0, maxQueue: 0, maxWaitMs: 1 }) });
    expect(await full.purchases.purchase(s.request(1, `svc-${s.ids.activityId}-x`))).toEqual(
      refusals.overloaded,
    );
    expect(full.seen.overloaded).toBe(1);
    const deadPool = createPool("mysql://nobody:nothing@127.0.0.1:1/flashgate", { connectionLimit: 1 });
    try {
      const down = service({ pool: deadPool, readPool: deadPool });
      expect(await down.purchases.purchase(s.request(1, `svc-${s.ids.activityId}-y`))).toEqual(
        refusals.databaseDown,
      );
      const missing = freshIds();
      expect(
        await down.purchases.purchase({ ...missing, userId: "1", requestId: `svc-${missing.activityId}-1` }),
      ).toEqual(refusals.databaseDown);
      expect(down.seen.failures).toEqual(["database replay", "database sku-window"]);
    } finally {
      await deadPool.end();
    }
  });

  it("a stock row held past the decision's retries is a 503 that says so, told apart from a database down, and frees the reservation", async () => {
    const s = await sale(5);
    const blocker = await pool.getConnection();
    try {
      // A DBA's transaction holds the stock row longer than every attempt of the decision waits.
      await blocker.query("START TRANSACTION");
      await blocker.query("SELECT * FROM sale_stock WHERE activity_id = ? AND sku_id = ? FOR UPDATE", [
        s.ids.activityId,
        s.ids.skuId,
      ]);
      const { purchases, seen } = service();
      expect(await purchases.purchase(s.request(1))).toEqual(refusals.contended);
      expect(await s.reservations()).toBe(0);
      expect(seen).toMatchObject({
        transactions: ["failed"],
        reservations: 0,
        failures: ["database decide-contended"],
      });
    } finally {
      await blocker.query("ROLLBACK");
      blocker.release();
    }
    expect((await skuInDatabase(pool, s.ids.activityId, s.ids.skuId)).available).toBe(5);
  }, 30_000);

  it("a decision whose connection is lost mid-flight is an unknown outcome: 503, and the reservation kept", async () => {
    const s = await sale(5);
    const proxy = await startTcpProxy(Number(new URL(fastDatabaseUrl()).port));
    const viaProxy = new URL(fastDatabaseUrl());
    viaProxy.port = String(proxy.port);
    const proxied = createPool(viaProxy.toString(), { connectionLimit: 2, multipleStatements: true });
    const blocker = await pool.getConnection();
    try {
      // Another transaction holds the stock row: the decision waits on it until the network goes.
      await blocker.query("START TRANSACTION");
      await blocker.query("SELECT * FROM sale_stock WHERE activity_id = ? AND sku_id = ? FOR UPDATE", [
        s.ids.activityId,
        s.ids.skuId,
      ]);
      const { purchases, seen } = service({ pool: proxied });
      const answer = purchases.purchase(s.request(1));
      await untilLockWait();
      await proxy.cut();
      expect(await answer).toEqual(refusals.outcomeUnknown);
      expect(await s.reservations()).toBe(1);
      expect(seen).toMatchObject({
        transactions: ["unknown"],
        reservations: 1,
        failures: ["database decide"],
      });
    } finally {
      await blocker.query("ROLLBACK");
      blocker.release();
      await proxied.end().catch(() => {});
      await proxy.close();
    }
  });

  it("fails closed: Redis down or the database down is a fast 503, and no reservation outlives a definite refusal", async () => {
    const deadRedis = withScripts(
      new Redis({ port: 1, lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null }),
    );
    deadRedis.on("error", () => {});
    const noRedis = service({ redis: deadRedis });
    const s = await sale(5);
    expect(await noRedis.purchases.purchase(s.request(1))).toEqual(refusals.cacheDown);
    expect(noRedis.seen.failures).toEqual(["redis reserve"]);

    const deadPool = createPool("mysql://nobody:nothing@127.0.0.1:1/flashgate", {
      connectionLimit: 1,
      multipleStatements: true,
    });
    try {
      const noDatabase = service({ pool: deadPool });
      expect(await noDatabase.purchases.purchase(s.request(2))).toEqual(refusals.databaseDown);
      expect(await s.reservations()).toBe(0);
      expect(noDatabase.seen.reservations).toBe(0);
      expect(noDatabase.seen.failures).toEqual(["database decide"]);
      expect(noDatabase.seen.transactions).toEqual(["failed"]);
    } finally {
      await deadPool.end();
    }

    // No slot for a transaction: 503 at once, the reservation given back.
    const full = service({ guard: createOverloadGuard({ maxInFlight: 0, maxQueue: 0, maxWaitMs: 1 }) });
    expect(await full.purchases.purchase(s.request(3))).toEqual(refusals.overloaded);
    expect(await s.reservations()).toBe(0);
    expect(full.seen).toMatchObject({ overloaded: 1, failures: [], transactions: [] });
  });
});
