import mysql, { type Pool, type PoolOptions } from "mysql2/promise";

/** DATETIME(3) values travel as UTC; the session time zone is pinned so NOW(3) agrees with JavaScript dates. */
export function createPool(url: string, options: Partial<PoolOptions> = {}): Pool {
  const pool = mysql.createPool({
    uri: url,
    connectionLimit: 8,
    timezone: "Z",
    dateStrings: false,
    supportBigNumbers: true,
    bigNumberStrings: false,
    enableKeepAlive: true,
    connectTimeout: 2000,
    ...options,
  });
  // READ COMMITTED: purchase inserts take no gap locks, so buyers of one SKU do not block each other.
  pool.pool.on("connection", (connection) => {
    connection.query("SET SESSION time_zone = '+00:00'", () => {});
    connection.query("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", () => {});
  });
  return pool;
}
