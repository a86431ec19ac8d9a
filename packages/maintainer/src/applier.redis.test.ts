import {
  type FlashgateRedis,
  readCachedSku,
  rebuildQueueKey,
  skuKeys,
  skuRef,
  withScripts,
  writeSkuLoad,
} from "@flashgate/cache";
import { binlogPosition, topics } from "@flashgate/cdc";
import { createPool } from "@flashgate/db";
import { createLogger } from "@flashgate/logger";
import { fastRedisUrl, freshIds, openSkuLoad } from "@flashgate/testkit";
import { Redis } from "ioredis";
import type { Pool } from "mysql2/promise";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createApplier, type InboundRecord } from "./applier.ts";
import { createMaintainerMetrics, type MaintainerMetrics } from "./metrics.ts";

const hour = 3600_000;
const at = (pos: number, row = 0) => binlogPosition("binlog.000002", pos, row);

/** A Debezium record as the connector writes it (schemas off), on `topic`. */
function record(
  topic: string,
  key: unknown,
  change: { table: string; op: string; pos: number; row?: number; before?: object; after?: object } | null,
  offset = 0n,
): InboundRecord {
  const value =
    change &&
    JSON.stringify({
      before: change.before ?? null,
      after: change.after ?? null,
      source: { table: change.table, file: "binlog.000002", pos: change.pos, row: change.row ?? 0, ts_ms: 1 },
      op: change.op,
    });
  return { topic, partition: 0, offset, key: JSON.stringify(key), value: value ?? undefined };
}

const stockKey = (sku: { activityId: number; skuId: number }) => ({
  activity_id: sku.activityId,
  sku_id: sku.skuId,
});
const stock = (sku: { activityId: number; skuId: number }, pos: number, available: number) =>
  record(topics.sale, stockKey(sku), {
    table: "sale_stock",
    op: "u",
    pos,
    after: { ...stockKey(sku), available, price_cents: 1999, currency: "EUR", updated_at: Date.now() - 5 },
  });
const order = (sku: { activityId: number; skuId: number }, pos: number, userId: number) =>
  record(topics.sale, stockKey(sku), {
    table: "sale_order",
    op: "c",
    pos,
    row: 1,
    after: { ...stockKey(sku), user_id: userId, state: "PENDING", closed_seq: 0, updated_at: Date.now() - 5 },
  });

/** An activity row's change: `op` "d" carries the row as `before`, any other as `after`. */
const activity = (id: number, op: string, pos: number, row: object) =>
  record(
    topics.activity,
    { id },
    { table: "activity", op, pos, [op === "d" ? "before" : "after"]: { id, ...row } },
  );
const beat = (pos: number, row: object = { beat_at: Date.now() }) =>
  record(topics.heartbeat, { id: 1 }, { table: "cdc_heartbeat", op: "u", pos, after: { id: 1, ...row } });

describe("the applier, on Redis alone", () => {
  let redis: FlashgateRedis;
  let unreachable: Pool;
  let metrics: MaintainerMetrics;
  let isolated: string[];
  let applier: ReturnType<typeof createApplier>;

  beforeAll(() => {
    redis = withScripts(new Redis(fastRedisUrl()));
    // Nothing listens there: a rebuild from MySQL fails as when the database is down.
    unreachable = createPool("mysql://nobody:none@127.0.0.1:9/none", { connectTimeout: 500 });
  });
  afterAll(async () => {
    redis.disconnect();
    await unreachable.end();
  });
  beforeEach(() => {
    metrics = createMaintainerMetrics();
    isolated = [];
    applier = createApplier({
      redis,
      pool: unreachable,
      metrics,
      logger: createLogger("applier-test", "silent"),
      isolate: async (activityId, skuId) => {
        isolated.push(skuRef(activityId, skuId));
      },
    });
  });

  async function loaded(available = 10, activityId?: number) {
    const ids = freshIds();
    const sku = { activityId: activityId ?? ids.activityId, skuId: ids.skuId };
    const result = await writeSkuLoad(redis, sku.activityId, sku.skuId, openSkuLoad({ available }));
    expect(result).toBe("loaded");
    return sku;
  }
  const counted = async (kind: string, result: string) =>
    (await metrics.events.get()).values.find((v) => v.labels.kind === kind && v.labels.result === result)
      ?.value ?? 0;

  it("applies a SKU's changes in order, skips what it already holds, and reports the newest heartbeat", async () => {
    const sku = await loaded();
    const { dead, heartbeat } = await applier.applyBatch([
      stock(sku, 900, 50), // older than the load: skipped
      stock(sku, 2000, 9),
      order(sku, 2000, 5),
      beat(2500, { beat_at: Date.now() - 50 }),
      beat(2600, { beat_at: Date.now() - 50 }),
    ]);
    expect(dead).toEqual([]);
    expect(heartbeat).toBe(at(2600));
    expect(await readCachedSku(redis, sku.activityId, sku.skuId)).toMatchObject({ available: 9, buyers: 1 });
    expect(await counted("sale", "applied")).toBe(2);
    expect(await counted("sale", "skipped")).toBe(1);
    const { values } = await metrics.lag.get();
    const lag = values.filter((v) => v.metricName === "flashgate_cdc_lag_seconds_count");
    // Every sale change carried its commit time, the skipped one too: three lag samples.
    expect(lag.find((v) => v.labels.source === "row")?.value).toBe(3);
    expect(lag.find((v) => v.labels.source === "heartbeat")?.value).toBe(2);
    // In seconds, a few milliseconds each: commits 5 ms before, heartbeats 50 ms before.
    const sums = values.filter((v) => v.metricName === "flashgate_cdc_lag_seconds_sum");
    for (const source of ["row", "heartbeat"]) {
      const sum = sums.find((v) => v.labels.source === source)?.value ?? -1;
      expect(sum, source).toBeGreaterThanOrEqual(0);
      expect(sum, source).toBeLessThan(5);
    }
    expect(sums.find((v) => v.labels.source === "row")?.value).toBeGreaterThan(0.004);
    expect(sums.find((v) => v.labels.source === "heartbeat")?.value).toBeGreaterThan(0.09);
    const appliedAt = (await metrics.lastAppliedAt.get()).values[0].value;
    expect(Math.abs(appliedAt - Date.now() / 1000)).toBeLessThan(60);
  });

  it("reports no heartbeat when the batch holds none; a heartbeat without its time still counts, unmeasured", async () => {
    const sku = await loaded();
    expect((await applier.applyBatch([stock(sku, 2000, 9)])).heartbeat).toBeUndefined();
    const untimed = beat(2700, {});
    expect((await applier.applyBatch([untimed])).heartbeat).toBe(at(2700));
    const count = (await metrics.lag.get()).values.find(
      (v) => v.metricName === "flashgate_cdc_lag_seconds_count" && v.labels.source === "heartbeat",
    );
    expect(count?.value ?? 0).toBe(0);
  });

  it("skips a tombstone; an unreadable record is a dead letter and its SKU is queued for a rebuild", async () => {
    const sku = await loaded();
    const unreadable = { ...stock(sku, 2000, 9), value: "not json" };
    const noSku = { ...unreadable, key: "not a key" };
    const tombstone = { ...stock(sku, 2100, 8), value: undefined };
    // A key naming half a SKU, or a record of another topic, names no SKU to rebuild.
    const other = freshIds();
    const halfKey = { ...unreadable, key: JSON.stringify({ activity_id: other.activityId }) };
    const otherTopic = { ...unreadable, topic: topics.activity, key: JSON.stringify(stockKey(other)) };
    const { dead } = await applier.applyBatch([tombstone, unreadable, noSku, halfKey, otherTopic]);
    expect(dead.map((letter) => [letter.record, letter.reason])).toEqual([
      [unreadable, "value is not JSON"],
      [noSku, "value is not JSON"],
      [halfKey, "value is not JSON"],
      [otherTopic, "value is not JSON"],
    ]);
    expect(
      (await redis.smembers(rebuildQueueKey)).filter((ref) => ref.startsWith(`${other.activityId}:`)),
    ).toEqual([]);
    expect(await redis.smembers(rebuildQueueKey)).toContain(skuRef(sku.activityId, sku.skuId));
    expect((await metrics.deadLetters.get()).values[0].value).toBe(4);
    expect(await readCachedSku(redis, sku.activityId, sku.skuId)).toMatchObject({ available: 10 });
    await redis.srem(rebuildQueueKey, skuRef(sku.activityId, sku.skuId));
  });

  it("takes an activity's window to every SKU of the activity, and removes them when it is deleted", async () => {
    const first = await loaded();
    const second = await loaded(10, first.activityId);
    const endsAt = Date.now() + 2 * hour;
    await applier.applyBatch([
      activity(first.activityId, "u", 3000, {
        starts_at: Date.now() - hour,
        ends_at: endsAt,
        rebuy_after_close: 1,
      }),
    ]);
    for (const sku of [first, second])
      expect(await readCachedSku(redis, sku.activityId, sku.skuId)).toMatchObject({
        endsMs: endsAt,
        rebuy: true,
      });
    expect(await counted("activity", "handled")).toBe(1);

    await applier.applyBatch([activity(first.activityId, "d", 3100, {})]);
    for (const sku of [first, second])
      expect(await readCachedSku(redis, sku.activityId, sku.skuId)).toBeUndefined();
    expect(await counted("activity-gone", "handled")).toBe(1);
  });

  it("isolates a SKU whose own state fails, and applies the rest of the batch", async () => {
    const healthy = await loaded();
    const broken = freshIds();
    await redis.set(skuKeys(broken.activityId, broken.skuId).sku, "not a hash");
    const { dead } = await applier.applyBatch([stock(broken, 2000, 9), stock(healthy, 2000, 7)]);
    expect(dead).toEqual([]);
    expect(isolated).toEqual([skuRef(broken.activityId, broken.skuId)]);
    expect(await readCachedSku(redis, healthy.activityId, healthy.skuId)).toMatchObject({ available: 7 });
  });

  it("rebuilds a SKU missing from Redis from MySQL; with MySQL down the whole batch fails, to be retried", async () => {
    const missing = freshIds();
    await expect(applier.applyBatch([stock(missing, 2000, 9)])).rejects.toThrow();
    expect(isolated).toEqual([]);
  });
});
