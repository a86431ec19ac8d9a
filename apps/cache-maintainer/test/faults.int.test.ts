import { activitySkusKey, applyActivityChange, readCachedSku, skuKeys } from "@flashgate/cache";
import { databaseName } from "@flashgate/db";
import { adminConnection } from "@flashgate/stack";
import { compareSku, loadSkuFromDatabase } from "@flashgate/sync";
import {
  type AppProcess,
  clients,
  createSale,
  eventually,
  expectConverged,
  freshIds,
  maintainerMetric,
  stackEnv,
  startMaintainer,
  startTcpProxy,
  testContext,
} from "@flashgate/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** SQL run past the binlog (CDC never sees it), as root: for bulk set-up and for clearing up after it. */
async function offTheBinlog(statements: [string, unknown[]][]) {
  const admin = await adminConnection(testContext());
  try {
    await admin.query(`USE \`${databaseName}\``);
    await admin.query("SET SESSION sql_log_bin = 0");
    for (const [sql, params] of statements) await admin.query(sql, params);
  } finally {
    await admin.end();
  }
}

/** Removes a sale this file left unlike MySQL (or too big to keep), so later checks of every SKU do not trip on it. */
async function forget(c: ReturnType<typeof clients>, sale: { activityId: number; skuId: number }) {
  await offTheBinlog([
    ["DELETE FROM sale_order WHERE activity_id = ?", [sale.activityId]],
    ["DELETE FROM sale_stock WHERE activity_id = ?", [sale.activityId]],
    ["DELETE FROM activity WHERE id = ?", [sale.activityId]],
  ]);
  const keys = skuKeys(sale.activityId, sale.skuId);
  await c.redis.del(keys.sku, keys.reservations, keys.reservationRequests, activitySkusKey(sale.activityId));
}

const rawOrder = (sale: { activityId: number; skuId: number }, userId: number) => [
  `INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
   VALUES (?, ?, ?, ?, 'PENDING', 1999, 'EUR', NOW(3), NOW(3) + INTERVAL 15 MINUTE)`,
  [`raw-${sale.activityId}-${userId}`, sale.activityId, sale.skuId, userId],
];

describe("faults never stop the cache", () => {
  let maintainer: AppProcess;
  const c = clients();
  beforeAll(async () => {
    // Default settings but a quicker drift check, so that its repairs show within a test.
    maintainer = await startMaintainer({ DRIFT_INTERVAL_MS: "1000" });
  });
  afterAll(async () => {
    await maintainer.kill();
    await c.close();
  });

  it("a SKU whose Redis state refuses its changes is isolated and rebuilt; the others flow; nothing is dead-lettered", async () => {
    const [broken, healthy] = [freshIds(), freshIds()];
    for (const sale of [broken, healthy]) {
      await createSale(c.pool, { ...sale, units: 5 });
      await expectConverged(c, sale.activityId, sale.skuId);
    }
    const deadBefore = await maintainerMetric(maintainer, "flashgate_cdc_dead_letters_total");
    // A key of the wrong type: every order change of this SKU fails in apply.lua (WRONGTYPE).
    await c.redis.set(skuKeys(broken.activityId, broken.skuId).reservations, "not a zset");

    for (const sale of [broken, healthy]) {
      const [sql, params] = rawOrder(sale, 77);
      await c.pool.query(sql as string, params);
    }
    await expectConverged(c, healthy.activityId, healthy.skuId);
    await expectConverged(c, broken.activityId, broken.skuId);
    expect(await maintainerMetric(maintainer, "flashgate_cdc_dead_letters_total")).toBe(deadBefore);
    expect(await maintainerMetric(maintainer, "flashgate_cache_isolations_total")).toBeGreaterThanOrEqual(1);
    await eventually(async () =>
      expect(await maintainerMetric(maintainer, "flashgate_cache_isolated_skus")).toBe(0),
    );
  });

  it("drift made by hand is repaired by the maintainer itself: auto-repair is on by default", async () => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 5 });
    await expectConverged(c, sale.activityId, sale.skuId);
    await c.redis.hset(skuKeys(sale.activityId, sale.skuId).sku, "available", "555");
    await expectConverged(c, sale.activityId, sale.skuId);
    // Counted once the check's whole pass ends, which may be after this SKU was repaired.
    await eventually(async () =>
      expect(await maintainerMetric(maintainer, "flashgate_drift_repairs_total")).toBeGreaterThanOrEqual(1),
    );
  });

  it("Redis out of memory for a moment: the change is held and retried, not dead-lettered, and lands", async () => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 5 });
    await expectConverged(c, sale.activityId, sale.skuId);
    const deadBefore = await maintainerMetric(maintainer, "flashgate_cdc_dead_letters_total");
    const retriesBefore = await maintainerMetric(maintainer, "flashgate_cdc_apply_retries_total");
    await c.redis.config("SET", "maxmemory", "1");
    try {
      await c.pool.query("UPDATE sale_stock SET available = 9 WHERE activity_id = ? AND sku_id = ?", [
        sale.activityId,
        sale.skuId,
      ]);
      await eventually(async () =>
        expect(await maintainerMetric(maintainer, "flashgate_cdc_apply_retries_total")).toBeGreaterThan(
          retriesBefore,
        ),
      );
    } finally {
      await c.redis.config("SET", "maxmemory", "0");
    }
    await expectConverged(c, sale.activityId, sale.skuId);
    expect((await readCachedSku(c.redis, sale.activityId, sale.skuId))?.available).toBe(9);
    expect(await maintainerMetric(maintainer, "flashgate_cdc_dead_letters_total")).toBe(deadBefore);
  });
});

describe("a batch held across a crash", () => {
  const c = clients();
  afterAll(async () => c.close());

  it("is applied after kill -9 and a restart: offsets are committed only once Redis holds the change", async () => {
    const redisPort = Number(new URL(stackEnv().REDIS_URL).port);
    const link = await startTcpProxy(redisPort);
    const throughLink = stackEnv().REDIS_URL.replace(`:${redisPort}`, `:${link.port}`);
    // Drift repair off: only the CDC path may bring the change.
    const first = await startMaintainer({ REDIS_URL: throughLink, DRIFT_AUTO_REPAIR: "false" });
    let second: AppProcess | undefined;
    try {
      const sale = freshIds();
      await createSale(c.pool, { ...sale, units: 5 });
      await expectConverged(c, sale.activityId, sale.skuId);
      const retriesBefore = await maintainerMetric(first, "flashgate_cdc_apply_retries_total");
      await link.cut();
      await c.pool.query("UPDATE sale_stock SET available = 11 WHERE activity_id = ? AND sku_id = ?", [
        sale.activityId,
        sale.skuId,
      ]);
      // Consumed and held: applying it failed at least once.
      await eventually(async () =>
        expect(await maintainerMetric(first, "flashgate_cdc_apply_retries_total")).toBeGreaterThan(
          retriesBefore,
        ),
      );
      await first.kill("SIGKILL");
      await link.restore();
      second = await startMaintainer({ DRIFT_AUTO_REPAIR: "false" });
      await expectConverged(c, sale.activityId, sale.skuId);
      expect((await readCachedSku(c.redis, sale.activityId, sale.skuId))?.available).toBe(11);
    } finally {
      await first.kill("SIGKILL");
      await second?.kill();
      await link.close();
    }
  });
});

describe("rebuilds", () => {
  const c = clients();
  afterAll(async () => c.close());

  it("a SKU with 200,000 buyers is rebuilt whole, in bounded chunks", async () => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 1 });
    // Written past the binlog: 200,000 changes through CDC would only slow every later test.
    await offTheBinlog([
      [
        `INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
         WITH digit AS (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
                        UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9),
              seq AS (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * d.d + 10000 * e.d + 100000 * f.d AS n
                        FROM digit a, digit b, digit c, digit d, digit e, digit f)
         SELECT CONCAT('bulk-', ?, '-', n), ?, ?, 5000000 + n, 'PAID', 1999, 'EUR', NOW(3), NOW(3) FROM seq WHERE n < 200000`,
        [sale.activityId, sale.activityId, sale.skuId],
      ],
    ]);
    expect(await loadSkuFromDatabase(c.pool, c.redis, sale.activityId, sale.skuId)).toBe("loaded");
    expect((await readCachedSku(c.redis, sale.activityId, sale.skuId))?.buyers).toBe(200_000);
    const keys = skuKeys(sale.activityId, sale.skuId);
    expect(await c.redis.hlen(keys.sku)).toBeGreaterThan(200_000);
    expect(await c.redis.keys(`${keys.loadPrefix}*`)).toEqual([]);
    await forget(c, sale);
  });

  it("a rebuild keeps a sale window applied after its read; the drift check compares window and price", async () => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 5 });
    expect(await loadSkuFromDatabase(c.pool, c.redis, sale.activityId, sale.skuId)).toBe("loaded");
    const endsMs = Date.now() + 7_200_000;
    // As if CDC had applied a window change committed after the rebuild's read below.
    await applyActivityChange(c.redis, sale.activityId, {
      position: "99999999:0000000000000:000000",
      startsMs: Date.now() - 60_000,
      endsMs,
      rebuy: false,
    });
    await loadSkuFromDatabase(c.pool, c.redis, sale.activityId, sale.skuId);
    expect((await readCachedSku(c.redis, sale.activityId, sale.skuId))?.endsMs).toBe(endsMs);

    const other = freshIds();
    await createSale(c.pool, { ...other, units: 5, priceCents: 1999 });
    await loadSkuFromDatabase(c.pool, c.redis, other.activityId, other.skuId);
    await c.redis.hset(skuKeys(other.activityId, other.skuId).sku, "price_cents", 1);
    expect((await compareSku(c.pool, c.redis, other.activityId, other.skuId)).equal).toBe(false);
    for (const left of [sale, other]) await forget(c, left);
  });
});
