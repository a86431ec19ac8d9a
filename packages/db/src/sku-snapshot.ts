import type { Pool, RowDataPacket } from "mysql2/promise";
import { binlogCoordinates } from "./binlog-source.ts";
import { errnoOf, serverErrors } from "./errors.ts";
import type { Admission } from "./stock.ts";

export interface SkuSnapshot {
  binlogFile: string;
  binlogPos: number;
  available: number;
  priceCents: number;
  currency: string;
  startsAt: Date;
  endsAt: Date;
  rebuyAfterClose: boolean;
  /** How its admitted buyers are answered; null: as the purchase API's PURCHASE_ADMISSION. */
  admission: Admission | null;
  /** Users whose order blocks another purchase (live, or closed without rebuy), ascending. */
  buyers: string[];
  /** Each buyer's order's key (Idempotency-Key), in the order of `buyers`. */
  buyerKeys: string[];
}

/** A rebuild waits this long (s) for a writer of the SKU's rows: a DBA's open transaction fails it, for a later pass. */
const lockWaitS = 2;

/**
 * Reads one SKU as of a known binlog coordinate, so the cache can be rebuilt and then fenced against
 * older CDC events: every event at or before the coordinate must be in what was read. A coordinate read
 * outside the read's own transaction can cover a commit the read cannot see (written to the binlog, not
 * yet committed in InnoDB). So the read first share-locks the rows that every change of this SKU writes
 * — its stock row (a purchase, a restock, a closure by flashgate), its orders' version (a DBA's order
 * edit, through its triggers) and its activity (the window, the price) — which waits for each writer in
 * flight to commit and lets no new one in; then it reads the coordinate, and only then takes its
 * consistent view. Each change of the SKU is thus either committed and seen, or after the coordinate.
 * The locks last the read's few milliseconds; purchases of the SKU wait that long.
 */
export async function readSkuSnapshot(
  pool: Pool,
  activityId: number,
  skuId: number,
): Promise<SkuSnapshot | undefined> {
  const read = await readSku(pool, activityId, skuId);
  return "absent" in read ? undefined : read;
}

/**
 * A SKU MySQL has no sale of, at a binlog coordinate: its stock row is missing, or the activity that row
 * names. No change before the coordinate made it (the read held the missing row's gap).
 */
export interface SkuAbsence {
  absent: "stock" | "activity";
  binlogFile: string;
  binlogPos: number;
}

/** readSkuSnapshot, whose answer for a SKU without a sale is fenced by position too. */
export async function readSku(
  pool: Pool,
  activityId: number,
  skuId: number,
): Promise<SkuSnapshot | SkuAbsence> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await readLocked(pool, activityId, skuId);
    } catch (error) {
      // A deadlock with a DBA's transaction that locks the same rows in another order: this read gave way.
      if (errnoOf(error) !== serverErrors.deadlock || attempt === 3) throw error;
    }
  }
}

async function readLocked(pool: Pool, activityId: number, skuId: number): Promise<SkuSnapshot | SkuAbsence> {
  const connection = await pool.getConnection();
  try {
    await connection.query("SET SESSION innodb_lock_wait_timeout = ?", [lockWaitS]);
    await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    await connection.query("START TRANSACTION");
    try {
      const sku = [activityId, skuId];
      // A missing version row is gap-locked: a DBA's first order edit of the SKU waits too.
      await connection.query(
        "SELECT version FROM sku_orders_version WHERE activity_id = ? AND sku_id = ? LOCK IN SHARE MODE",
        sku,
      );
      const [rows] = await connection.query<RowDataPacket[]>(
        `SELECT s.available, s.price_cents, s.currency, a.starts_at, a.ends_at, a.rebuy_after_close,
                a.admission
           FROM sale_stock s LEFT JOIN activity a ON a.id = s.activity_id WHERE s.activity_id = ? AND s.sku_id = ?
           LOCK IN SHARE MODE`,
        sku,
      );
      const row = rows[0];
      const { file: binlogFile, pos: binlogPos } = await binlogCoordinates(connection);
      // The locking read of a missing row held its gap: an insert of it waits, so comes after this coordinate.
      if (!row) return { absent: "stock", binlogFile, binlogPos };
      if (row.ends_at === null) return { absent: "activity", binlogFile, binlogPos };
      // The consistent view starts here, at the first plain read, after the coordinate.
      const [buyers] = await connection.query<RowDataPacket[]>(
        "SELECT user_id, request_id FROM sale_order WHERE activity_id = ? AND sku_id = ? AND closed_seq = 0 ORDER BY user_id",
        sku,
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
        admission: row.admission ?? null,
        buyers: buyers.map((buyer) => String(buyer.user_id)),
        buyerKeys: buyers.map((buyer) => String(buyer.request_id)),
      };
    } finally {
      await connection.query("COMMIT");
    }
  } finally {
    await connection.query("SET SESSION innodb_lock_wait_timeout = DEFAULT").catch(() => {});
    connection.release();
  }
}
