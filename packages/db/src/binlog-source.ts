import type { Pool, PoolConnection, RowDataPacket } from "mysql2/promise";
import { errnoOf, serverErrors } from "./errors.ts";

export interface BinlogCoordinates {
  file: string;
  pos: number;
}

export interface BinlogSource extends BinlogCoordinates {
  /** Which server writes this binlog: server_id, and server_uuid where the server has one (MySQL). */
  identity: string;
}

/** MySQL 8.4 removed SHOW MASTER STATUS for SHOW BINARY LOG STATUS, which MariaDB and MySQL 8.0 lack. */
let statusStatement = "SHOW MASTER STATUS";

/** Where the binlog stands now: the one place that asks the server for it. */
export async function binlogCoordinates(db: Pool | PoolConnection): Promise<BinlogCoordinates> {
  let status: RowDataPacket[];
  try {
    [status] = await db.query<RowDataPacket[]>(statusStatement);
  } catch (error) {
    if (statusStatement === "SHOW BINARY LOG STATUS" || errnoOf(error) !== serverErrors.parse) throw error;
    statusStatement = "SHOW BINARY LOG STATUS";
    [status] = await db.query<RowDataPacket[]>(statusStatement);
  }
  if (!status[0]) throw new Error("binary logging is off: the cache cannot be fenced by position");
  return { file: String(status[0].File), pos: Number(status[0].Position) };
}

/** The server the binlog comes from and where it stands now. */
export async function readBinlogSource(pool: Pool): Promise<BinlogSource> {
  const [variables] = await pool.query<RowDataPacket[]>(
    "SHOW VARIABLES WHERE Variable_name IN ('server_id', 'server_uuid')",
  );
  const value = (name: string) => variables.find((row) => row.Variable_name === name)?.Value ?? "";
  return { identity: `${value("server_id")}/${value("server_uuid")}`, ...(await binlogCoordinates(pool)) };
}
