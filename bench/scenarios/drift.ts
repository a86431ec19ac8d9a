import { type FlashgateRedis, skuKeys } from "@flashgate/cache";
import { eventually } from "@flashgate/testkit";
import type { RowDataPacket } from "mysql2/promise";
import { runLoad } from "../lib/load.ts";
import { databaseAvailable, mintTokens, purchaseRequest, unitsSold } from "../lib/sale.ts";
import { defineScenario, type Stored } from "../lib/scenario.ts";
import type { Systems } from "../lib/systems.ts";
import { roundsOf } from "../lib/tables.ts";
import { designRounds, openSale } from "./open-sale.ts";
import { redisTruthStock } from "./storm.ts";

/**
 * During a sale: a raw-SQL restock of 100 units, 50 orders closed in SQL (each returning its unit) and
 * an admin price edit. How long until those 150 units sell again, and what drift is left after the window.
 */
async function driftScenario(
  systems: Systems,
  redis: FlashgateRedis,
  secret: string,
  windowS: number,
  rounds: number,
) {
  const results = [];
  const warmUp = { units: 20, requests: 100, connections: 10 };
  for await (const { round, place, system } of designRounds(systems, redis, secret, warmUp, rounds)) {
    const { pool } = system;
    const sale = await openSale(system, redis, 200);
    const first = mintTokens(secret, 400, 20_000_000);
    await runLoad(system.urls, 400, 20, (i) => purchaseRequest(sale, first[i], `d1-${sale.activityId}-${i}`));
    // Every sale in MySQL first (Redis-as-truth writes its orders asynchronously).
    await eventually(async () => {
      if ((await unitsSold(pool, sale)) < 200) throw new Error("orders still being written");
    });

    // The DBA and the back-office, straight into MySQL.
    await pool.query(
      "UPDATE sale_stock SET available = available + 100 WHERE activity_id = ? AND sku_id = ?",
      [sale.activityId, sale.skuId],
    );
    const [toClose] = await pool.query<RowDataPacket[]>(
      "SELECT order_id FROM sale_order WHERE activity_id = ? AND sku_id = ? AND state = 'PENDING' LIMIT 50",
      [sale.activityId, sale.skuId],
    );
    for (const row of toClose) {
      const connection = await pool.getConnection();
      await connection.query("START TRANSACTION");
      await connection.query(
        "UPDATE sale_order SET state = 'CLOSED' WHERE order_id = ? AND state = 'PENDING'",
        [row.order_id],
      );
      await connection.query(
        "UPDATE sale_stock SET available = available + 1 WHERE activity_id = ? AND sku_id = ?",
        [sale.activityId, sale.skuId],
      );
      await connection.query("COMMIT");
      connection.release();
    }
    await pool.query("UPDATE sale_stock SET price_cents = 1100 WHERE activity_id = ? AND sku_id = ?", [
      sale.activityId,
      sale.skuId,
    ]);
    const target = 200 - 50 + 150;
    const editedAt = Date.now();

    // New buyers keep arriving; measure when the returned units have sold.
    const buyers = mintTokens(secret, 20_000, 30_000_000);
    let sellOutMs: number | null = null;
    let wave = 0;
    while (Date.now() - editedAt < windowS * 1000) {
      await runLoad(system.urls, 200, 10, (i) =>
        purchaseRequest(sale, buyers[(wave * 200 + i) % buyers.length], `d2-${sale.activityId}-${wave}-${i}`),
      );
      wave += 1;
      if ((await unitsSold(pool, sale)) >= target && sellOutMs === null) sellOutMs = Date.now() - editedAt;
      if (sellOutMs !== null) break;
    }
    const remaining = windowS * 1000 - (Date.now() - editedAt);
    if (remaining > 0) await new Promise((r) => setTimeout(r, remaining));

    let drift: { available: number; price: number | null } | null = null;
    const dbAvailable = await databaseAvailable(pool, sale);
    if (system.design === "flashgate") {
      const hash = await redis.hmget(skuKeys(sale.activityId, sale.skuId).sku, "available", "price_cents");
      drift = { available: Math.abs(Number(hash[0]) - dbAvailable), price: Math.abs(Number(hash[1]) - 1100) };
    } else if (system.design === "redis-as-truth") {
      drift = { available: Math.abs((await redisTruthStock(system, sale)) - dbAvailable), price: null };
    }
    results.push({
      system: system.name,
      design: system.design,
      round,
      place,
      returnedUnits: 150,
      unitsSold: await unitsSold(pool, sale),
      target,
      msUntilReturnedUnitsSold: sellOutMs,
      driftAfterWindow: drift,
    });
  }
  return { windowS, rounds, results };
}

export const driftBenchScenario = defineScenario({
  name: "drift",
  title: "drift",
  profile: ({ quick, rounds }) => ({ windowS: quick ? 3 : 15, rounds }),
  section: driftSection,
  run: (b, { windowS, rounds }: { windowS: number; rounds: number }) =>
    driftScenario(b.systems, b.redis, b.env.AUTH_JWT_SECRET, windowS, rounds),
});

/** Raw-SQL changes during a sale: how soon returned units sell. */
function driftSection(drift: Stored<Awaited<ReturnType<typeof driftScenario>>>): string[] {
  const lines = [
    "## Drift",
    "",
    `During a sale: raw-SQL restock of 100, 50 orders closed in SQL, a price edit; window ${drift.windowS} s; ${roundsOf(drift.rounds)}, the designs' order rotating.`,
    "",
    "| round | system | returned units sold after (ms) | units sold / target | drift after window (available, price) |",
    "|---|---|---|---|---|",
  ];
  for (const r of drift.results) {
    const d = r.driftAfterWindow
      ? `${r.driftAfterWindow.available}, ${r.driftAfterWindow.price ?? "n/a"}`
      : "no cache";
    lines.push(
      `| ${r.round} | ${r.system} | ${r.msUntilReturnedUnitsSold ?? "never (within window)"} | ${r.unitsSold} / ${r.target} | ${d} |`,
    );
  }
  lines.push("");
  return lines;
}
