// Baseline "MySQL-only", naive: a transaction of its own for every request, no memory of a sold-out SKU.
// Kept as an extra row (`npm run bench -- --naive`): what group commit and the sold-out memory add.

import { createPool, placeOrder } from "@flashgate/db";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { env, purchaseParser, refusalCode } from "./common.ts";

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
      return c.json({ code: refusalCode[decision.kind] }, decision.kind === "unknown_sku" ? 404 : 409);
    } catch {
      return c.json({ code: "UNAVAILABLE" }, 503);
    }
  })
  .get("/stats", (c) => c.json({ transactions }));

serve({ fetch: app.fetch, port: Number(env("PORT")), hostname: "127.0.0.1" });
