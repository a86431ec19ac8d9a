import type { Pool, RowDataPacket } from "mysql2/promise";
import { binlogCoordinates } from "./binlog-source.ts";

/** Every activity's end and every SKU's sale, read in one consistent view after a binlog coordinate. */
export interface SaleDirectoryRead {
  binlogFile: string;
  binlogPos: number;
  activities: { activityId: number; endsAt: Date }[];
  skus: { activityId: number; skuId: number }[];
}

/**
 * What exists, for the cache's directory of it. The coordinate is read before the view: a change after
 * it is newer than the read and wins over it. Rows are not locked (every purchase writes a stock row):
 * a commit written to the binlog in the instant before the coordinate but not yet visible to the view is
 * missed, and the first load of its SKU, fenced by locks, writes the truth over it.
 */
export async function readSaleDirectory(pool: Pool): Promise<SaleDirectoryRead> {
  const connection = await pool.getConnection();
  try {
    const { file: binlogFile, pos: binlogPos } = await binlogCoordinates(connection);
    await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    await connection.query("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY");
    try {
      const [activities] = await connection.query<RowDataPacket[]>("SELECT id, ends_at FROM activity");
      const [skus] = await connection.query<RowDataPacket[]>("SELECT activity_id, sku_id FROM sale_stock");
      return {
        binlogFile,
        binlogPos,
        activities: activities.map((row) => ({ activityId: Number(row.id), endsAt: row.ends_at as Date })),
        skus: skus.map((row) => ({ activityId: Number(row.activity_id), skuId: Number(row.sku_id) })),
      };
    } finally {
      await connection.query("COMMIT");
    }
  } finally {
    connection.release();
  }
}
