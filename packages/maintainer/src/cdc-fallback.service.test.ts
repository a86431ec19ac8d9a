import { cdcKeys, withScripts } from "@flashgate/cache";
import { createPool } from "@flashgate/db";
import { createLogger } from "@flashgate/logger";
import { createSale, eventually, fastDatabaseUrl, fastRedisUrl, freshIds } from "@flashgate/testkit";
import { Redis } from "ioredis";
import type { Pool, RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createCdcFallback } from "./cdc-fallback.ts";
import { createMaintainerMetrics } from "./metrics.ts";
import type { Rebuilder } from "./rebuild.ts";

describe("the CDC stall fallback, on the fast tier's Redis and database", () => {
  // A database of its own: the CDC keys are global, and other files apply heartbeats meanwhile.
  const redis = withScripts(new Redis(fastRedisUrl(), { db: 7 }));
  /** The maintainer's account, as the fallback runs; the sales and a DBA's writes come from another's. */
  let pool: Pool;
  let writer: Pool;
  const passes: { activityId: number; skuId: number }[][] = [];
  const rebuilder = {
    rebuildSkus: async (skus: { activityId: number; skuId: number }[]) => {
      passes.push(skus);
    },
  } as unknown as Rebuilder;
  const metrics = createMaintainerMetrics();
  const fallback = (stallMs = 3000) =>
    createCdcFallback({
      pool,
      redis,
      rebuilder,
      metrics,
      logger: createLogger("cdc-fallback-test", "silent"),
      stallMs,
    });
  const stalled = async () => (await metrics.cdcStalled.get()).values[0]?.value;
  /** What CDC last delivered, in ms before now: a heartbeat's commit time and, when given, a batch applied. */
  const delivered = async (ago: { heartbeatMs: number; changesMs?: number }) => {
    await redis.set(cdcKeys.heartbeatApplied, String(Date.now() - ago.heartbeatMs));
    if (ago.changesMs !== undefined)
      await redis.set(cdcKeys.changesApplied, String(Date.now() - ago.changesMs));
  };
  beforeAll(() => {
    pool = createPool(fastDatabaseUrl("maintainer"), { connectionLimit: 2 });
    writer = createPool(fastDatabaseUrl(), { connectionLimit: 2 });
  });
  afterAll(async () => {
    await pool.end();
    await writer.end();
    redis.disconnect();
  });
  beforeEach(async () => {
    passes.length = 0;
    await redis.flushdb();
  });

  /**
   * A fallback running longer than its stall time, so that only what CDC delivered decides: a twin of
   * the same age, with nothing delivered, is seen stalled first.
   */
  async function pastItsStallTime() {
    const underTest = fallback(200);
    const twin = fallback(200);
    await delivered({ heartbeatMs: 10_000, changesMs: 10_000 });
    await eventually(async () => {
      await twin.check();
      expect(await stalled()).toBe(1);
    });
    passes.length = 0;
    return underTest;
  }

  it("stands aside while the stream still delivers: a backlog's heartbeats are behind, not missing", async () => {
    const running = await pastItsStallTime();
    await delivered({ heartbeatMs: 10_000, changesMs: 0 });
    await running.check();
    expect(await stalled()).toBe(0);
    expect(passes).toEqual([]);
  });

  it("gives the stream the stall time from its own start: a maintainer restarted onto a backlog is not stalled yet", async () => {
    await delivered({ heartbeatMs: 10_000, changesMs: 10_000 });
    await fallback().check();
    expect(await stalled()).toBe(0);
    expect(passes).toEqual([]);
  });

  it("loads the changed SKUs from MySQL once neither a heartbeat nor any change has been applied for the stall time", async () => {
    await delivered({ heartbeatMs: 10_000, changesMs: 10_000 });
    const started = fallback(200);
    await eventually(async () => {
      await started.check();
      expect(await stalled()).toBe(1);
    });
    expect(passes).toHaveLength(1);
  });

  it("a maintainer started during an outage loads what changed since the last heartbeat, not since it started", async () => {
    const ids = freshIds();
    await createSale(writer, { ...ids, units: 5 });
    // Changed after the last heartbeat CDC delivered, before this maintainer started.
    await writer.query(
      "UPDATE sale_stock SET updated_at = NOW(3) - INTERVAL 5 SECOND WHERE activity_id = ?",
      [ids.activityId],
    );
    await writer.query("UPDATE activity SET updated_at = NOW(3) - INTERVAL 5 SECOND WHERE id = ?", [
      ids.activityId,
    ]);
    await delivered({ heartbeatMs: 10_000 });
    const started = fallback(200);
    await eventually(async () => {
      await started.check();
      expect(await stalled()).toBe(1);
    });
    expect(passes[0]).toContainEqual(ids);
  });

  it("a fresh heartbeat: CDC flows", async () => {
    const running = await pastItsStallTime();
    await delivered({ heartbeatMs: 0, changesMs: 10_000 });
    await running.check();
    expect(await stalled()).toBe(0);
    expect(passes).toEqual([]);
  });

  it("loads a restock committed late: a DBA's transaction open across passes, its row stamped when it began", async () => {
    const ids = freshIds();
    await createSale(writer, { ...ids, units: 5 });
    // Created before the last heartbeat: no pass loads it for that.
    await writer.query(
      "UPDATE sale_stock SET updated_at = NOW(3) - INTERVAL 1 MINUTE WHERE activity_id = ?",
      [ids.activityId],
    );
    await writer.query("UPDATE activity SET updated_at = NOW(3) - INTERVAL 1 MINUTE WHERE id = ?", [
      ids.activityId,
    ]);
    const running = await pastItsStallTime();
    const where = "activity_id = ? AND sku_id = ?";
    const dba = await writer.getConnection();
    try {
      await dba.query("START TRANSACTION");
      await dba.query(`UPDATE sale_stock SET available = available + 10 WHERE ${where}`, [
        ids.activityId,
        ids.skuId,
      ]);
      const [[row]] = await dba.query<RowDataPacket[]>(`SELECT updated_at FROM sale_stock WHERE ${where}`, [
        ids.activityId,
        ids.skuId,
      ]);
      // Passes run while it stays open, until MySQL's clock is well past the stamp of its uncommitted row.
      await eventually(async () => {
        await running.check();
        const [[clock]] = await pool.query<RowDataPacket[]>(
          "SELECT TIMESTAMPDIFF(MICROSECOND, ?, NOW(3)) / 1000 AS pastMs",
          [row.updated_at],
        );
        expect(Number(clock.pastMs)).toBeGreaterThan(5000);
      });
      expect(passes.flat()).not.toContainEqual(ids);
      await dba.query("COMMIT");
    } finally {
      dba.release();
    }
    await running.check();
    expect(passes.flat()).toContainEqual(ids);
  });

  it("catches up once more as CDC flows again: a change between its last pass and the stream's new start is loaded", async () => {
    const ids = freshIds();
    await createSale(writer, { ...ids, units: 5 });
    await writer.query(
      "UPDATE sale_stock SET updated_at = NOW(3) - INTERVAL 1 MINUTE WHERE activity_id = ?",
      [ids.activityId],
    );
    await writer.query("UPDATE activity SET updated_at = NOW(3) - INTERVAL 1 MINUTE WHERE id = ?", [
      ids.activityId,
    ]);
    const running = await pastItsStallTime();
    await running.check();
    expect(passes.flat()).not.toContainEqual(ids);
    // Committed after that pass; the stream (a connector reset to "now") starts after it.
    await writer.query("UPDATE sale_stock SET available = 9 WHERE activity_id = ? AND sku_id = ?", [
      ids.activityId,
      ids.skuId,
    ]);
    await delivered({ heartbeatMs: 0, changesMs: 0 });
    await running.check();
    expect(await stalled()).toBe(0);
    expect(passes.flat()).toContainEqual(ids);
  });
});
