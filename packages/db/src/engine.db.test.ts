import { databaseName, dbaDbUser, debeziumDbUser, maintainerDbUser } from "@flashgate/db";
import { adminConnection } from "@flashgate/stack";
import { failureOf, fastDatabaseUrl, fastTierContext, freshIds, testEngine } from "@flashgate/testkit";
import mysql, { type Connection, type Pool, type RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binlogCoordinates } from "./binlog-source.ts";
import { isDatabaseUnavailable, isDuplicateKey, isRowRefused, serverErrors } from "./errors.ts";
import { migrate } from "./migrate.ts";
import { readMigrations } from "./migrations.ts";
import { createPool } from "./pool.ts";

const engine = testEngine;

/** Privileges granted ON *.* to a user, as a sorted list (MariaDB names REPLICATION CLIENT "BINLOG MONITOR"). */
async function globalPrivileges(admin: Connection, user: string): Promise<string[]> {
  const [rows] = await admin.query<RowDataPacket[]>("SHOW GRANTS FOR ?@'%'", [user]);
  // MySQL lists dynamic privileges (FLUSH_TABLES…) on a line of their own.
  const lists = rows.map((row) => /^GRANT (.+) ON \*\.\* TO /.exec(String(Object.values(row)[0]))?.[1] ?? "");
  return lists
    .join(",")
    .split(",")
    .map((privilege) => privilege.trim().replace("BINLOG MONITOR", "REPLICATION CLIENT"))
    .filter((privilege) => privilege !== "USAGE" && privilege !== "")
    .sort();
}

/** The statement fails with the server's error `errno` (an account's refusal), run as `session`. */
async function expectRefused(session: Connection | Pool, statement: string, errno: number) {
  const refused = await failureOf(session.query(statement));
  expect((refused as { errno?: number }).errno, statement).toBe(errno);
}

describe(`the database as flashgate needs it (${engine})`, () => {
  let admin: Connection;
  let app: Pool;
  beforeAll(async () => {
    admin = await adminConnection(fastTierContext());
    await admin.query(`USE ${databaseName}`);
    app = createPool(fastDatabaseUrl(), { connectionLimit: 4 });
  });
  afterAll(async () => {
    await app.end();
    await admin.end();
  });

  it("logs every committed row change in full, synced to disk at each commit; GTIDs on MySQL", async () => {
    const [rows] = await admin.query<RowDataPacket[]>(
      `SHOW GLOBAL VARIABLES WHERE Variable_name IN ('version', 'log_bin', 'binlog_format', 'binlog_row_image',
        'sync_binlog', 'innodb_flush_log_at_trx_commit', 'gtid_mode', 'enforce_gtid_consistency')`,
    );
    const settings = Object.fromEntries(rows.map((row) => [row.Variable_name, String(row.Value)]));
    expect(settings).toMatchObject({
      log_bin: "ON",
      binlog_format: "ROW",
      binlog_row_image: "FULL",
      sync_binlog: "1",
      innodb_flush_log_at_trx_commit: "1",
    });
    if (engine === "mysql") {
      expect(settings.version).toMatch(/^8\./);
      expect(settings).toMatchObject({ gtid_mode: "ON", enforce_gtid_consistency: "ON" });
    } else {
      expect(settings.version).toMatch(/MariaDB/);
    }
  });

  it("gives Debezium exactly its documented grants, the API only the binlog coordinates, and the maintainer the open transactions too", async () => {
    expect(await globalPrivileges(admin, "debezium")).toEqual(
      [
        "LOCK TABLES",
        engine === "mysql" ? "FLUSH_TABLES" : "RELOAD",
        "REPLICATION CLIENT",
        "REPLICATION SLAVE",
        "SHOW DATABASES",
      ].sort(),
    );
    expect(await globalPrivileges(admin, "flashgate")).toEqual(["REPLICATION CLIENT"]);
    expect(await globalPrivileges(admin, maintainerDbUser)).toEqual(["PROCESS", "REPLICATION CLIENT"]);
    const coordinates = await binlogCoordinates(app);
    expect(coordinates.file).toMatch(/\.\d+$/);
    expect(coordinates.pos).toBeGreaterThan(0);
    if (engine === "mysql") {
      const [users] = await admin.query<RowDataPacket[]>(
        "SELECT user, plugin FROM mysql.user WHERE user IN ('debezium', 'flashgate', ?) ORDER BY user",
        [maintainerDbUser],
      );
      expect(users.map((row) => [row.user, row.plugin])).toEqual([
        ["debezium", "caching_sha2_password"],
        ["flashgate", "caching_sha2_password"],
        [maintainerDbUser, "caching_sha2_password"],
      ]);
    }
  });

  /** A session of one of the accounts the migrations made, on the fast tier's database. */
  const sessionAs = (user: string, password: string) =>
    mysql.createConnection({
      host: "127.0.0.1",
      port: Number(fastTierContext().config.FLASHGATE_DB_PORT),
      user,
      password,
      database: databaseName,
    });

  it("lets Debezium read the sale database and the binlog, and no other database", async () => {
    const debezium = await sessionAs(debeziumDbUser, fastTierContext().secrets.debeziumDbPassword);
    try {
      await debezium.query("SELECT COUNT(*) FROM sale_order");
      await debezium.query("SHOW BINARY LOGS");
      await expectRefused(debezium, "SELECT COUNT(*) FROM mysql.user", serverErrors.tableAccessDenied);
      // On MySQL no RELOAD: the binlog's history is not Debezium's to wipe (MariaDB has no narrower grant).
      if (engine === "mysql")
        for (const statement of ["RESET MASTER", "FLUSH BINARY LOGS"])
          await expectRefused(debezium, statement, serverErrors.specificAccessDenied);
    } finally {
      await debezium.end();
    }
  });

  it("lets a DBA change the sale rows and add a ledger line, never rewrite an audit, payment or version row", async () => {
    const dba = await sessionAs(dbaDbUser, fastTierContext().secrets.dbaDbPassword);
    try {
      await dba.query("UPDATE sale_stock SET available = available WHERE activity_id = 0");
      await dba.query("DELETE FROM sale_order WHERE activity_id = 0");
      await dba.query(
        "INSERT INTO stock_ledger (activity_id, sku_id, delta, available_after, reason, operator) VALUES (0, 0, 0, 0, 'a note', 'dba')",
      );
      for (const statement of [
        "UPDATE stock_ledger SET reason = 'rewritten' WHERE activity_id = 0",
        "DELETE FROM stock_ledger WHERE activity_id = 0",
        "DELETE FROM payment_event WHERE order_id = 'x'",
        "UPDATE payment_event SET order_id = 'x' WHERE order_id = 'y'",
        "UPDATE sku_orders_version SET version = 0 WHERE activity_id = 0",
      ])
        await expectRefused(dba, statement, serverErrors.tableAccessDenied);
    } finally {
      await dba.end();
    }
  });

  it("lets the API write what it writes, and never delete a row, rewrite an audit line or touch what is the maintainer's", async () => {
    await app.query("UPDATE sale_order SET state = state WHERE activity_id = 0");
    await app.query("SELECT COUNT(*) FROM payment_event");
    for (const statement of [
      "INSERT INTO cdc_heartbeat (id, beat_at) VALUES (1, NOW(3)) ON DUPLICATE KEY UPDATE beat_at = NOW(3)",
      "SELECT COUNT(*) FROM lost_change",
      "INSERT INTO lost_change (gtid, binlog_position, table_name, op, committed_at) VALUES ('x', 'y', 't', 'c', NOW(3))",
      "INSERT INTO debezium_signal (id, type, data) VALUES ('x', 'execute-snapshot', '{}')",
      "DELETE FROM payment_event WHERE order_id = 'x'",
      "UPDATE payment_event SET order_id = 'x' WHERE order_id = 'y'",
      "DELETE FROM stock_ledger WHERE activity_id = 0",
      "UPDATE stock_ledger SET reason = 'rewritten' WHERE activity_id = 0",
      "DELETE FROM sale_order WHERE activity_id = 0",
      "DELETE FROM sale_stock WHERE activity_id = 0",
      "DELETE FROM activity WHERE id = 0",
      "DELETE FROM lost_change WHERE gtid = 'x'",
      "UPDATE lost_change SET op = 'd' WHERE gtid = 'x'",
      "UPDATE sku_orders_version SET version = 0 WHERE activity_id = 0",
      "SELECT COUNT(*) FROM schema_migrations",
    ])
      await expectRefused(app, statement, serverErrors.tableAccessDenied);
    // Other sessions' open transactions are the maintainer's to read (PROCESS).
    await expectRefused(
      app,
      "SELECT COUNT(*) FROM information_schema.innodb_trx",
      serverErrors.specificAccessDenied,
    );
  });

  it("lets the maintainer read, expire orders and record its findings, and write nothing else", async () => {
    const maintainer = createPool(fastDatabaseUrl("maintainer"), { connectionLimit: 1 });
    try {
      await maintainer.query(
        "INSERT INTO cdc_heartbeat (id, beat_at) VALUES (1, NOW(3)) ON DUPLICATE KEY UPDATE beat_at = NOW(3)",
      );
      await maintainer.query("UPDATE sale_order SET state = state WHERE activity_id = 0");
      await maintainer.query("UPDATE sale_stock SET available = available WHERE activity_id = 0");
      await maintainer.query("SELECT COUNT(*) FROM lost_change");
      await maintainer.query("SELECT COUNT(*) FROM information_schema.innodb_trx");
      await binlogCoordinates(maintainer);
      for (const statement of [
        "INSERT INTO sale_order (order_id, request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at) VALUES ('x', 'x', 0, 0, 0, 'PENDING', 1, 'EUR', NOW(3), NOW(3))",
        "INSERT INTO sale_stock (activity_id, sku_id, available, price_cents, currency) VALUES (0, 0, 1, 1, 'EUR')",
        "UPDATE activity SET name = name WHERE id = 0",
        "SELECT COUNT(*) FROM payment_event",
        "INSERT INTO stock_ledger (activity_id, sku_id, delta, available_after, reason, operator) VALUES (0, 0, 0, 0, 'x', 'x')",
        "DELETE FROM sale_order WHERE activity_id = 0",
        "UPDATE lost_change SET op = 'd' WHERE gtid = 'x'",
        "SELECT COUNT(*) FROM schema_migrations",
      ])
        await expectRefused(maintainer, statement, serverErrors.tableAccessDenied);
    } finally {
      await maintainer.end();
    }
  });

  it("migrates again without changing anything, and refuses names that are not plain identifiers", async () => {
    const ctx = fastTierContext();
    const options = {
      database: databaseName,
      appUser: { name: "flashgate", password: ctx.secrets.appDbPassword },
      maintainerUser: { name: maintainerDbUser, password: ctx.secrets.maintainerDbPassword },
      debeziumUser: { name: "debezium", password: ctx.secrets.debeziumDbPassword },
    };
    const grantsBefore = await globalPrivileges(admin, "flashgate");
    expect(await migrate(admin, options)).toEqual({ applied: [] });
    expect(await globalPrivileges(admin, "flashgate")).toEqual(grantsBefore);
    await app.query("SELECT COUNT(*) FROM sale_order");
    for (const bad of ["flash gate", "x`; DROP TABLE t; --", ""])
      await expect(migrate(admin, { ...options, database: bad })).rejects.toThrow(/invalid identifier/);
    await admin.query(`USE ${databaseName}`);
  });

  it("migrates a new database from nothing: every migration once, in order, and the app's grants on its tables", async () => {
    const ctx = fastTierContext();
    const scratch = `flashgate_new_${Date.now()}`;
    const applied: number[] = [];
    try {
      const result = await migrate(admin, {
        database: scratch,
        appUser: { name: "flashgate", password: ctx.secrets.appDbPassword },
        maintainerUser: { name: maintainerDbUser, password: ctx.secrets.maintainerDbPassword },
        debeziumUser: { name: "debezium", password: ctx.secrets.debeziumDbPassword },
        onApplied: (migration) => applied.push(migration.version),
      });
      expect(result).toEqual({ applied: [1, 2, 3, 4, 5, 6] });
      expect(applied).toEqual([1, 2, 3, 4, 5, 6]);
      const [recorded] = await admin.query<RowDataPacket[]>(
        `SELECT version FROM ${scratch}.schema_migrations ORDER BY version`,
      );
      expect(recorded.map((row) => row.version)).toEqual([1, 2, 3, 4, 5, 6]);
      const [orderColumns] = await admin.query<RowDataPacket[]>(
        "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = ? AND table_name = 'sale_order' ORDER BY ordinal_position LIMIT 2",
        [scratch],
      );
      expect(orderColumns.map((row) => row.name)).toEqual(["order_id", "request_id"]);
      await app.query(`SELECT COUNT(*) FROM ${scratch}.sale_order`);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${scratch}`);
      await admin.query(`USE ${databaseName}`);
    }
  });

  it("scopes keys to users on an old schema: its orders keep their keys as ids, and a second run changes nothing", async () => {
    const scratch = `flashgate_upgrade_${Date.now()}`;
    const [before, upgrade] = [readMigrations().filter(({ version }) => version < 3), readMigrations()[2]];
    await admin.query(`CREATE DATABASE ${scratch}`);
    try {
      await admin.query(`USE ${scratch}`);
      for (const statement of before.flatMap((migration) => migration.statements))
        await admin.query(statement);
      await admin.query(
        `INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
         VALUES ('old-key-1', 1, 1, 7, 'PENDING', 100, 'EUR', NOW(3), NOW(3)), ('old-key-2', 1, 1, 8, 'PAID', 100, 'EUR', NOW(3), NOW(3))`,
      );
      await admin.query(
        "INSERT INTO payment_event (event_id, request_id, status, amount_cents, currency, outcome) VALUES ('e1', 'old-key-2', 'SUCCEEDED', 100, 'EUR', 'PAID')",
      );
      for (let run = 0; run < 2; run++)
        for (const statement of upgrade.statements) await admin.query(statement);
      const [orders] = await admin.query<RowDataPacket[]>(
        "SELECT order_id, request_id FROM sale_order ORDER BY 1",
      );
      expect(orders.map((row) => [row.order_id, row.request_id])).toEqual([
        ["old-key-1", "old-key-1"],
        ["old-key-2", "old-key-2"],
      ]);
      const [payments] = await admin.query<RowDataPacket[]>("SELECT order_id FROM payment_event");
      expect(payments.map((row) => row.order_id)).toEqual(["old-key-2"]);
      // The same key from another user is another order, with an id of the database's making.
      await admin.query(
        `INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
         VALUES ('old-key-1', 1, 1, 9, 'PENDING', 100, 'EUR', NOW(3), NOW(3))`,
      );
      const [fresh] = await admin.query<RowDataPacket[]>("SELECT order_id FROM sale_order WHERE user_id = 9");
      expect(fresh[0].order_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      const again = await failureOf(
        admin.query(
          `INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
           VALUES ('old-key-1', 2, 2, 9, 'PENDING', 100, 'EUR', NOW(3), NOW(3))`,
        ),
      );
      expect(isDuplicateKey(again)).toBe(true);
    } finally {
      await admin.query(`DROP DATABASE ${scratch}`);
      await admin.query(`USE ${databaseName}`);
    }
  });

  it("never lets a failed user statement carry a password", async () => {
    const password = `never-printed-${Date.now()}-0123456789abcdef`;
    // An account that owns the database but may not create users: the user step's first statement fails.
    await admin.query(
      "CREATE USER IF NOT EXISTS 'migrator'@'%' IDENTIFIED BY 'migrator-password-0123456789'",
    );
    await admin.query(`GRANT ALL ON ${databaseName}.* TO 'migrator'@'%'`);
    const appConnection = await mysql.createConnection({
      host: "127.0.0.1",
      port: Number(new URL(fastDatabaseUrl()).port),
      user: "migrator",
      password: "migrator-password-0123456789",
    });
    try {
      const failure = await failureOf(
        migrate(appConnection, {
          database: databaseName,
          appUser: { name: "flashgate", password },
          maintainerUser: { name: maintainerDbUser, password },
          debeziumUser: { name: "debezium", password },
        }),
      );
      expect(failure).toBeInstanceOf(Error);
      expect((failure as Error).message).toMatch(/cannot create or update database user flashgate/);
      expect(JSON.stringify(failure, Object.getOwnPropertyNames(failure))).not.toContain(password);
      expect(String((failure as Error).stack)).not.toContain(password);
    } finally {
      await appConnection.end();
    }
  });

  it("refuses a negative stock by its CHECK constraint, whoever writes it", async () => {
    const { activityId, skuId } = freshIds();
    await app.query(
      "INSERT INTO sale_stock (activity_id, sku_id, available, price_cents, currency) VALUES (?, ?, 1, 100, 'EUR')",
      [activityId, skuId],
    );
    const error = await failureOf(
      admin.query("UPDATE sale_stock SET available = available - 2 WHERE activity_id = ? AND sku_id = ?", [
        activityId,
        skuId,
      ]),
    );
    // ER_CHECK_CONSTRAINT_VIOLATED (MySQL 3819) is ER_CONSTRAINT_FAILED (MariaDB 4025).
    expect((error as { errno?: number }).errno).toBe(engine === "mysql" ? 3819 : 4025);
    const [rows] = await app.query<RowDataPacket[]>(
      "SELECT available FROM sale_stock WHERE activity_id = ? AND sku_id = ?",
      [activityId, skuId],
    );
    expect(rows[0]?.available).toBe(1);
    await admin.query("DELETE FROM sale_stock WHERE activity_id = ? AND sku_id = ?", [activityId, skuId]);
  });

  it("names a duplicate key, a lock wait timeout and a deadlock with the numbers flashgate acts on", async () => {
    const { activityId } = freshIds();
    const rows = [activityId, activityId + 1];
    for (const id of rows)
      await app.query(
        "INSERT INTO activity (id, name, starts_at, ends_at) VALUES (?, 'engine', NOW(3), NOW(3) + INTERVAL 1 HOUR)",
        [id],
      );
    const duplicate = await failureOf(
      app.query("INSERT INTO activity (id, name, starts_at, ends_at) VALUES (?, 'again', NOW(3), NOW(3))", [
        activityId,
      ]),
    );
    expect(isDuplicateKey(duplicate)).toBe(true);
    expect(isDatabaseUnavailable(duplicate)).toBe(false);

    const [a, b] = [await app.getConnection(), await app.getConnection()];
    try {
      await a.query("SET SESSION innodb_lock_wait_timeout = 1");
      await b.query("SET SESSION innodb_lock_wait_timeout = 1");
      await a.query("START TRANSACTION");
      await a.query("UPDATE activity SET name = 'a' WHERE id = ?", [rows[0]]);
      const lockWait = await failureOf(b.query("UPDATE activity SET name = 'b' WHERE id = ?", [rows[0]]));
      expect((lockWait as { errno?: number }).errno).toBe(serverErrors.lockWaitTimeout);
      expect(isDatabaseUnavailable(lockWait)).toBe(true);
      expect(isDuplicateKey(lockWait)).toBe(false);

      await b.query("SET SESSION innodb_lock_wait_timeout = 20");
      await b.query("START TRANSACTION");
      await b.query("UPDATE activity SET name = 'b' WHERE id = ?", [rows[1]]);
      // a waits for b's row while b asks for a's: InnoDB rolls one of them back at once.
      const aWaits = failureOf(a.query("UPDATE activity SET name = 'a' WHERE id = ?", [rows[1]]));
      const bWaits = failureOf(b.query("UPDATE activity SET name = 'b' WHERE id = ?", [rows[0]]));
      const failures = (await Promise.all([aWaits, bWaits])).filter((error) => error !== undefined);
      expect(failures.map((error) => (error as { errno?: number }).errno)).toContain(serverErrors.deadlock);
      expect(failures.every(isDatabaseUnavailable)).toBe(true);
    } finally {
      for (const connection of [a, b]) {
        await connection.query("ROLLBACK");
        connection.release();
      }
      await admin.query("DELETE FROM activity WHERE id IN (?, ?)", rows);
    }
  });

  it("names a stock row left negative and a NULL expiry as refused rows, on a session of flashgate's pool", async () => {
    const { activityId, skuId } = freshIds();
    await app.query(
      "INSERT INTO activity (id, name, starts_at, ends_at) VALUES (?, 'engine', NOW(3), NOW(3) + INTERVAL 1 HOUR)",
      [activityId],
    );
    await app.query(
      "INSERT INTO sale_stock (activity_id, sku_id, available, price_cents, currency) VALUES (?, ?, 1, 100, 'EUR')",
      [activityId, skuId],
    );
    try {
      const negative = await failureOf(
        app.query("UPDATE sale_stock SET available = -1 WHERE activity_id = ? AND sku_id = ?", [
          activityId,
          skuId,
        ]),
      );
      expect(isRowRefused(negative)).toBe(true);
      // Two rows: a session out of strict mode would store the second's NULL as a zero date, so the pool
      // pins strict mode whatever the server's.
      const [[mode]] = await app.query<RowDataPacket[]>("SELECT @@SESSION.sql_mode AS mode");
      expect(String(mode.mode).split(",")).toContain("STRICT_ALL_TABLES");
      const nullExpiry = await failureOf(
        app.query(
          `INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
           VALUES ('e-1', ?, ?, 1, 'PENDING', 100, 'EUR', NOW(3), NOW(3)), ('e-2', ?, ?, 2, 'PENDING', 100, 'EUR', NOW(3), NULL)`,
          [activityId, skuId, activityId, skuId],
        ),
      );
      expect(isRowRefused(nullExpiry)).toBe(true);
      expect(isDatabaseUnavailable(nullExpiry)).toBe(false);
    } finally {
      await admin.query("DELETE FROM sale_stock WHERE activity_id = ? AND sku_id = ?", [activityId, skuId]);
      await admin.query("DELETE FROM activity WHERE id = ?", [activityId]);
    }
  });

  it("answers a write on a read-only server (a demoted primary) as unavailable, not as a bug", async () => {
    // Alone on this server (the database tier runs no Debezium), so nothing else is refused meanwhile.
    try {
      await admin.query("SET GLOBAL read_only = ON");
      const { activityId } = freshIds();
      const error = await failureOf(
        app.query("INSERT INTO activity (id, name, starts_at, ends_at) VALUES (?, 'ro', NOW(3), NOW(3))", [
          activityId,
        ]),
      );
      expect((error as { errno?: number }).errno).toBe(serverErrors.readOnly);
      expect(isDatabaseUnavailable(error)).toBe(true);
    } finally {
      await admin.query("SET GLOBAL read_only = OFF");
    }
  });
});
