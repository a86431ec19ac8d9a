import { randomUUID } from "node:crypto";
import type { Connection, RowDataPacket } from "mysql2/promise";

export interface SnapshotRequest {
  database: string;
  table: string;
  /** An SQL condition on the table's rows, e.g. "activity_id = 42". */
  where?: string;
}

const identifier = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/**
 * Asks Debezium for an incremental snapshot through the signal table: the connector reads the signal
 * from the binlog and re-emits the rows (op=r) in chunks between watermarks, interleaved safely with
 * live changes. The signal table is written with an operator's account: the apps may not write it.
 */
export async function requestIncrementalSnapshot(db: Connection, request: SnapshotRequest): Promise<string> {
  if (!identifier.test(request.database) || !identifier.test(request.table))
    throw new Error(`invalid table name ${request.table}`);
  const collection = `${request.database}.${request.table}`;
  const data: Record<string, unknown> = { "data-collections": [collection], type: "incremental" };
  if (request.where)
    data["additional-conditions"] = [{ "data-collection": collection, filter: request.where }];
  const id = randomUUID();
  await db.query("INSERT INTO debezium_signal (id, type, data) VALUES (?, 'execute-snapshot', ?)", [
    id,
    JSON.stringify(data),
  ]);
  return id;
}

/** Watermark rows Debezium has written so far: each closed window is one chunk done. Follow its growth. */
export async function closedSnapshotWindows(db: Connection): Promise<number> {
  const [rows] = await db.query<RowDataPacket[]>(
    "SELECT COUNT(*) AS n FROM debezium_signal WHERE type = 'snapshot-window-close'",
  );
  return Number(rows[0]?.n ?? 0);
}
