import type { Pool, RowDataPacket } from "mysql2/promise";
import { liveSaleCondition } from "./live-skus.ts";

/**
 * SKUs of live or recent sales whose stock row or sale window changed at or after `since` (MySQL's own
 * clock), and that clock now, for the next call. Every change the fast path answers from moves one of
 * the two rows: a purchase, a restock, a closure or expiry (the unit goes back), a window or price edit.
 */
export async function skusChangedSince(
  pool: Pool,
  since: Date,
): Promise<{ skus: { activityId: number; skuId: number }[]; now: Date }> {
  const [[clock]] = await pool.query<RowDataPacket[]>("SELECT NOW(3) AS now");
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT s.activity_id, s.sku_id FROM sale_stock s JOIN activity a ON a.id = s.activity_id
      WHERE ${liveSaleCondition} AND (s.updated_at >= ? OR a.updated_at >= ?)`,
    [since, since],
  );
  return {
    skus: rows.map((row) => ({ activityId: Number(row.activity_id), skuId: Number(row.sku_id) })),
    now: clock.now as Date,
  };
}
