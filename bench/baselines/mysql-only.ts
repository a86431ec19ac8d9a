// Baseline "MySQL-only": the purchase transaction runs for every request. No cache, no filter.

import { createPool, placeOrder } from "@flashgate/db";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { env, purchaseParser } from "./common.ts";

const pool = createPool(env("DATABASE_URL"), { connectionLimit: 8, multipleStatements: true });
const parsePurchase = purchaseParser(env("AUTH_JWT_SECRET"));
let transactions = 0;

const app = new Hono()
  .post("/v1/purchases", async (c) => {
    const parsed = await parsePurchase(c);
    if ("error" in parsed) return parsed.error;
    transactions += 1;
    try {
      const decision = await placeOrder(pool, parsed);
      if (decision.kind === "created") return c.json(decision.order, 201);
      if (decision.kind === "replayed") return c.json(decision.order, 200);
      const code = {
        sold_out: "SOLD_OUT",
        already_purchased: "ALREADY_PURCHASED",
        key_reused: "IDEMPOTENCY_KEY_REUSED",
        not_open: "ACTIVITY_NOT_OPEN",
        unknown_sku: "NOT_FOUND",
      }[decision.kind];
      return c.json({ code }, decision.kind === "unknown_sku" ? 404 : 409);
    } catch {
      return c.json({ code: "UNAVAILABLE" }, 503);
    }
  })
  .get("/stats", (c) => c.json({ transactions }));

serve({ fetch: app.fetch, port: Number(env("PORT")), hostname: "127.0.0.1" });
