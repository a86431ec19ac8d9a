import type { Pool, RowDataPacket } from "mysql2/promise";

/** A SKU of a live or recently ended sale: what the cache holds and the drift check compares. */
export const liveSaleCondition = "a.ends_at > NOW(3) - INTERVAL 1 DAY";

/** SKUs of live or recently ended sales (one activity's, if given), newest sales first. */
export async function liveSkus(
  pool: Pool,
  options: { activityId?: number; limit?: number } = {},
): Promise<{ activityId: number; skuId: number }[]> {
  const { activityId, limit } = options;
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT s.activity_id, s.sku_id FROM sale_stock s JOIN activity a ON a.id = s.activity_id
      WHERE ${liveSaleCondition} ${activityId ? "AND s.activity_id = ?" : ""}
      ORDER BY a.starts_at DESC, s.activity_id DESC, s.sku_id ${limit ? "LIMIT ?" : ""}`,
    [activityId, limit].filter((value) => value !== undefined),
  );
  return rows.map((row) => ({ activityId: Number(row.activity_id), skuId: Number(row.sku_id) }));
}
