import type { Pool, RowDataPacket } from "mysql2/promise";
import { skuKeys } from "./keys.ts";
import type { FlashgateRedis } from "./scripts.ts";

export interface SkuComparison {
  database: { available: number; buyers: string[] } | undefined;
  cache: { available: number; buyers: string[]; position: string } | undefined;
  equal: boolean;
}

/** MySQL's available count and blocking buyers beside Redis's. Equal means the cache tells the truth. */
export async function compareSku(
  pool: Pool,
  redis: FlashgateRedis,
  activityId: number,
  skuId: number,
): Promise<SkuComparison> {
  const [stock] = await pool.query<RowDataPacket[]>(
    "SELECT available FROM sale_stock WHERE activity_id = ? AND sku_id = ?",
    [activityId, skuId],
  );
  const [buyers] = await pool.query<RowDataPacket[]>(
    "SELECT user_id FROM sale_order WHERE activity_id = ? AND sku_id = ? AND closed_seq = 0 ORDER BY user_id",
    [activityId, skuId],
  );
  const keys = skuKeys(activityId, skuId);
  const [hash, members] = await Promise.all([
    redis.hmget(keys.sku, "available", "pos"),
    redis.smembers(keys.buyers),
  ]);
  const database = stock[0]
    ? { available: Number(stock[0].available), buyers: buyers.map((row) => String(row.user_id)) }
    : undefined;
  const cache =
    hash[0] !== null
      ? {
          available: Number(hash[0]),
          buyers: members.sort((a, b) => Number(a) - Number(b)),
          position: String(hash[1]),
        }
      : undefined;
  const equal =
    database === undefined
      ? cache === undefined
      : cache !== undefined &&
        cache.available === database.available &&
        cache.buyers.join(",") === database.buyers.join(",");
  return { database, cache, equal };
}
