import { createPool } from "@flashgate/db";
import { createSale, fastDatabaseUrl, freshIds } from "@flashgate/testkit";
import type { Pool } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSkuWindows } from "./sku-window.ts";

describe("SKU windows for requests that miss Redis, on the database alone", () => {
  let pool: Pool;
  let queries = 0;
  /** The pool, counting the lookups that reach it. */
  let counted: Pool;
  beforeAll(() => {
    pool = createPool(fastDatabaseUrl(), { connectionLimit: 2 });
    counted = {
      query: (...args: Parameters<Pool["query"]>) => {
        queries++;
        return pool.query(...args);
      },
    } as Pool;
  });
  afterAll(async () => pool.end());

  it("answers when an existing SKU's sale ends, and nothing for an unknown one", async () => {
    const ids = freshIds();
    const endsAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 3_600_000);
    await createSale(pool, { ...ids, units: 1, endsAt });
    const windows = createSkuWindows(pool);
    expect(await windows(ids.activityId, ids.skuId)).toEqual({ endsMs: endsAt.getTime() });
    expect(await windows(ids.activityId, ids.skuId + 1)).toBeUndefined();
    expect(await windows(ids.activityId + 1, ids.skuId)).toBeUndefined();
  });

  it("asks once per SKU at a time and once per ttl, known or unknown; a full cache starts over", async () => {
    const ids = freshIds();
    await createSale(pool, { ...ids, units: 1 });
    const windows = createSkuWindows(counted, 60_000, 2);
    queries = 0;
    await Promise.all([windows(ids.activityId, ids.skuId), windows(ids.activityId, ids.skuId)]);
    expect(queries).toBe(1);
    await windows(ids.activityId, ids.skuId);
    await windows(ids.activityId, 999);
    await windows(ids.activityId, 999);
    expect(queries).toBe(2);
    await windows(ids.activityId, 998); // a third key: the cache of two starts over
    await windows(ids.activityId, ids.skuId);
    expect(queries).toBe(4);

    const expiring = createSkuWindows(counted, 0);
    queries = 0;
    await expiring(ids.activityId, ids.skuId);
    await expiring(ids.activityId, ids.skuId);
    expect(queries).toBe(2);
  });
});
