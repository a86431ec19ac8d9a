import { randomUUID } from "node:crypto";
import {
  binlogSourceKey,
  cdcKeys,
  type FlashgateRedis,
  readCachedSku,
  reserveUnit,
  skuKeys,
  withScripts,
} from "@flashgate/cache";
import { topics } from "@flashgate/cdc";
import { binlogCoordinates, createPool, lostChanges, readBinlogSource } from "@flashgate/db";
import { kafkaClient } from "@flashgate/kafka";
import { createLogger } from "@flashgate/logger";
import { createSale, fastDatabaseUrl, fastRedisUrl, freshIds } from "@flashgate/testkit";
import { Redis } from "ioredis";
import type { Pool } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApplier, type InboundRecord } from "./applier.ts";
import { createLostCommits } from "./lost-commits.ts";
import { createMaintainerMetrics } from "./metrics.ts";

/** A row change on the sale topic as Debezium writes it, in the transaction `gtid`, at `pos` of `file`. */
function saleRecord(
  change: { table: "sale_stock" | "sale_order"; op: "c" | "u"; row: Record<string, unknown> },
  at: { file: string; pos: number; gtid: string; offset: bigint },
): InboundRecord {
  const { file, pos, gtid, offset } = at;
  return {
    topic: topics.sale,
    partition,
    offset,
    key: JSON.stringify({ activity_id: change.row.activity_id, sku_id: change.row.sku_id }),
    value: JSON.stringify({
      before: null,
      after: { ...change.row, updated_at: Date.now() },
      source: { table: change.table, file, pos, row: 0, ts_ms: 1, gtid },
      op: change.op,
    }),
  };
}

const stockChange = (sku: { activityId: number; skuId: number }, available: number) => ({
  table: "sale_stock" as const,
  op: "u" as const,
  row: { activity_id: sku.activityId, sku_id: sku.skuId, available, price_cents: 1999, currency: "EUR" },
});

const orderCreated = (order: { activityId: number; skuId: number; userId: string; requestId: string }) => ({
  table: "sale_order" as const,
  op: "c" as const,
  row: {
    order_id: order.requestId,
    request_id: order.requestId,
    activity_id: order.activityId,
    sku_id: order.skuId,
    user_id: Number(order.userId),
    state: "PENDING",
  },
});

/** A partition of this run's own, so that its GTID marks are this test's alone. */
const partition = 1_000 + Math.floor(Math.random() * 1_000_000);

describe("the commits a failover lost, found as their changes arrive (the database and Redis)", () => {
  let redis: FlashgateRedis;
  let pool: Pool;
  let api: Pool;
  let identity: string;
  const logger = createLogger("lost-commits-test", "silent");
  beforeAll(async () => {
    redis = withScripts(new Redis(fastRedisUrl()));
    pool = createPool(fastDatabaseUrl("maintainer"), { connectionLimit: 2 });
    api = createPool(fastDatabaseUrl(), { connectionLimit: 1 });
    // The database behind the endpoint, as the watchdog records it.
    identity = (await readBinlogSource(pool)).identity;
    await redis.hset(binlogSourceKey, "identity", identity);
  });
  afterAll(async () => {
    await redis.del(cdcKeys.gtidMarks(topics.sale, partition));
    redis.disconnect();
    await pool.end();
    await api.end();
  });

  it("leaves a change of another server that the database lacks out of the cache and names it; applies the database's own; marks the partition", async () => {
    const server = identity.split("/")[1];
    const sale = freshIds();
    await createSale(api, { ...sale, units: 5 });
    const metrics = createMaintainerMetrics();
    const lostCommits = createLostCommits({
      // Nothing here reads the topics back: a client that never connects.
      kafka: kafkaClient(["127.0.0.1:9"], "lost-commits-test", logger),
      pool,
      redis,
      metrics,
      logger,
      lookbackMs: 60_000,
    });
    const { applyBatch } = createApplier({
      redis,
      pool,
      metrics,
      logger,
      isolate: async () => {},
      lostCommits,
    });
    const { file } = await binlogCoordinates(pool);
    const available = async () => (await readCachedSku(redis, sale.activityId, sale.skuId))?.available;
    // Every run's own transactions: the database holds none of them.
    const own = `${server}:${10_000_000_000 + Date.now()}`;
    const lost = `${randomUUID()}:7`;

    await applyBatch([saleRecord(stockChange(sale, 5), { file, pos: 999_999_980, gtid: own, offset: 10n })]);
    expect(await available()).toBe(5);
    await applyBatch([saleRecord(stockChange(sale, 4), { file, pos: 999_999_990, gtid: lost, offset: 11n })]);
    // Never on top of the cache (MariaDB's GTIDs name no server uuid: the check stays out of the way).
    expect(await available()).toBe(server ? 5 : 4);
    await applyBatch([
      saleRecord(stockChange(sale, 3), { file, pos: 999_999_995, gtid: `${server}:1`, offset: 12n }),
    ]);
    const named = (await lostChanges(pool, { limit: 100_000 })).filter(
      (c) => c.activityId === sale.activityId && c.skuId === sale.skuId,
    );
    if (!server) {
      expect(named).toEqual([]);
      expect(await available()).toBe(3);
      return;
    }
    expect(named.map((change) => [change.gtid, change.table, change.after?.available])).toEqual([
      [lost, "sale_stock", 4],
    ]);
    expect(await available()).toBe(3);

    // A buyer admitted by the cache, whose order the old primary committed and the new one lacks: the
    // unit their reservation holds is free again.
    const buyer = { ...sale, userId: String(900_000 + (Date.now() % 100_000)), requestId: randomUUID() };
    const limits = { reservationTtlMs: 600_000, rateLimit: 100, rateWindowMs: 1_000 };
    expect((await reserveUnit(redis, buyer, limits)).outcome).toBe("RESERVED");
    await applyBatch([
      saleRecord(orderCreated(buyer), { file, pos: 999_999_996, gtid: `${randomUUID()}:8`, offset: 13n }),
    ]);
    expect(await redis.zscore(skuKeys(sale.activityId, sale.skuId).reservations, buyer.userId)).toBeNull();
    const marks = await redis.lrange(cdcKeys.gtidMarks(topics.sale, partition), 0, -1);
    expect(marks.at(-1), "the first batch's mark: where a read back would start").toBe(`10 ${own}`);
  });
});
