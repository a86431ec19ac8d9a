import type { Pool, ResultSetHeader, RowDataPacket } from "mysql2/promise";

/** A change the cache saw from a lost primary, whose transaction the database no longer holds. */
export interface LostChange {
  gtid: string;
  binlogPosition: string;
  table: string;
  op: "c" | "u" | "d" | "r";
  activityId: number | null;
  skuId: number | null;
  /** A sale_order row's: the order a buyer may have been told about. */
  orderId: string | null;
  userId: number | null;
  committedAtMs: number;
  after: Record<string, unknown> | null;
}

/**
 * The transactions this server has executed, parsed: server uuid → its GTID intervals. Undefined on
 * MariaDB, whose GTIDs (domain-server-sequence) do not name each transaction's server the same way.
 */
export async function executedGtids(pool: Pool): Promise<GtidSet | undefined> {
  const [[version]] = await pool.query<RowDataPacket[]>("SELECT VERSION() AS version");
  if (String(version.version).includes("MariaDB")) return undefined;
  const [[row]] = await pool.query<RowDataPacket[]>("SELECT @@GLOBAL.gtid_executed AS gtids");
  return parseGtidSet(String(row.gtids ?? ""));
}

export type GtidSet = Map<string, [bigint, bigint][]>;

/** MySQL's GTID set text: `uuid:1-5:7,uuid2:1-3` (whitespace and newlines allowed). */
export function parseGtidSet(text: string): GtidSet {
  const set: GtidSet = new Map();
  for (const part of text.replace(/\s/g, "").split(",").filter(Boolean)) {
    const [uuid, ...intervals] = part.toLowerCase().split(":");
    const ranges = set.get(uuid) ?? [];
    for (const interval of intervals) {
      const [start, end = start] = interval.split("-");
      ranges.push([BigInt(start), BigInt(end)]);
    }
    set.set(uuid, ranges);
  }
  return set;
}

/** Whether one GTID (`uuid:n`) is in the set. */
export function holdsGtid(set: GtidSet, gtid: string): boolean {
  const separator = gtid.lastIndexOf(":");
  const ranges = set.get(gtid.slice(0, separator).toLowerCase());
  if (!ranges) return false;
  const number = BigInt(gtid.slice(separator + 1));
  return ranges.some(([start, end]) => number >= start && number <= end);
}

/** Records what was found; a change found before is kept once. Returns how many are new. */
export async function recordLostChanges(pool: Pool, changes: LostChange[]): Promise<number> {
  if (!changes.length) return 0;
  const [result] = await pool.query<ResultSetHeader>(
    `INSERT IGNORE INTO lost_change
       (gtid, binlog_position, table_name, op, activity_id, sku_id, order_id, user_id, committed_at, row_after)
     VALUES ?`,
    [
      changes.map((change) => [
        change.gtid,
        change.binlogPosition,
        change.table,
        change.op,
        change.activityId,
        change.skuId,
        change.orderId,
        change.userId,
        new Date(change.committedAtMs),
        change.after === null ? null : JSON.stringify(change.after),
      ]),
    ],
  );
  return result.affectedRows;
}

export async function countLostChanges(pool: Pool): Promise<number> {
  const [[row]] = await pool.query<RowDataPacket[]>("SELECT COUNT(*) AS changes FROM lost_change");
  return Number(row.changes);
}

/** Every lost change recorded, newest first. */
export async function lostChanges(pool: Pool, options: { limit?: number } = {}): Promise<LostChange[]> {
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT gtid, binlog_position AS binlogPosition, table_name AS \`table\`, op, activity_id AS activityId,
            sku_id AS skuId, order_id AS orderId, user_id AS userId, committed_at AS committedAt,
            row_after AS after
       FROM lost_change ORDER BY committed_at DESC, gtid, binlog_position LIMIT ?`,
    [options.limit ?? 1000],
  );
  return rows.map((row) => ({
    gtid: String(row.gtid),
    binlogPosition: String(row.binlogPosition),
    table: String(row.table),
    op: row.op,
    activityId: row.activityId === null ? null : Number(row.activityId),
    skuId: row.skuId === null ? null : Number(row.skuId),
    orderId: row.orderId,
    userId: row.userId === null ? null : Number(row.userId),
    committedAtMs: (row.committedAt as Date).getTime(),
    after: typeof row.after === "string" ? JSON.parse(row.after) : row.after,
  }));
}
