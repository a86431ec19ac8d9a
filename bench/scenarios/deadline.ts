import type { FlashgateRedis } from "@flashgate/cache";
import { closeAllExpiredOrders } from "@flashgate/db";
import type { Pool, RowDataPacket } from "mysql2/promise";
import { runOpenLoad } from "../lib/open-loop.ts";
import { createCatalogue, mintTokens, newSale, purchaseRequest } from "../lib/sale.ts";
import { defineScenario, type Stored } from "../lib/scenario.ts";
import type { Systems } from "../lib/systems.ts";
import { seconds } from "../lib/tables.ts";
import { allCached } from "./catalogue.ts";
import { lagBetween, scrape } from "./lag.ts";

export interface ExpiryProfile {
  orders: number;
  skus: number;
  /** New buyers per second (open loop) on the sold-out sale from its deadline on. */
  buyersPerSecond: number;
  buyingMs: number;
}

/**
 * A payment deadline: a sold-out sale's PENDING orders all due at once. The maintainers start with order
 * expiry on; new buyers keep arriving at a fixed rate; what counts is how long after the deadline the last
 * returned unit is sold again (every unit MySQL got back is a new buyer's order), the expiry's pace, and
 * the commit → Redis lag meanwhile.
 */
async function massExpiry(
  systems: Systems,
  pool: Pool,
  redis: FlashgateRedis,
  secret: string,
  profile: ExpiryProfile,
) {
  // The bench database outlives runs: orders an earlier run left due would be closed first (oldest first).
  await closeAllExpiredOrders(pool, 1000);
  const { activityId } = newSale();
  const unitsPerSku = profile.orders / profile.skus;
  await createCatalogue(pool, activityId, profile.skus, unitsPerSku);
  // The orders, due already: nothing closes them until the maintainers start with expiry on.
  const resume = await systems.flashgate.pauseMaintainers();
  for (let first = 0; first < profile.orders; first += 1000) {
    const rows = Array.from({ length: Math.min(1000, profile.orders - first) }, (_, i) => {
      const n = first + i;
      return `('exp-${activityId}-${n}', ${activityId}, ${(n % profile.skus) + 1}, ${n + 1}, 'PENDING', 1000, 'EUR', NOW(3), NOW(3))`;
    });
    const connection = await pool.getConnection();
    try {
      await connection.query("START TRANSACTION");
      await connection.query(
        `INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at) VALUES ${rows.join(",")}`,
      );
      await connection.query("UPDATE sale_stock SET available = available - ? WHERE activity_id = ?", [
        rows.length / profile.skus,
        activityId,
      ]);
      await connection.query("COMMIT");
    } finally {
      connection.release();
    }
  }
  // Expiry held off until the cache has the sale; then the maintainers as deployed (expiry every second).
  await resume({ EXPIRY_INTERVAL_MS: "0" });
  if (!(await allCached(pool, redis, activityId, profile.skus, 180_000)))
    throw new Error("the sold-out sale never reached the cache");
  await systems.flashgate.restartMaintainers();

  // The buyers after the deadline: users of their own, told apart from the expired orders' by id.
  const newBuyers = 70_000_000;
  const newOrders = async () => {
    const [rows] = await pool.query<RowDataPacket[]>(
      "SELECT SUM(user_id >= ? AND state = 'PENDING') AS resold, SUM(state = 'CLOSED') AS closed FROM sale_order WHERE activity_id = ?",
      [newBuyers, activityId],
    );
    return { resold: Number(rows[0].resold ?? 0), closed: Number(rows[0].closed ?? 0) };
  };
  const tokens = mintTokens(
    secret,
    Math.ceil((profile.buyersPerSecond * profile.buyingMs) / 1000),
    70_000_000,
  );
  const before = await scrape(systems.flashgate.maintainerUrls);
  const deadline = performance.now();
  let expiredMs: number | null = null;
  let resoldMs: number | null = null;
  const watching = (async () => {
    while (resoldMs === null && performance.now() - deadline < profile.buyingMs + 10_000) {
      const { resold, closed } = await newOrders();
      if (expiredMs === null && closed >= profile.orders) expiredMs = performance.now() - deadline;
      if (resold >= profile.orders) resoldMs = performance.now() - deadline;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const load = await runOpenLoad(
    systems.flashgate.urls,
    { rate: profile.buyersPerSecond, durationMs: profile.buyingMs, connections: 1000, timeoutMs: 2000 },
    (i) =>
      purchaseRequest(
        { activityId, skuId: (i % profile.skus) + 1 },
        tokens[i % tokens.length],
        `exp-buy-${activityId}-${i}`,
      ),
  );
  await watching;
  const cdc = lagBetween(before, await scrape(systems.flashgate.maintainerUrls));
  const { resold, closed } = await newOrders();
  return {
    profile,
    expiredAllAfterMs: expiredMs === null ? null : Math.round(expiredMs),
    lastUnitSoldAgainAfterMs: resoldMs === null ? null : Math.round(resoldMs),
    closed,
    resold,
    answers: Object.fromEntries(
      Object.entries(load.latencies).map(([label, values]) => [label, values.length]),
    ),
    timedOut: load.timedOut,
    lagP50Ms: cdc.lagP50Ms,
    lagP99Ms: cdc.lagP99Ms,
    applied: cdc.applied,
  };
}

export const deadlineScenario = defineScenario({
  name: "deadline",
  title: "a payment deadline",
  profile: ({ quick }) =>
    quick
      ? { orders: 2_000, skus: 20, buyersPerSecond: 500, buyingMs: 5_000 }
      : { orders: 50_000, skus: 100, buyersPerSecond: 2000, buyingMs: 120_000 },
  section: deadlineSection,
  run: (b, profile: ExpiryProfile) =>
    massExpiry(b.systems, b.systems.flashgate.pool, b.redis, b.env.AUTH_JWT_SECRET, profile),
});

/** A sold-out sale's PENDING orders all due at once, and the buyers who get their units. */
function deadlineSection(deadline: Stored<Awaited<ReturnType<typeof massExpiry>>>): string[] {
  return [
    "## A payment deadline",
    "",
    `${deadline.profile.orders} PENDING orders of a sold-out sale (${deadline.profile.skus} SKUs) all due at once, the maintainers started with order expiry on, new buyers arriving at ${deadline.profile.buyersPerSecond}/s (open loop): all expired after **${seconds(deadline.expiredAllAfterMs)} s**, the last returned unit sold again after **${seconds(deadline.lastUnitSoldAgainAfterMs)} s** (${deadline.resold} of ${deadline.profile.orders} re-sold); commit → Redis lag p50 / p99 meanwhile ${deadline.lagP50Ms ?? "–"} / ${deadline.lagP99Ms ?? "–"} ms over ${deadline.applied} changes.`,
    "",
  ];
}
