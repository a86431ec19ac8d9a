import { lookupDirectory, withScripts, writeDirectory } from "@flashgate/cache";
import { binlogPosition } from "@flashgate/cdc";
import { binlogCoordinates, createPool } from "@flashgate/db";
import { createSale, fastDatabaseUrl, fastRedisUrl, freshIds } from "@flashgate/testkit";
import { Redis } from "ioredis";
import type { Pool } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDirectoryFromDatabase } from "./load-directory.ts";

// A logical database of its own: a directory loaded whole changes what other files' services answer.
const directoryDb = 3;

describe("the sale directory loaded whole from MySQL", () => {
  const redis = withScripts(new Redis(fastRedisUrl(), { db: directoryDb }));
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(fastDatabaseUrl(), { connectionLimit: 2 });
  });
  afterAll(async () => {
    redis.disconnect();
    await pool.end();
  });

  it("adds what exists, removes what MySQL no longer holds, keeps what a later change wrote", async () => {
    const sale = freshIds();
    await createSale(pool, { ...sale, units: 3 });
    // Entries CDC wrote once and whose deletions it never delivered: an activity and a SKU of the sale.
    const gone = freshIds();
    const missed = { ...sale, skuId: sale.skuId + 1 };
    await writeDirectory(redis, [
      {
        kind: "activity",
        activityId: gone.activityId,
        position: binlogPosition("binlog.000001", 4),
        endsMs: Date.now() + 60_000,
      },
      { kind: "sku", ...gone, position: binlogPosition("binlog.000001", 4), exists: true },
      { kind: "sku", ...missed, position: binlogPosition("binlog.000001", 4), exists: true },
    ]);
    // And a deletion CDC applied after the load's read (a later position): the load does not undo it.
    const now = await binlogCoordinates(pool);
    const deletedLater = { ...sale, skuId: sale.skuId + 2 };
    await pool.query(
      "INSERT INTO sale_stock (activity_id, sku_id, available, price_cents, currency) VALUES (?, ?, 1, 100, 'EUR')",
      [deletedLater.activityId, deletedLater.skuId],
    );
    await writeDirectory(redis, [
      {
        kind: "sku",
        ...deletedLater,
        position: binlogPosition(now.file, now.pos + 1_000_000),
        exists: false,
      },
    ]);

    const loaded = await loadDirectoryFromDatabase(pool, redis);
    expect(loaded.removed).toBeGreaterThanOrEqual(2);
    expect(await lookupDirectory(redis, sale.activityId, sale.skuId)).toBe("LIVE");
    expect(await lookupDirectory(redis, gone.activityId, gone.skuId)).toBe("NOT_FOUND");
    expect(await lookupDirectory(redis, missed.activityId, missed.skuId)).toBe("NOT_FOUND");
    expect(await lookupDirectory(redis, deletedLater.activityId, deletedLater.skuId)).toBe("NOT_FOUND");
  });
});
