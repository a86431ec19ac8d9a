import mysql, { type Pool, type PoolOptions } from "mysql2/promise";

/**
 * How long a flashgate statement waits for a row lock (MySQL's default is 50 s): a contended decision
 * fails fast and is retried. One decision can wait more than once, so its client's timeout does not
 * rely on this: it kills what it gave up on (purchase.ts).
 */
export const lockWaitTimeoutS = 3;

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
    connection.query(`SET SESSION innodb_lock_wait_timeout = ${lockWaitTimeoutS}`, () => {});
    // A NULL for a NOT NULL column fails its statement (the decision's priced form relies on it), whatever
    // the server's own sql_mode.
    connection.query(
      "SET SESSION sql_mode = CONCAT(@@SESSION.sql_mode, IF(@@SESSION.sql_mode = '', '', ','), 'STRICT_ALL_TABLES')",
      () => {},
    );
    // A decision batch lists its new buyers with GROUP_CONCAT, 1,024 bytes by default.
    connection.query("SET SESSION group_concat_max_len = 1048576", () => {});
    // Every flashgate transaction that changes a SKU's orders changes its stock row too (migration 004).
    connection.query("SET @flashgate_orders_move_stock = 1", () => {});
  });
  return pool;
}

/** Opens `connections` connections up front so the first burst of a sale does not pay for the handshakes. */
export async function warmPool(pool: Pool, connections: number): Promise<void> {
  const held = await Promise.all(Array.from({ length: connections }, () => pool.getConnection()));
  for (const connection of held) connection.release();
}
