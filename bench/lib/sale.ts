import { signJwt } from "@flashgate/auth";
import { eventually } from "@flashgate/testkit";
import { addSkus, createActivity, createSale as createTestkitSale } from "@flashgate/testkit/sale-fixture";
import type { Pool, RowDataPacket } from "mysql2/promise";

let next = Math.floor(Date.now() / 1000) * 100;
export const newSale = () => {
  next += 1;
  return { activityId: next, skuId: 1 };
};

/**
 * A bench sale's orders stay PENDING for a day: the bench database outlives its runs, and orders of one
 * scenario falling due in a later one would make work that scenario never asked for (a deadline's
 * expiry of its own 50,000 orders met 330,000 more from the open loop an earlier quarter of an hour).
 */
const paymentTimeoutS = 86_400;

export const createSale = (pool: Pool, sale: { activityId: number; skuId: number }, units: number) =>
  createTestkitSale(pool, { ...sale, name: "bench", units, priceCents: 1000, paymentTimeoutS });

export async function unitsSold(pool: Pool, sale: { activityId: number; skuId: number }) {
  const [rows] = await pool.query<RowDataPacket[]>(
    "SELECT COUNT(*) AS n FROM sale_order WHERE activity_id = ? AND sku_id = ? AND state IN ('PENDING', 'PAID')",
    [sale.activityId, sale.skuId],
  );
  return Number(rows[0].n);
}

/** When `done` came to hold (ms on the load's clock, polled every 100 ms), or null after `timeoutMs`. */
export const settledAt = (done: () => Promise<boolean>, clock: () => number, timeoutMs: number) =>
  eventually(
    async () => {
      if (!(await done())) throw new Error("not yet");
      return Math.round(clock());
    },
    { timeoutMs, intervalMs: 100 },
  ).catch(() => null);

export async function databaseAvailable(pool: Pool, sale: { activityId: number; skuId: number }) {
  const [rows] = await pool.query<RowDataPacket[]>(
    "SELECT available FROM sale_stock WHERE activity_id = ? AND sku_id = ?",
    [sale.activityId, sale.skuId],
  );
  return Number(rows[0].available);
}

/**
 * Tokens are minted before the clock starts: the load generator should spend its time on requests. They
 * last a day, longer than any run: a token that expired mid-run would turn a design's figures into 401s.
 */
export function mintTokens(secret: string, users: number, firstUser = 1): string[] {
  const exp = Math.floor(Date.now() / 1000) + 86_400;
  return Array.from({ length: users }, (_, i) => signJwt(secret, { sub: String(firstUser + i), exp }));
}

export const purchaseRequest = (sale: { activityId: number; skuId: number }, token: string, key: string) => ({
  method: "POST" as const,
  path: "/v1/purchases",
  headers: { authorization: `Bearer ${token}`, "idempotency-key": key, "content-type": "application/json" },
  body: JSON.stringify(sale),
});

/** One activity selling `skus` SKUs (ids 1…skus) of `units` each. */
export async function createCatalogue(pool: Pool, activityId: number, skus: number, units: number) {
  await createActivity(pool, { activityId, name: "bench catalogue", paymentTimeoutS });
  const ids = Array.from({ length: skus }, (_, i) => i + 1);
  await addSkus(
    pool,
    activityId,
    ids.map((skuId) => ({ skuId, units, priceCents: 1000 })),
  );
}

/**
 * The bench's earlier sales moved into the past, out of the window in which flashgate's drift check
 * compares SKUs (live or ended within a day): a deployment's past sales are long over, and the bench
 * opens hundreds of sales an hour, whose thousands of SKUs the deployed drift check would otherwise
 * compare back to back, on the same cores as the design being measured.
 */
export async function retireSales(pool: Pool): Promise<void> {
  await pool.query(
    `UPDATE activity SET starts_at = NOW(3) - INTERVAL 3 DAY, ends_at = NOW(3) - INTERVAL 2 DAY
      WHERE ends_at > NOW(3) - INTERVAL 1 DAY`,
  );
}
