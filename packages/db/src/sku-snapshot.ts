import type { Pool, RowDataPacket } from "mysql2/promise";
import { binlogCoordinates } from "./binlog-source.ts";

export interface SkuSnapshot {
  binlogFile: string;
  binlogPos: number;
  available: number;
  priceCents: number;
  currency: string;
  startsAt: Date;
  endsAt: Date;
  rebuyAfterClose: boolean;
  /** Users whose order blocks another purchase (live, or closed without rebuy), ascending. */
  buyers: string[];
}

/**
 * Reads one SKU as of a known binlog coordinate, so the cache can be rebuilt and then fenced against
 * older CDC events. On MariaDB the coordinate is exact (binlog_snapshot_*, taken with the consistent
 * snapshot); elsewhere the coordinate read just before the snapshot is used, which is earlier or equal,
 * and re-applying the events in between is harmless because every change carries its full after-image.
 */
export async function readSkuSnapshot(
  pool: Pool,
  activityId: number,
  skuId: number,
): Promise<SkuSnapshot | undefined> {
  const connection = await pool.getConnection();
  try {
    const before = await binlogCoordinates(connection);
    await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    await connection.query("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY");
    try {
      const [status] = await connection.query<RowDataPacket[]>("SHOW STATUS LIKE 'binlog_snapshot_%'");
      const exact = Object.fromEntries(status.map((row) => [row.Variable_name, row.Value]));
      const binlogFile: string = exact.Binlog_snapshot_file || before.file;
      const binlogPos = Number(exact.Binlog_snapshot_position || before.pos);
      const [rows] = await connection.query<RowDataPacket[]>(
        `SELECT s.available, s.price_cents, s.currency, a.starts_at, a.ends_at, a.rebuy_after_close
           FROM sale_stock s JOIN activity a ON a.id = s.activity_id WHERE s.activity_id = ? AND s.sku_id = ?`,
        [activityId, skuId],
      );
      const row = rows[0];
      if (!row) return undefined;
      const [buyers] = await connection.query<RowDataPacket[]>(
        "SELECT user_id FROM sale_order WHERE activity_id = ? AND sku_id = ? AND closed_seq = 0 ORDER BY user_id",
        [activityId, skuId],
      );
      return {
        binlogFile,
        binlogPos,
        available: Number(row.available),
        priceCents: Number(row.price_cents),
        currency: row.currency,
        startsAt: row.starts_at,
        endsAt: row.ends_at,
        rebuyAfterClose: Boolean(row.rebuy_after_close),
        buyers: buyers.map((buyer) => String(buyer.user_id)),
      };
    } finally {
      await connection.query("COMMIT");
    }
  } finally {
    connection.release();
  }
}
