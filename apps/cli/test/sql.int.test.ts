import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPool, dbaDbUser, placeOrder } from "@flashgate/db";
import { adminConnection } from "@flashgate/stack";
import {
  type AppProcess,
  cachedAvailable,
  clients,
  createSale,
  eventually,
  expectConverged,
  freshIds,
  skuInDatabase,
  stackEnv,
  startMaintainer,
  testContext,
} from "@flashgate/testkit";
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { flashgate, flashgateBin } from "./cli.ts";

describe("flashgate sql: the DBA's seat", () => {
  const c = clients();
  /** User 7's PENDING order of the SKU, inserted as raw SQL does it (no unit taken from the stock row). */
  const pendingOrderOfUser7 = (sale: { activityId: number; skuId: number }, key: string) =>
    c.pool.query(
      `INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
       VALUES (?, ?, ?, 7, 'PENDING', 1999, 'EUR', NOW(3), NOW(3) + INTERVAL 15 MINUTE)`,
      [key, sale.activityId, sale.skuId],
    );
  let maintainer: AppProcess;
  beforeAll(async () => {
    maintainer = await startMaintainer();
  });
  afterAll(async () => {
    await maintainer.kill();
    await c.close();
  });

  it("runs statements as the DBA account, which may change the sale tables' rows and nothing else", async () => {
    const who = await flashgate("sql", "-e", "SELECT CURRENT_USER() AS who");
    expect(who.code).toBe(0);
    expect(who.stdout).toMatch(/flashgate_dba@/);
    const refused = [
      "SELECT COUNT(*) FROM mysql.user",
      "INSERT INTO debezium_signal (id, type, data) VALUES ('x', 'execute-snapshot', '{}')",
      "UPDATE cdc_heartbeat SET beat_at = NOW(3)",
      "SELECT * FROM schema_migrations",
      "CREATE TABLE dba_scratch (id INT)",
      "DROP TABLE sale_order",
      "GRANT SELECT ON flashgate.sale_stock TO 'flashgate'@'%'",
      "DELETE FROM stock_ledger",
      "DELETE FROM payment_event",
      "UPDATE sku_orders_version SET version = 0",
    ];
    for (const statement of refused) {
      const result = await flashgate("sql", "-e", statement);
      expect(result.code, statement).not.toBe(0);
      expect(result.stderr, statement).toMatch(/denied/i);
    }
  });

  it("a restock and a closure by SQL, as the README shows them, reach the cache", async () => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 1 });
    await pendingOrderOfUser7(sale, `dba-${sale.activityId}`);
    await c.pool.query("UPDATE sale_stock SET available = 0 WHERE activity_id = ? AND sku_id = ?", [
      sale.activityId,
      sale.skuId,
    ]);
    await expectConverged(c, sale.activityId, sale.skuId);
    const where = `activity_id = ${sale.activityId} AND sku_id = ${sale.skuId}`;
    const restock = await flashgate(
      "sql",
      "-e",
      `UPDATE sale_stock SET available = available + 10 WHERE ${where}`,
    );
    expect(restock.code).toBe(0);
    await eventually(async () =>
      expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(10),
    );
    // A closure: the order and its unit back, in one transaction, from a file.
    const file = join(mkdtempSync(join(tmpdir(), "fg-sql-")), "close.sql");
    writeFileSync(
      file,
      `START TRANSACTION;
UPDATE sale_order SET state = 'CLOSED' WHERE ${where} AND user_id = 7 AND state = 'PENDING';
SET @closed = ROW_COUNT();
UPDATE sale_stock SET available = available + @closed WHERE ${where};
COMMIT;
`,
    );
    expect((await flashgate("sql", file)).code).toBe(0);
    expect(await skuInDatabase(c.pool, sale.activityId, sale.skuId)).toMatchObject({
      available: 11,
      closed: 1,
    });
    await expectConverged(c, sale.activityId, sale.skuId);
    expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(11);
  });

  it("a DBA's closure left open in a transaction locks the orders it closed, not the SKU's range: its buyers still buy", async () => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 5 });
    await pendingOrderOfUser7(sale, `dba-open-${sale.activityId}`);
    const dba = spawn(process.execPath, [flashgateBin, "sql"], {
      env: { ...process.env, ...stackEnv() },
      stdio: ["pipe", "ignore", "inherit"],
    });
    const exited = new Promise((resolve) => dba.once("exit", resolve));
    const admin = await adminConnection(testContext());
    try {
      dba.stdin.write(`START TRANSACTION;
UPDATE sale_order SET state = 'CLOSED' WHERE activity_id = ${sale.activityId} AND sku_id = ${sale.skuId} AND state = 'PENDING';
`);
      await eventually(async () => {
        const [[open]] = await admin.query<RowDataPacket[]>(
          `SELECT COUNT(*) AS n FROM information_schema.innodb_trx t
             JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
            WHERE p.USER = ? AND t.trx_rows_modified = 1`,
          [dbaDbUser],
        );
        expect(Number(open.n)).toBe(1);
      });
      const buyer = { ...sale, userId: "8", requestId: `dba-open-buyer-${sale.activityId}` };
      const decisions = createPool(stackEnv().DATABASE_URL, { connectionLimit: 1, multipleStatements: true });
      try {
        expect((await placeOrder(decisions, buyer)).kind).toBe("created");
      } finally {
        await decisions.end();
      }
    } finally {
      dba.stdin.end("ROLLBACK;\n");
      await exited;
      await admin.end();
    }
    expect(await skuInDatabase(c.pool, sale.activityId, sale.skuId)).toMatchObject({
      available: 4,
      pending: 2,
    });
  });

  it("stamps times in UTC, as the apps do, on a server whose own time zone is not", async () => {
    const admin = await adminConnection(testContext());
    try {
      const [[before]] = await admin.query<RowDataPacket[]>("SELECT @@GLOBAL.time_zone AS zone");
      await admin.query("SET GLOBAL time_zone = '+05:00'");
      try {
        // NOW() as the DBA's session sees it, against UTC: equal only in a UTC session.
        const clock = await flashgate(
          "sql",
          "-e",
          "SELECT TIMESTAMPDIFF(MINUTE, UTC_TIMESTAMP(), NOW()) AS ahead_minutes",
        );
        expect(clock.code).toBe(0);
        expect(clock.stdout).toMatch(/ahead_minutes\s+0\s*$/);
      } finally {
        await admin.query("SET GLOBAL time_zone = ?", [before.zone]);
      }
      const [[after]] = await admin.query<RowDataPacket[]>("SELECT @@GLOBAL.time_zone AS zone");
      expect(after.zone).toBe(before.zone);
    } finally {
      await admin.end();
    }
  });
});
