import type { Connection, Pool, PoolConnection, RowDataPacket } from "mysql2/promise";

export interface ReplicaStatus {
  sourcePort: number;
  receiving: boolean;
  applying: boolean;
  /** Seconds the applier is behind the source's commit times; null while it does not apply. */
  secondsBehind: number | null;
  /** The last error of either thread, while that thread is stopped. */
  error?: string;
}

/** How a MySQL server replicates (SHOW REPLICA STATUS), or undefined if it is no replica. */
export async function readReplicaStatus(
  db: Pool | PoolConnection | Connection,
): Promise<ReplicaStatus | undefined> {
  const [[status]] = await db.query<RowDataPacket[]>("SHOW REPLICA STATUS");
  if (!status) return undefined;
  const receiving = status.Replica_IO_Running === "Yes";
  const applying = status.Replica_SQL_Running === "Yes";
  const error = (!receiving && status.Last_IO_Error) || (!applying && status.Last_SQL_Error) || undefined;
  return {
    sourcePort: Number(status.Source_Port),
    receiving,
    applying,
    secondsBehind: status.Seconds_Behind_Source === null ? null : Number(status.Seconds_Behind_Source),
    ...(error ? { error: String(error) } : {}),
  };
}
