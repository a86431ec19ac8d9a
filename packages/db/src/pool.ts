import mysql, { type Pool, type PoolOptions } from "mysql2/promise";

/** DATETIME(3) values travel as UTC; the session time zone is pinned so NOW(3) agrees with JavaScript dates. */
export function createPool(url: string, options: Partial<PoolOptions> = {}): Pool {
  return mysql.createPool({
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
}
