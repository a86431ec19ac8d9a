import { applyActivityChange, applySkuChanges, readCachedSku, skuKeys } from "@flashgate/cache";
import { createSale, eventually, freshIds, problemOf, skuInDatabase, sold } from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import mysql from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** Far past any real binlog position: the cache takes it as the newest change. */
const laterPosition = "99999999:0000000000000:000000";

/**
 * A key that has an order gets that order (200) on every path and at every moment; a user who holds an
 * order and sends another key is told ALREADY_PURCHASED, never SOLD_OUT. No maintainer runs here, so
 * each test sets the cache to the moment it names.
 */
describe("a retry of a committed purchase gets the truth", () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => api.close());

  async function buyTheLastUnit() {
    const sale = freshIds();
    await createSale(api.pool, { ...sale, units: 1 });
    await api.load(sale.activityId, sale.skuId);
    const first = await api.purchase(7, sale);
    expect(first.status).toBe(201);
    return { sale, first };
  }

  it("the same key at once, before CDC applied anything: the order (MySQL has no unit left)", async () => {
    const { sale, first } = await buyTheLastUnit();
    const retry = await api.purchase(7, sale, first.key);
    expect([retry.status, retry.body]).toEqual([200, first.body]);
    const otherKey = await api.purchase(7, sale);
    expect([otherKey.status, otherKey.body.code]).toEqual([409, "ALREADY_PURCHASED"]);
    expect(sold(await skuInDatabase(api.pool, sale.activityId, sale.skuId))).toBe(1);
  });

  it("Redis already shows the stock at 0 while the buyer's reservation is in flight", async () => {
    const { sale, first } = await buyTheLastUnit();
    await applySkuChanges(api.redis, sale.activityId, sale.skuId, [
      { kind: "stock", op: "u", position: laterPosition, available: 0, priceCents: 1999, currency: "EUR" },
    ]);
    expect((await readCachedSku(api.redis, sale.activityId, sale.skuId))?.liveReservations).toBe(1);
    const retry = await api.purchase(7, sale, first.key);
    expect([retry.status, retry.body]).toEqual([200, first.body]);
    const otherKey = await api.purchase(7, sale);
    expect([otherKey.status, otherKey.body.code]).toEqual([409, "ALREADY_PURCHASED"]);
    const stranger = await api.purchase(8, sale);
    expect([stranger.status, stranger.body.code]).toEqual([409, "SOLD_OUT"]);
    // The stranger's SOLD_OUT armed this instance's sold-out shortcut: the buyer's key still gets the order.
    const again = await api.purchase(7, sale, first.key);
    expect([again.status, again.body]).toEqual([200, first.body]);
  });

  it("the sale window closed after the purchase: the order, in flight or applied", async () => {
    const { sale, first } = await buyTheLastUnit();
    const closed = {
      position: laterPosition,
      startsMs: Date.now() - 60_000,
      endsMs: Date.now() - 1,
      rebuy: false,
    };
    await applyActivityChange(api.redis, sale.activityId, closed);
    const inFlight = await api.purchase(7, sale, first.key);
    expect([inFlight.status, inFlight.body]).toEqual([200, first.body]);

    await applySkuChanges(api.redis, sale.activityId, sale.skuId, [
      { kind: "order", op: "c", position: laterPosition, userId: "7", live: true },
    ]);
    const applied = await api.purchase(7, sale, first.key);
    expect([applied.status, applied.body]).toEqual([200, first.body]);
    const stranger = await api.purchase(8, sale);
    expect([stranger.status, stranger.body.code]).toEqual([409, "ACTIVITY_NOT_OPEN"]);
  });

  it("a sale that ended more than a day ago (nothing left in Redis): closed, and a buyer's key its order", async () => {
    const { sale, first } = await buyTheLastUnit();
    await api.pool.query("UPDATE activity SET starts_at = ?, ends_at = ? WHERE id = ?", [
      new Date(Date.now() - 3 * 86_400_000),
      new Date(Date.now() - 2 * 86_400_000),
      sale.activityId,
    ]);
    // Its keys have expired; a rebuild keeps nothing for it.
    await api.redis.del(Object.values(skuKeys(sale.activityId, sale.skuId)).slice(0, 3));
    expect(await api.load(sale.activityId, sale.skuId)).toBe("ended");
    expect(await readCachedSku(api.redis, sale.activityId, sale.skuId)).toBeUndefined();

    const stranger = await api.purchase(8, sale);
    expect([stranger.status, stranger.body.code]).toEqual([409, "ACTIVITY_NOT_OPEN"]);
    const retry = await api.purchase(7, sale, first.key);
    expect([retry.status, retry.body]).toEqual([200, first.body]);
    const view = await fetch(`${api.url}/v1/activities/${sale.activityId}/skus/${sale.skuId}`);
    expect([view.status, (await problemOf(view)).code]).toEqual([409, "ACTIVITY_NOT_OPEN"]);
  });

  it("units coming back drop a sold-out snapshot at once: their buyer is not told SOLD_OUT", async () => {
    // A snapshot that would otherwise answer for a minute.
    const slow = await startApi({ env: { SOLD_OUT_CACHE_MS: "60000" } });
    try {
      const sale = freshIds();
      await createSale(slow.pool, { ...sale, units: 1 });
      await slow.load(sale.activityId, sale.skuId);
      expect((await slow.purchase(7, sale)).status).toBe(201);
      // As CDC would: the order (which frees its reservation), then the stock it took.
      await applySkuChanges(slow.redis, sale.activityId, sale.skuId, [
        { kind: "order", op: "c", position: "99999999:0000000000000:000000", userId: "7", live: true },
        {
          kind: "stock",
          op: "u",
          position: "99999999:0000000000000:000001",
          available: 0,
          priceCents: 1999,
          currency: "EUR",
        },
      ]);
      const scriptCalls = async () =>
        Number(/cmdstat_evalsha:calls=(\d+)/.exec(await slow.redis.info("commandstats"))?.[1] ?? 0);
      // Armed once a stranger's SOLD_OUT no longer asks Redis.
      await eventually(async () => {
        const before = await scriptCalls();
        expect((await slow.purchase(8, sale)).body.code).toBe("SOLD_OUT");
        expect(await scriptCalls()).toBe(before);
      });

      await slow.pool.query("UPDATE sale_stock SET available = 1 WHERE activity_id = ? AND sku_id = ?", [
        sale.activityId,
        sale.skuId,
      ]);
      await applySkuChanges(slow.redis, sale.activityId, sale.skuId, [
        {
          kind: "stock",
          op: "u",
          position: "99999999:0000000000000:000002",
          available: 1,
          priceCents: 1999,
          currency: "EUR",
        },
      ]);
      const buyer = await eventually(
        async () => {
          const answer = await slow.purchase(9, sale);
          expect(answer.status).toBe(201);
          return answer;
        },
        { timeoutMs: 5000 },
      );
      expect(buyer.body.userId).toBe(9);
    } finally {
      await slow.close();
    }
  });

  it("a DBA's order for a sold-out SKU while others keep asking: its key gets the order, not SOLD_OUT", async () => {
    const { sale } = await buyTheLastUnit();
    await applySkuChanges(api.redis, sale.activityId, sale.skuId, [
      { kind: "order", op: "c", position: laterPosition, userId: "7", live: true },
      {
        kind: "stock",
        op: "u",
        position: "99999999:0000000000000:000001",
        available: 0,
        priceCents: 1999,
        currency: "EUR",
      },
    ]);
    // Strangers every 20 ms keep this instance's sold-out snapshot renewed.
    let asking = true;
    const strangers = (async () => {
      for (let user = 1000; asking; user++) {
        await api.purchase(user, sale);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    try {
      await eventually(async () => expect((await api.purchase(8, sale)).body.code).toBe("SOLD_OUT"));
      // A DBA's own session: the order goes in without touching the stock row.
      const dba = await mysql.createConnection(api.config.DATABASE_URL);
      const key = `dba-${sale.activityId}`;
      try {
        await dba.query(
          `INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
           VALUES (?, ?, ?, 777, 'PENDING', 1999, 'EUR', NOW(3), NOW(3) + INTERVAL 1 HOUR)`,
          [key, sale.activityId, sale.skuId],
        );
      } finally {
        await dba.end();
      }
      // As CDC would apply it.
      await applySkuChanges(api.redis, sale.activityId, sale.skuId, [
        { kind: "order", op: "c", position: "99999999:0000000000000:000002", userId: "777", live: true },
      ]);
      const replay = await eventually(
        async () => {
          const answer = await api.purchase(777, sale, key);
          expect(answer.status).toBe(200);
          return answer;
        },
        { timeoutMs: 5000 },
      );
      expect(replay.body.userId).toBe(777);
    } finally {
      asking = false;
      await strangers;
    }
  });
});
