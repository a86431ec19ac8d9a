import { readCachedSku, skuKeys } from "@flashgate/cache";
import { serverErrors } from "@flashgate/db";
import { compareSku } from "@flashgate/sync";
import { parsePrometheus, sumOf } from "@flashgate/telemetry/scrape";
import {
  type AppProcess,
  awaitPartitionsShared,
  cachedAvailable,
  clients,
  createSale,
  eventually,
  expectConverged,
  freshIds,
  skuInDatabase,
  sold,
  stackPart,
  startMaintainer,
} from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import type { Pool } from "mysql2/promise";
import { afterAll, afterEach, describe, expect, it } from "vitest";

/** Mixed committed changes over many SKUs: purchases (order + decrement), closures, restocks. */
let user = 5_000_000;
async function mixedChanges(pool: Pool, skus: { activityId: number; skuId: number }[], count: number) {
  let done = 0;
  const worker = async (w: number) => {
    const db = await pool.getConnection();
    try {
      while (done < count) {
        const sku = skus[(done + w) % skus.length];
        const pick = done % 5;
        done += 2;
        if (pick < 3) user += 1;
        const buyer = user;
        // Four writers on the same SKUs, locking in different orders: a deadlock is retried, as any client would.
        for (;;) {
          await db.query("START TRANSACTION");
          try {
            if (pick < 3) {
              await db.query(
                `INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
                 VALUES (?, ?, ?, ?, 'PENDING', 100, 'EUR', NOW(3), NOW(3) + INTERVAL 15 MINUTE)`,
                [`mix-${sku.activityId}-${buyer}`, sku.activityId, sku.skuId, buyer],
              );
              await db.query(
                "UPDATE sale_stock SET available = available - 1 WHERE activity_id = ? AND sku_id = ? AND available >= 1",
                [sku.activityId, sku.skuId],
              );
            } else if (pick === 3) {
              const [closed] = await db.query(
                "UPDATE sale_order SET state = 'CLOSED' WHERE activity_id = ? AND sku_id = ? AND state = 'PENDING' ORDER BY created_at LIMIT 1",
                [sku.activityId, sku.skuId],
              );
              if ((closed as { affectedRows: number }).affectedRows === 1) {
                await db.query(
                  "UPDATE sale_stock SET available = available + 1 WHERE activity_id = ? AND sku_id = ?",
                  [sku.activityId, sku.skuId],
                );
              }
            } else {
              await db.query(
                "UPDATE sale_stock SET available = available + 3 WHERE activity_id = ? AND sku_id = ?",
                [sku.activityId, sku.skuId],
              );
            }
            await db.query("COMMIT");
            break;
          } catch (error) {
            await db.query("ROLLBACK");
            if ((error as { errno?: number }).errno !== serverErrors.deadlock) throw error;
          }
        }
      }
    } finally {
      db.release();
    }
  };
  await Promise.all(Array.from({ length: 4 }, (_, w) => worker(w)));
}

async function newSkus(pool: Pool, n: number, rebuyAfterClose = false) {
  const skus = Array.from({ length: n }, () => freshIds());
  for (const sku of skus) await createSale(pool, { ...sku, units: 1000, rebuyAfterClose });
  return skus;
}

describe("cache-maintainer recovery", () => {
  const c = clients();
  const running: AppProcess[] = [];
  let api: ApiHarness | undefined;
  afterEach(async () => {
    for (const maintainer of running.splice(0)) await maintainer.kill("SIGKILL");
    await api?.close();
    api = undefined;
  });
  afterAll(() => c.close());

  it("kill -9 in the middle of 5,000 changes over 20 SKUs, then a restart: every SKU equals MySQL", async () => {
    const skus = await newSkus(c.pool, 20, true);
    const first = await startMaintainer();
    running.push(first);
    const writing = mixedChanges(c.pool, skus, 5000);
    // Kill it mid-stream: once it has applied part of the changes, while the writers are still going.
    await eventually(
      async () => {
        const metrics = await (await fetch(`${first.url}/metrics`)).text();
        const applied = Number(
          /^flashgate_cdc_events_total\{kind="sale",result="applied"\} (\d+)/m.exec(metrics)?.[1] ?? 0,
        );
        expect(applied).toBeGreaterThan(500);
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    await first.kill("SIGKILL");
    await writing;
    running.push(await startMaintainer());
    for (const sku of skus) await expectConverged(c, sku.activityId, sku.skuId, 60_000);
  });

  it("Kafka killed and restarted: the maintainer says not ready, reconnects, and applies what was committed meanwhile", async () => {
    const [sku] = await newSkus(c.pool, 1);
    const maintainer = await startMaintainer();
    running.push(maintainer);
    await expectConverged(c, sku.activityId, sku.skuId);
    const kafka = await stackPart("kafka");
    await kafka.kill();
    try {
      await c.pool.query(
        "UPDATE sale_stock SET available = available + 5 WHERE activity_id = ? AND sku_id = ?",
        [sku.activityId, sku.skuId],
      );
      // Its stream gives up on the dead broker: readiness must stop claiming it consumes.
      await eventually(async () => expect((await fetch(`${maintainer.url}/readyz`)).status).toBe(503), {
        timeoutMs: 60_000,
      });
    } finally {
      await kafka.restore();
    }
    await expectConverged(c, sku.activityId, sku.skuId, 90_000);
    expect(await cachedAvailable(c.redis, sku.activityId, sku.skuId)).toBe(1005);
    await eventually(async () => expect((await fetch(`${maintainer.url}/readyz`)).status).toBe(200), {
      timeoutMs: 30_000,
    });
  }, 240_000); // its own waits (60 s, the restart, 90 s, 30 s) bound it, not the default 120 s

  it("a new consumer group replaying the topics from the start changes nothing", async () => {
    const skus = await newSkus(c.pool, 3);
    running.push(await startMaintainer());
    await mixedChanges(c.pool, skus, 200);
    for (const sku of skus) await expectConverged(c, sku.activityId, sku.skuId);
    const snapshot = async () =>
      Promise.all(
        skus.map(async ({ activityId, skuId }) => {
          const keys = skuKeys(activityId, skuId);
          // The hash holds the buyers too (b:<user>).
          return c.redis.hgetall(keys.sku);
        }),
      );
    const before = await snapshot();
    await running.pop()?.kill("SIGKILL");
    const replayer = await startMaintainer({ CONSUMER_GROUP: `replay-${Date.now()}` });
    running.push(replayer);
    // Wait until the replay has reached the end of the topic (its lag gauge drops to zero everywhere).
    await eventually(
      async () => {
        const metrics = await (await fetch(`${replayer.url}/metrics`)).text();
        const lags = [
          ...metrics.matchAll(/^flashgate_kafka_consumer_lag\{[^}]*topic="flashgate.sale"[^}]*\} (\d+)/gm),
        ].map((m) => Number(m[1]));
        expect(lags.length).toBeGreaterThan(0);
        expect(lags.every((lag) => lag === 0)).toBe(true);
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    // The state is unchanged; only its positions may have moved on, when the stall fallback (old
    // heartbeats replayed look like a stalled pipeline) reloaded a SKU from MySQL, fenced, as it was.
    const after = await snapshot();
    const withoutPositions = (hashes: Record<string, string>[]) =>
      hashes.map(({ pos: _pos, apos: _apos, ...state }) => state);
    expect(withoutPositions(after)).toEqual(withoutPositions(before));
    for (const [index, hash] of after.entries()) {
      expect(hash.pos >= before[index].pos).toBe(true);
      expect((hash.apos ?? "") >= (before[index].apos ?? "")).toBe(true);
    }
  });

  it("FLUSHALL during a sale: SKUs are rebuilt, purchases resume, the invariant holds", async () => {
    const [sale] = await newSkus(c.pool, 1);
    await c.pool.query("UPDATE sale_stock SET available = 30 WHERE activity_id = ? AND sku_id = ?", [
      sale.activityId,
      sale.skuId,
    ]);
    running.push(await startMaintainer());
    api = await startApi();
    await expectConverged(c, sale.activityId, sale.skuId);
    const buyers = Array.from({ length: 60 }, (_, i) => 8_000_000 + i);
    const outcomes: string[] = [];
    for (const [i, user] of buyers.entries()) {
      if (i === 20) await c.redis.flushall();
      const result = await api.purchase(user, sale);
      outcomes.push(result.status === 201 ? "201" : String(result.body.code));
      if (result.status === 503) {
        const retried = await eventually(async () => {
          const again = await api?.purchase(user, sale, result.key);
          expect(again?.status).not.toBe(503);
          return again;
        });
        // A retry of the key may find the order its first attempt committed (200): bought all the same.
        const bought = retried?.status === 201 || (retried?.status === 200 && retried.body.orderId);
        outcomes[outcomes.length - 1] = bought ? "201" : String(retried?.body.code);
      }
    }
    expect(outcomes.includes("SOLD_OUT")).toBe(true);
    expect(outcomes.filter((o) => o === "201")).toHaveLength(30);
    const ledger = await skuInDatabase(c.pool, sale.activityId, sale.skuId);
    expect(ledger.available + sold(ledger)).toBe(30);
    await expectConverged(c, sale.activityId, sale.skuId);
    // Counted by the rebuild (buyers before the FLUSHALL) and by each order applied after it.
    expect((await readCachedSku(c.redis, sale.activityId, sale.skuId))?.buyers).toBe(30);
  });

  it("two maintainers share the partitions; kill -9 one and the other takes over", async () => {
    const skus = await newSkus(c.pool, 12);
    const a = await startMaintainer();
    const b = await startMaintainer();
    running.push(a, b);
    // Both hold partitions before the changes come (a member still joining would leave them all to the other).
    await awaitPartitionsShared([a, b]);
    await mixedChanges(c.pool, skus, 300);
    // Both had partitions: each applied part of the changes before one of them dies.
    const applied = async (maintainer: typeof a) =>
      sumOf(
        parsePrometheus(await (await fetch(`${maintainer.url}/metrics`)).text()),
        "flashgate_cdc_events_total",
        {
          kind: "sale",
          result: "applied",
        },
      );
    await eventually(async () => {
      expect(await applied(a)).toBeGreaterThan(0);
      expect(await applied(b)).toBeGreaterThan(0);
    });
    await a.kill("SIGKILL");
    await mixedChanges(c.pool, skus, 300);
    for (const sku of skus) await expectConverged(c, sku.activityId, sku.skuId, 60_000);
    for (const sku of skus)
      expect((await compareSku(c.pool, c.redis, sku.activityId, sku.skuId)).equal).toBe(true);
  });
});
