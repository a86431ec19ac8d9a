import { applySkuChanges, readCachedSku, reserveUnit, skuKeys } from "@flashgate/cache";
import { toSaleChange } from "@flashgate/cdc";
import { createPool, placeOrders } from "@flashgate/db";
import {
  type AppProcess,
  clients,
  createSale,
  expectConverged,
  freshIds,
  idempotencyKey,
  saleChangesOf,
  skuInDatabase,
  sold,
  stackEnv,
  startMaintainer,
} from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const limits = { reservationTtlMs: 60_000, rateLimit: 100, rateWindowMs: 1000 };

/** What the fast path would still admit: stock as applied minus reservations in flight. */
async function effectiveAvailable(
  c: ReturnType<typeof clients>,
  sale: { activityId: number; skuId: number },
) {
  const sku = await readCachedSku(c.redis, sale.activityId, sale.skuId);
  if (!sku) throw new Error("SKU not in the cache");
  return sku.available - sku.liveReservations;
}

describe("no unit left unsold", () => {
  const c = clients();
  afterAll(async () => c.close());

  it("a purchase transaction's changes, applied split at any point, never count a sold unit twice", async () => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 5 });
    const api = await startApi();
    try {
      await api.load(sale.activityId, sale.skuId);
    } finally {
      await api.close();
    }
    const buyers = ["11", "12", "13"].map((userId) => ({ ...sale, userId, requestId: idempotencyKey() }));
    for (const buyer of buyers) expect((await reserveUnit(c.redis, buyer, limits)).outcome).toBe("RESERVED");
    const before = await effectiveAvailable(c, sale);
    expect(before).toBe(2);
    const keys = Object.values(skuKeys(sale.activityId, sale.skuId)).slice(0, 3);
    const saved = await Promise.all(keys.map((key) => c.redis.dumpBuffer(key)));

    const purchasePool = createPool(stackEnv().DATABASE_URL, {
      connectionLimit: 1,
      multipleStatements: true,
    });
    expect(await placeOrders(purchasePool, buyers).finally(() => purchasePool.end())).toHaveLength(3);
    // The SKU's insert, then the purchase transaction's changes as the binlog carries them.
    const transaction = (await saleChangesOf(sale, 5)).slice(1).map(toSaleChange);
    expect(transaction).toHaveLength(4);

    for (let split = 0; split <= transaction.length; split++) {
      await Promise.all(keys.map((key, i) => c.redis.restore(key, 0, saved[i] as Buffer, "REPLACE")));
      await applySkuChanges(c.redis, sale.activityId, sale.skuId, transaction.slice(0, split));
      expect(
        await effectiveAvailable(c, sale),
        `after ${split} of the transaction's changes`,
      ).toBeGreaterThanOrEqual(before);
      await applySkuChanges(c.redis, sale.activityId, sale.skuId, transaction.slice(split));
      expect(await effectiveAvailable(c, sale)).toBe(before);
    }
    await expectConverged(c, sale.activityId, sale.skuId);
  });

  describe("with CDC applying as buyers arrive", () => {
    let maintainer: AppProcess;
    let api: ApiHarness;
    beforeAll(async () => {
      maintainer = await startMaintainer();
      api = await startApi();
    });
    afterAll(async () => {
      await api.close();
      await maintainer.kill();
    });

    it("8 rounds of 53 units to 78 concurrent new buyers: exactly 53 sold every round", async () => {
      for (let round = 0; round < 8; round++) {
        const sale = freshIds();
        await createSale(c.pool, { ...sale, units: 53 });
        await expectConverged(c, sale.activityId, sale.skuId);
        const answers = await Promise.all(
          Array.from({ length: 78 }, (_, i) => api.purchase(2_000_000 + round * 100 + i, sale)),
        );
        const created = answers.filter((answer) => answer.status === 201).length;
        const ledger = await skuInDatabase(c.pool, sale.activityId, sale.skuId);
        expect({ round, created, sold: sold(ledger), left: ledger.available }).toEqual({
          round,
          created: 53,
          sold: 53,
          left: 0,
        });
        expect(answers.filter((answer) => answer.status !== 201).map((answer) => answer.body.code)).toEqual(
          Array(25).fill("SOLD_OUT"),
        );
      }
    });
  });
});
