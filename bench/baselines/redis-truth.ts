// Baseline "Redis-as-truth": a Lua DECR + buyers set decides; an asynchronous writer persists orders to
// MySQL afterwards. Nothing carries database edits back to Redis (no CDC). Its durability is its Redis's
// (the bench runs it on a Redis of its own, `appendfsync everysec` or `always`). With SOLD_OUT_MARK_MS,
// the design's classic first optimisation: a SKU Redis answered SOLD_OUT for is refused in process for
// that long, without asking Redis (0: every request asks Redis, the naive version).
import { readFileSync } from "node:fs";
import { createPool } from "@flashgate/db";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { Redis } from "ioredis";
import { env, purchaseParser } from "./common.ts";

const pool = createPool(env("DATABASE_URL"), { connectionLimit: 4 });
const redis = new Redis(env("REDIS_URL"));
redis.defineCommand("buy", {
  numberOfKeys: 3,
  lua: readFileSync(new URL("./redis-truth.lua", import.meta.url), "utf8"),
});
const parsePurchase = purchaseParser(env("AUTH_JWT_SECRET"));
const keys = (a: number, s: number) => [
  `rt:{${a}:${s}}:stock`,
  `rt:{${a}:${s}}:buyers`,
  `rt:{${a}:${s}}:queue`,
];
let transactions = 0;
const markMs = Number(process.env.SOLD_OUT_MARK_MS ?? 0);
/** SKU ("activity:sku") → until when it is refused without asking Redis. */
const soldOutUntil = new Map<string, number>();

const app = new Hono()
  .post("/v1/purchases", async (c) => {
    const p = await parsePurchase(c);
    if ("error" in p) return p.error;
    const sku = `${p.activityId}:${p.skuId}`;
    if (markMs > 0 && (soldOutUntil.get(sku) ?? 0) > performance.now())
      return c.json({ code: "SOLD_OUT" }, 409);
    const order = JSON.stringify({
      requestId: p.requestId,
      userId: p.userId,
      activityId: p.activityId,
      skuId: p.skuId,
    });
    const outcome = await (redis as unknown as { buy: (...a: string[]) => Promise<string> }).buy(
      ...keys(p.activityId, p.skuId),
      p.userId,
      order,
    );
    if (outcome === "OK") {
      pending.add(sku);
      return c.json({ requestId: p.requestId, state: "PENDING" }, 201);
    }
    if (outcome === "SOLD_OUT" && markMs > 0) soldOutUntil.set(sku, performance.now() + markMs);
    return c.json({ code: outcome }, 409);
  })
  // The sale starts by copying MySQL's stock into Redis once; from then on Redis is the truth.
  .post("/admin/load/:a/:s", async (c) => {
    const [a, s] = [Number(c.req.param("a")), Number(c.req.param("s"))];
    const [rows] = await pool.query("SELECT available FROM sale_stock WHERE activity_id = ? AND sku_id = ?", [
      a,
      s,
    ]);
    await redis.set(keys(a, s)[0], (rows as { available: number }[])[0].available);
    soldOutUntil.delete(`${a}:${s}`);
    return c.json({ ok: true });
  })
  // What its truth says is left: the bench compares it with MySQL's.
  .get("/admin/stock/:a/:s", async (c) =>
    c.json({
      available: Number(await redis.get(keys(Number(c.req.param("a")), Number(c.req.param("s")))[0])),
    }),
  )
  .get("/stats", async (c) => c.json({ transactions }));

// The asynchronous writer: drains each queue in batches, one transaction per batch. It visits the SKUs
// this process admitted orders for until their queues are empty (every order's queue is drained by the
// process that admitted it, if no other did first): polling every SKU ever loaded spent the machine's
// CPU on empty queues, more with every sale a bench run opened.
const pending = new Set<string>();
async function writer() {
  for (;;) {
    let wrote = false;
    for (const sku of pending) {
      const [a, s] = sku.split(":").map(Number);
      const batch = (await redis.lpop(keys(a, s)[2], 100)) ?? [];
      if (!batch.length) {
        pending.delete(sku);
        continue;
      }
      wrote = true;
      const connection = await pool.getConnection();
      try {
        await connection.query("START TRANSACTION");
        for (const line of batch) {
          const o = JSON.parse(line);
          await connection.query(
            `INSERT IGNORE INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
             SELECT ?, s.activity_id, s.sku_id, ?, 'PENDING', s.price_cents, s.currency, NOW(3), NOW(3) + INTERVAL a.payment_timeout_s SECOND
               FROM sale_stock s JOIN activity a ON a.id = s.activity_id WHERE s.activity_id = ? AND s.sku_id = ?`,
            [o.requestId, o.userId, a, s],
          );
        }
        await connection.query(
          "UPDATE sale_stock SET available = GREATEST(0, available - ?) WHERE activity_id = ? AND sku_id = ?",
          [batch.length, a, s],
        );
        await connection.query("COMMIT");
        transactions += 1;
      } finally {
        connection.release();
      }
    }
    if (!wrote) await new Promise((r) => setTimeout(r, 20));
  }
}
void writer();

serve({ fetch: app.fetch, port: Number(env("PORT")), hostname: "127.0.0.1" });
