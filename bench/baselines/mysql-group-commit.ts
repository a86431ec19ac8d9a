// Baseline "MySQL-only", as strong as the design allows: no Redis, every buyer decided by MySQL, but
// buyers who arrive together share a transaction (the same group commit and decision statement as
// flashgate's, the same durability), and a SKU that MySQL has sold out is answered from memory — a
// snapshot of its buyers, kept 250 ms (flashgate's SOLD_OUT_CACHE_MS) and renewed from its stock row —
// instead of a transaction per refusal. Without a cache to announce units coming back, a restock or a
// closed order is seen up to that long late (it only ever refuses; it never admits).

import { createPool, soldOutBuyers } from "@flashgate/db";
import { createDecisionBatcher, createOverloadGuard, createSoldOutShortcut } from "@flashgate/sale";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { env, purchaseParser, refusalCode } from "./common.ts";

// flashgate's own defaults (DB_POOL_SIZE, DB_MAX_IN_FLIGHT, DB_MAX_QUEUE, DB_MAX_BATCH, DB_QUEUE_TIMEOUT_MS,
// DB_BATCH_GATHER_MS, SOLD_OUT_CACHE_MS).
const pool = createPool(env("DATABASE_URL"), { connectionLimit: 8, multipleStatements: true });
const guard = createOverloadGuard({ maxInFlight: 8, maxQueue: 256, maxWaitMs: 2000 });
let transactions = 0;
const batcher = createDecisionBatcher({
  pool,
  guard,
  maxBatch: 100,
  maxConcurrent: 8,
  maxWaitMs: 2000,
  gatherMs: 5,
  onTransaction: () => {
    transactions += 1;
  },
});
const soldOut = createSoldOutShortcut(250, (activityId, skuId, known) =>
  soldOutBuyers(pool, activityId, skuId, known),
);
soldOut.listening(true);
const parsePurchase = purchaseParser(env("AUTH_JWT_SECRET"));

const app = new Hono()
  .post("/v1/purchases", async (c) => {
    const parsed = await parsePurchase(c);
    if ("error" in parsed) return parsed.error;
    const known = soldOut.answer(parsed.activityId, parsed.skuId, parsed.userId, parsed.requestId);
    if (known) return c.json({ code: known }, 409);
    try {
      const decision = await batcher.decide(parsed);
      if (decision.kind === "created") return c.json(decision.order, 201);
      if (decision.kind === "replayed") return c.json(decision.order, 200);
      if (decision.kind === "sold_out") soldOut.soldOut(parsed.activityId, parsed.skuId);
      return c.json({ code: refusalCode[decision.kind] }, decision.kind === "unknown_sku" ? 404 : 409);
    } catch {
      return c.json({ code: "UNAVAILABLE" }, 503);
    }
  })
  .get("/stats", (c) => c.json({ transactions }));

serve({ fetch: app.fetch, port: Number(env("PORT")), hostname: "127.0.0.1" });
