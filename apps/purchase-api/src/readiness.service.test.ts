import { addSkus, createActivity, fastDatabaseUrl, freshIds, untilLockWait } from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import mysql from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

describe("readiness while every decision waits for a lock", () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ env: { DB_POOL_SIZE: "2", DB_MAX_IN_FLIGHT: "2" } });
  });
  afterAll(async () => api.close());

  it("stays ready: the probe never queues behind decisions, and answers while the database does", async () => {
    const { activityId } = freshIds();
    await createActivity(api.pool, { activityId });
    await addSkus(api.pool, activityId, [
      { skuId: 1, units: 5 },
      { skuId: 2, units: 5 },
    ]);
    for (const skuId of [1, 2]) await api.load(activityId, skuId);
    // A DBA holds both stock rows: each SKU's decision takes one of the pool's two connections and waits.
    const dba = await mysql.createConnection(fastDatabaseUrl());
    await dba.query("START TRANSACTION");
    await dba.query("SELECT * FROM sale_stock WHERE activity_id = ? FOR UPDATE", [activityId]);
    let purchases: Promise<{ status: number }[]> | undefined;
    try {
      purchases = Promise.all([1, 2].map((skuId) => api.purchase(10 + skuId, { activityId, skuId })));
      await untilLockWait(`activity_id = ${activityId} AND sku_id IN`, 2);
      const ready = await fetch(`${api.url}/readyz`);
      expect(await ready.json()).toMatchObject({ status: "ready", database: true, redis: true });
      expect(ready.status).toBe(200);
    } finally {
      await dba.query("ROLLBACK");
      await dba.end();
    }
    expect((await purchases).map((response) => response.status)).toEqual([201, 201]);
  }, 30_000);

  it("stays ready under a flood of its own probe: anyone may call /readyz, and each call must not be a query", async () => {
    const statuses = await Promise.all(
      Array.from({ length: 300 }, async () => (await fetch(`${api.url}/readyz`)).status),
    );
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
  });
});
