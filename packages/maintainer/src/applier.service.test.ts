import { type FlashgateRedis, readCachedSku, withScripts } from "@flashgate/cache";
import { topics } from "@flashgate/cdc";
import { binlogCoordinates, createPool } from "@flashgate/db";
import { createLogger } from "@flashgate/logger";
import { createSale, fastDatabaseUrl, fastRedisUrl, freshIds } from "@flashgate/testkit";
import { Redis } from "ioredis";
import type { Pool } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApplier, type InboundRecord } from "./applier.ts";
import { createMaintainerMetrics } from "./metrics.ts";

/** A sale_stock change as Debezium writes it, at a binlog file and position. */
function stockChange(
  sku: { activityId: number; skuId: number },
  file: string,
  pos: number,
  available: number,
): InboundRecord {
  const key = { activity_id: sku.activityId, sku_id: sku.skuId };
  return {
    topic: topics.sale,
    partition: 0,
    offset: 0n,
    key: JSON.stringify(key),
    value: JSON.stringify({
      before: null,
      after: { ...key, available, price_cents: 1999, currency: "EUR", updated_at: Date.now() },
      source: { table: "sale_stock", file, pos, row: 0, ts_ms: 1 },
      op: "u",
    }),
  };
}

describe("the applier rebuilding a SKU Redis does not hold, from the database", () => {
  let redis: FlashgateRedis;
  let pool: Pool;
  beforeAll(() => {
    redis = withScripts(new Redis(fastRedisUrl()));
    pool = createPool(fastDatabaseUrl(), { connectionLimit: 2 });
  });
  afterAll(async () => {
    redis.disconnect();
    await pool.end();
  });

  const applier = () => {
    const metrics = createMaintainerMetrics();
    const isolated: string[] = [];
    const apply = createApplier({
      redis,
      pool,
      metrics,
      logger: createLogger("applier-test", "silent"),
      isolate: async (activityId, skuId) => {
        isolated.push(`${activityId}:${skuId}`);
      },
    });
    const rebuilds = async () =>
      (await metrics.rebuilds.get()).values.find((v) => v.labels.reason === "missing")?.value ?? 0;
    return { apply, rebuilds, isolated };
  };

  it("loads the SKU as MySQL holds it; a change older than that read is skipped, a newer one applied on top", async () => {
    const { file } = await binlogCoordinates(pool);
    const older = freshIds();
    await createSale(pool, { ...older, units: 5 });
    const newer = freshIds();
    await createSale(pool, { ...newer, units: 5 });
    const { apply, rebuilds, isolated } = applier();
    const { dead } = await apply.applyBatch([
      stockChange(older, file, 4, 50),
      stockChange(newer, file, 999_999_999, 3),
    ]);
    expect(dead).toEqual([]);
    expect((await readCachedSku(redis, older.activityId, older.skuId))?.available).toBe(5);
    expect((await readCachedSku(redis, newer.activityId, newer.skuId))?.available).toBe(3);
    expect(await rebuilds()).toBe(2);
    expect(isolated).toEqual([]);
  });

  it("times a change from its commit to its apply, and each stage on the way", async () => {
    const { file } = await binlogCoordinates(pool);
    const sale = freshIds();
    await createSale(pool, { ...sale, units: 5 });
    const metrics = createMaintainerMetrics();
    const apply = createApplier({
      redis,
      pool,
      metrics,
      logger: createLogger("applier-test", "silent"),
      isolate: async () => {},
    });
    const committedAtMs = Date.now() - 1000;
    const record = stockChange(sale, file, 999_999_999, 4);
    const value = JSON.parse(record.value ?? "");
    value.after.updated_at = committedAtMs;
    value.ts_ms = committedAtMs + 10;
    await apply.applyBatch([
      {
        ...record,
        value: JSON.stringify(value),
        timestampMs: committedAtMs + 30,
        consumedAtMs: committedAtMs + 60,
      },
    ]);
    const sums = Object.fromEntries(
      (await metrics.stageLag.get()).values
        .filter((sample) => sample.metricName === "flashgate_cdc_stage_seconds_sum")
        .map((sample) => [sample.labels.stage, sample.value]),
    );
    expect(sums["binlog-read"]).toBeCloseTo(0.01, 6);
    expect(sums["kafka-send"]).toBeCloseTo(0.02, 6);
    expect(sums.consumed).toBeCloseTo(0.03, 6);
    expect(sums.applied).toBeGreaterThanOrEqual(0.94);
    const [total] = (await metrics.lag.get()).values.filter(
      (sample) => sample.metricName === "flashgate_cdc_lag_seconds_sum" && sample.labels.source === "row",
    );
    expect(total.value).toBeCloseTo(
      sums["binlog-read"] + sums["kafka-send"] + sums.consumed + sums.applied,
      6,
    );
  });

  it("keeps nothing for a SKU MySQL does not have, or whose sale ended long ago", async () => {
    const { file } = await binlogCoordinates(pool);
    const unknown = freshIds();
    const ended = freshIds();
    await createSale(pool, {
      ...ended,
      units: 5,
      startsAt: new Date(Date.now() - 3 * 86_400_000),
      endsAt: new Date(Date.now() - 2 * 86_400_000),
    });
    const { apply, rebuilds, isolated } = applier();
    await apply.applyBatch([
      stockChange(unknown, file, 999_999_999, 3),
      stockChange(ended, file, 999_999_999, 3),
    ]);
    expect(await readCachedSku(redis, unknown.activityId, unknown.skuId)).toBeUndefined();
    expect(await readCachedSku(redis, ended.activityId, ended.skuId)).toBeUndefined();
    // One rebuild each: an unknown or long-ended SKU is not retried within the batch.
    expect(await rebuilds()).toBe(2);
    expect(isolated).toEqual([]);
  });
});
