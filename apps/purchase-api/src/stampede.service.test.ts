import { readCachedSku } from "@flashgate/cache";
import { createSale, freshIds, inWaves, skuInDatabase, sold } from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

describe("purchase stampede", () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => api.close());

  it("2,000 users, 50 units: exactly 50 orders, the rest SOLD_OUT, about one transaction per unit", async () => {
    const { activityId, skuId } = freshIds();
    await createSale(api.pool, { activityId, skuId, units: 50 });
    expect(await api.load(activityId, skuId)).toBe("loaded");
    const before = await api.transactions();

    const results = await inWaves(2000, 200, (i) => api.purchase(1_000_000 + i, { activityId, skuId }));
    const byStatus = new Map<string, number>();
    for (const result of results) {
      const label = result.status === 201 ? "201" : `${result.status} ${result.body.code}`;
      byStatus.set(label, (byStatus.get(label) ?? 0) + 1);
    }
    expect(Object.fromEntries(byStatus)).toEqual({ "201": 50, "409 SOLD_OUT": 1950 });

    const ledger = await skuInDatabase(api.pool, activityId, skuId);
    expect(ledger.available + sold(ledger)).toBe(50);
    expect(sold(ledger)).toBe(50);
    const perUnit = ((await api.transactions()) - before) / 50;
    expect(perUnit).toBeLessThanOrEqual(1.1);
  });

  it("5,000 public reads of unknown SKUs, 1,000 at once, during a sale: the reads are bounded, the buyers unaffected", async () => {
    const sale = freshIds();
    await createSale(api.pool, { ...sale, units: 50 });
    await api.load(sale.activityId, sale.skuId);
    // Ids no one created: each misses Redis and asks MySQL whether the SKU exists.
    const unknown = freshIds();
    // 1,000 at a time: 5,000 connections opened at once overflow the kernel's accept queue (4,096) on a
    // busy machine, and the client sees resets the API never sent.
    const reads = inWaves(5000, 1000, (i) =>
      fetch(`${api.url}/v1/activities/${unknown.activityId}/skus/${unknown.skuId + i}`).then(
        async (response) => ({ status: response.status, retryAfter: response.headers.get("retry-after") }),
      ),
    );
    const buys = inWaves(200, 50, (i) => api.purchase(5_000_000 + i, sale));
    const [answers, results] = await Promise.all([reads, buys]);

    const statuses = new Map<number, number>();
    for (const { status } of answers) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    expect([...statuses.keys()].every((status) => status === 404 || status === 503)).toBe(true);
    // The read pool's queue is bounded: beyond it a read is refused at once, with Retry-After.
    expect(statuses.get(503) ?? 0).toBeGreaterThan(0);
    expect(answers.filter((a) => a.status === 503).every((a) => Number(a.retryAfter) >= 1)).toBe(true);
    expect(results.filter((r) => r.status === 201)).toHaveLength(50);
    expect(results.filter((r) => r.status === 409 && r.body.code === "SOLD_OUT")).toHaveLength(150);
    expect(sold(await skuInDatabase(api.pool, sale.activityId, sale.skuId))).toBe(50);
  });

  it("a rebuild that sees orders CDC has not applied yet frees their reservations: the last units still sell", async () => {
    const sale = freshIds();
    await createSale(api.pool, { ...sale, units: 3 });
    await api.load(sale.activityId, sale.skuId);
    // No maintainer runs here: the orders' changes never reach Redis, as when CDC is behind a rebuild.
    expect((await api.purchase(1, sale)).status).toBe(201);
    expect(await api.load(sale.activityId, sale.skuId)).toBe("loaded");
    expect((await readCachedSku(api.redis, sale.activityId, sale.skuId))?.liveReservations).toBe(0);
    const outcomes = [await api.purchase(2, sale), await api.purchase(3, sale)].map((r) => r.status);
    expect(outcomes).toEqual([201, 201]);
    expect(sold(await skuInDatabase(api.pool, sale.activityId, sale.skuId))).toBe(3);
  });

  it("one user with 20 concurrent keys gets exactly one order", async () => {
    const { activityId, skuId } = freshIds();
    await createSale(api.pool, { activityId, skuId, units: 10 });
    await api.load(activityId, skuId);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => api.purchase(42, { activityId, skuId })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409 && r.body.code === "ALREADY_PURCHASED")).toHaveLength(19);
    const ledger = await skuInDatabase(api.pool, activityId, skuId);
    expect(sold(ledger)).toBe(1);
    expect(ledger.available).toBe(9);
  });
});
