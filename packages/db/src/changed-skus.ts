import type { Pool, RowDataPacket } from "mysql2/promise";
import { liveSaleCondition } from "./live-skus.ts";

/**
 * SKUs of live or recent sales whose stock row or sale window changed at or after `since` (MySQL's own
 * clock), and where the next call should start: that clock now, or the start of the oldest transaction
 * still open if earlier. Every change the fast path answers from moves one of the two rows: a purchase,
 * a restock, a closure or expiry (the unit goes back), a window or price edit. A row is stamped when
 * its statement runs, not when it commits: a DBA's transaction committed minutes later carries an old
 * stamp, so the cursor waits for it (reading every open transaction needs the PROCESS privilege).
 */
export async function skusChangedSince(
  pool: Pool,
  since: Date,
): Promise<{ skus: { activityId: number; skuId: number }[]; nextSince: Date }> {
  // trx_started is in the server's system zone, to the second; the apps' sessions and stamps are UTC.
  const [[clock]] = await pool.query<RowDataPacket[]>(
    `SELECT LEAST(NOW(3), COALESCE(
       (SELECT CONVERT_TZ(MIN(trx_started), 'SYSTEM', '+00:00') FROM information_schema.innodb_trx),
       NOW(3))) AS next_since`,
  );
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT s.activity_id, s.sku_id FROM sale_stock s JOIN activity a ON a.id = s.activity_id
      WHERE ${liveSaleCondition} AND (s.updated_at >= ? OR a.updated_at >= ?)`,
    [since, since],
  );
  return {
    skus: rows.map((row) => ({ activityId: Number(row.activity_id), skuId: Number(row.sku_id) })),
    nextSince: clock.next_since as Date,
  };
}
