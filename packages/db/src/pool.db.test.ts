import { fastDatabaseUrl, testEngine } from "@flashgate/testkit";
import type { Pool, RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isConnectionLoss, isDatabaseUnavailable } from "./errors.ts";
import { createPool, warmPool } from "./pool.ts";

describe("the pool every app uses, on the database alone", () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(fastDatabaseUrl(), { connectionLimit: 2 });
  });
  afterAll(async () => pool.end());

  it("pins each session to UTC and READ COMMITTED", async () => {
    // Both statements run when the connection opens; a query on every connection of the pool sees them.
    await warmPool(pool, 2);
    const sessions = await Promise.all(
      [0, 1].map(async () => {
        const connection = await pool.getConnection();
        try {
          const [rows] = await connection.query<RowDataPacket[]>(
            // MariaDB 10.11 still names it tx_isolation; MySQL 8 only transaction_isolation.
            `SELECT @@session.time_zone AS zone, @@session.${testEngine === "mariadb" ? "tx_isolation" : "transaction_isolation"} AS isolation`,
          );
          return [rows[0].zone, rows[0].isolation];
        } finally {
          connection.release();
        }
      }),
    );
    expect(sessions).toEqual([
      ["+00:00", "READ-COMMITTED"],
      ["+00:00", "READ-COMMITTED"],
    ]);
  });

  it("reads DATETIME as UTC dates and integers past 2^53 as exact strings", async () => {
    const [rows] = await pool.query<RowDataPacket[]>(
      "SELECT CAST('2026-12-01 10:20:30.456' AS DATETIME(3)) AS at, CAST(9007199254740993 AS UNSIGNED) AS big, CAST(42 AS UNSIGNED) AS small",
    );
    expect(rows[0].at).toBeInstanceOf(Date);
    expect((rows[0].at as Date).toISOString()).toBe("2026-12-01T10:20:30.456Z");
    expect([rows[0].big, rows[0].small]).toEqual(["9007199254740993", 42]);
    // A JavaScript date written is the same instant read back.
    const [echo] = await pool.query<RowDataPacket[]>("SELECT CAST(? AS DATETIME(3)) AS at", [
      new Date("2026-12-01T23:59:58.125Z"),
    ]);
    expect((echo[0].at as Date).toISOString()).toBe("2026-12-01T23:59:58.125Z");
  });

  it("a database nobody answers is unavailable (503), not a lost connection", async () => {
    const dead = createPool("mysql://nobody:nothing@127.0.0.1:1/flashgate", { connectionLimit: 1 });
    try {
      const refused = await dead.query("SELECT 1").catch((error: unknown) => error);
      expect([isDatabaseUnavailable(refused), isConnectionLoss(refused)]).toEqual([true, false]);
    } finally {
      await dead.end();
    }
  });
});
