import { setTimeout as sleep } from "node:timers/promises";
import { type FlashgateRedis, withScripts, writeSkuLoad } from "@flashgate/cache";
import { closeAllExpiredOrders, createPool, type PurchaseInput, upsertActivity } from "@flashgate/db";
import {
  addSkus,
  createActivity,
  fastDatabaseUrl,
  fastRedisUrl,
  freshIds,
  openSkuLoad,
  skuInDatabase,
} from "@flashgate/testkit";
import { Redis } from "ioredis";
import mysql, { type Connection, type Pool, type RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOverloadGuard } from "./overload-guard.ts";
import { createPurchaseService, type PurchaseService } from "./purchase.ts";
import type { PurchaseResult } from "./refusals.ts";

const hour = 3_600_000;
const unitsPerSku = 40;

/** What runs beside a sale, over and over until it ends: each a real transaction of its own. */
type Interference = (sale: {
  activityId: number;
  skuIds: number[];
  dba: Connection;
  pool: Pool;
}) => Promise<void>;

const interferences: Record<string, Interference> = {
  "nothing else (many SKUs of one activity at once)": async () => {
    await sleep(50);
  },
  // The closure the README teaches: the order row, then the stock row.
  "a DBA closing orders by SQL": async ({ activityId, dba }) => {
    const [pending] = await dba.query<RowDataPacket[]>(
      "SELECT order_id, sku_id FROM sale_order WHERE activity_id = ? AND state = 'PENDING' ORDER BY RAND() LIMIT 1",
      [activityId],
    );
    if (!pending[0]) return;
    await dba.query(
      `START TRANSACTION;
       UPDATE sale_order SET state = 'CLOSED' WHERE order_id = ? AND state = 'PENDING';
       SET @closed = ROW_COUNT();
       UPDATE sale_stock SET available = available + @closed WHERE activity_id = ? AND sku_id = ?;
       COMMIT`,
      [pending[0].order_id, activityId, pending[0].sku_id],
    );
  },
  "the bulk expiry": async ({ activityId, dba, pool }) => {
    await dba.query(
      "UPDATE sale_order SET expires_at = NOW(3) - INTERVAL 1 SECOND WHERE activity_id = ? AND state = 'PENDING' ORDER BY RAND() LIMIT 5",
      [activityId],
    );
    await closeAllExpiredOrders(pool);
  },
  "a window edit by the back-office": async ({ activityId, pool }) => {
    await upsertActivity(pool, {
      id: activityId,
      name: "edited mid-sale",
      startsAt: new Date(Date.now() - hour),
      endsAt: new Date(Date.now() + hour),
      paymentTimeoutS: 900,
      rebuyAfterClose: false,
    });
  },
  "a DBA's transaction left open on the activity row": async ({ activityId, dba }) => {
    await dba.query("START TRANSACTION");
    await dba.query("SELECT * FROM activity WHERE id = ? FOR UPDATE", [activityId]);
    await sleep(300);
    await dba.query("COMMIT");
  },
};

describe("decisions beside each other and beside everyone else who writes the sale's rows: no 5xx, every unit sold once, one 201 per order", () => {
  let redis: FlashgateRedis;
  /** Two API instances, each with its pool and its batcher. */
  let pools: Pool[];
  let readPool: Pool;
  let dba: Connection;
  beforeAll(async () => {
    redis = withScripts(new Redis(fastRedisUrl()));
    pools = [0, 1].map(() => createPool(fastDatabaseUrl(), { connectionLimit: 6, multipleStatements: true }));
    readPool = createPool(fastDatabaseUrl(), { connectionLimit: 2 });
    // The DBA's own session: the server's defaults (REPEATABLE READ), none of flashgate's session settings.
    dba = await mysql.createConnection({ uri: fastDatabaseUrl(), multipleStatements: true });
  });
  afterAll(async () => {
    redis.disconnect();
    await dba.end();
    await Promise.all([...pools, readPool].map((pool) => pool.end()));
  });

  const instance = (pool: Pool): PurchaseService =>
    createPurchaseService({
      redis,
      pool,
      readPool,
      guard: createOverloadGuard({ maxInFlight: 4, maxQueue: 512, maxWaitMs: 20_000 }),
      batch: { maxSize: 16, maxConcurrent: 4, maxWaitMs: 20_000, gatherMs: 2 },
      limits: { reservationTtlMs: 60_000, rateLimit: 100, rateWindowMs: 60_000 },
      soldOutCacheMs: 250,
    });

  for (const [name, interfere] of Object.entries(interferences))
    it(`beside ${name}`, async () => {
      const { activityId } = freshIds();
      const skuIds = [1, 2, 3];
      const startsAt = new Date(Date.now() - hour);
      const endsAt = new Date(Date.now() + hour);
      await createActivity(pools[0], { activityId, startsAt, endsAt });
      await addSkus(
        pools[0],
        activityId,
        skuIds.map((skuId) => ({ skuId, units: unitsPerSku })),
      );
      // Redis admits more buyers than there are units (as a cache that lags a closure would), so that
      // the database decides under pressure.
      for (const skuId of skuIds)
        await writeSkuLoad(
          redis,
          activityId,
          skuId,
          openSkuLoad({ available: 3 * unitsPerSku, startsAt, endsAt }),
        );
      const instances = pools.map(instance);
      const requests: { input: PurchaseInput; via: PurchaseService }[] = [];
      for (let user = 1; user <= 300; user += 1) {
        const input = {
          activityId,
          skuId: skuIds[user % skuIds.length],
          userId: String(user),
          requestId: `conflicts-${activityId}-${user}`,
        };
        requests.push({ input, via: instances[user % 2] });
        // A double click to the other instance, and a second key.
        if (user % 5 === 0) requests.push({ input, via: instances[(user + 1) % 2] });
        if (user % 7 === 0)
          requests.push({
            input: { ...input, requestId: `${input.requestId}-again` },
            via: instances[user % 2],
          });
      }
      let selling = true;
      const interfering = (async () => {
        while (selling) await interfere({ activityId, skuIds, dba, pool: pools[0] });
      })();
      const answers: { input: PurchaseInput; result: PurchaseResult }[] = [];
      const queue = [...requests];
      await Promise.all(
        Array.from({ length: 100 }, async () => {
          for (let next = queue.shift(); next; next = queue.shift())
            answers.push({ input: next.input, result: await next.via.purchase(next.input) });
        }),
      ).finally(() => {
        selling = false;
      });
      await interfering;

      const unavailable = answers.filter(({ result }) => result.kind === "UNAVAILABLE");
      expect(unavailable.map(({ result }) => result)).toEqual([]);
      for (const skuId of skuIds) {
        const ledger = await skuInDatabase(pools[0], activityId, skuId);
        expect(ledger.available + ledger.pending + ledger.paid).toBe(unitsPerSku);
      }
      // Every 201 is an order in MySQL under its buyer's key, and each order was told 201 exactly once.
      const [orders] = await pools[0].query<RowDataPacket[]>(
        "SELECT order_id, user_id, request_id FROM sale_order WHERE activity_id = ?",
        [activityId],
      );
      const created = answers.flatMap(({ input, result }) =>
        result.kind === "CREATED" ? [`${input.userId}/${input.requestId}/${result.order.orderId}`] : [],
      );
      expect(created.toSorted()).toEqual(
        orders.map((order) => `${order.user_id}/${order.request_id}/${order.order_id}`).toSorted(),
      );
      expect(created.length).toBeGreaterThan(0);
    }, 120_000);
});
