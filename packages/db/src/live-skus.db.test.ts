import { createSale, eventually, fastDatabaseUrl, freshIds } from "@flashgate/testkit";
import type { Pool, RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skusChangedSince } from "./changed-skus.ts";
import { liveSkus } from "./live-skus.ts";
import { createPool } from "./pool.ts";

describe("the SKUs the cache holds, on the database alone", () => {
  /** The sales come from the API's account; the cache-maintainer's reads them, as it does. */
  let pool: Pool;
  let maintainer: Pool;
  beforeAll(() => {
    pool = createPool(fastDatabaseUrl(), { connectionLimit: 2 });
    maintainer = createPool(fastDatabaseUrl("maintainer"), { connectionLimit: 2 });
  });
  afterAll(async () => {
    await pool.end();
    await maintainer.end();
  });

  const hourAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000);

  it("lists a live sale and one ended within a day, newest first, and leaves out one ended before", async () => {
    const live = freshIds();
    const recent = freshIds();
    const old = freshIds();
    await createSale(pool, { ...live, units: 1, startsAt: hourAgo(1), endsAt: hourAgo(-1) });
    await createSale(pool, { ...recent, units: 1, startsAt: hourAgo(5), endsAt: hourAgo(2) });
    await createSale(pool, { ...old, units: 1, startsAt: hourAgo(50), endsAt: hourAgo(25) });
    const listed = await liveSkus(maintainer);
    const ours = listed.filter((sku) => [live, recent, old].some((s) => s.activityId === sku.activityId));
    expect(ours).toEqual([live, recent]);
    expect(await liveSkus(maintainer, { activityId: recent.activityId })).toEqual([recent]);
    expect(await liveSkus(maintainer, { activityId: old.activityId })).toEqual([]);
    expect(await liveSkus(maintainer, { limit: 1 })).toHaveLength(1);
  });

  it("names a live SKU whose stock row changed since a moment of MySQL's clock, and no other", async () => {
    const quiet = freshIds();
    const restocked = freshIds();
    await createSale(pool, { ...quiet, units: 1 });
    await createSale(pool, { ...restocked, units: 1 });
    const [[created]] = await pool.query<RowDataPacket[]>(
      "SELECT MAX(updated_at) AS at FROM sale_stock WHERE activity_id IN (?, ?)",
      [quiet.activityId, restocked.activityId],
    );
    // A moment after both rows were written, on MySQL's own clock.
    let now = new Date(0);
    await eventually(async () => {
      now = (await skusChangedSince(maintainer, new Date())).nextSince;
      expect(now.getTime()).toBeGreaterThan((created.at as Date).getTime());
    });
    await pool.query("UPDATE sale_stock SET available = 5 WHERE activity_id = ? AND sku_id = ?", [
      restocked.activityId,
      restocked.skuId,
    ]);
    const { skus } = await skusChangedSince(maintainer, now);
    const ours = skus.filter((sku) => [quiet, restocked].some((s) => s.activityId === sku.activityId));
    expect(ours).toEqual([restocked]);
  });
});
