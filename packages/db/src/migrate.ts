import type { Connection, RowDataPacket } from "mysql2/promise";
import { serverErrors } from "./errors.ts";
import { type Migration, readMigrations } from "./migrations.ts";

export interface MigrateOptions {
  database: string;
  /** The purchase API's account. */
  appUser: { name: string; password: string };
  /** The cache-maintainer's. */
  maintainerUser: { name: string; password: string };
  debeziumUser: { name: string; password: string };
  /** The account a DBA logs in with (`flashgate sql`): rows of the sale tables, nothing else. */
  dbaUser?: { name: string; password: string };
  onApplied?: (migration: Migration) => void;
}

const identifier = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Creates the database, users with least privilege, and applies pending migrations. Running it twice changes nothing. */
export async function migrate(admin: Connection, options: MigrateOptions): Promise<{ applied: number[] }> {
  const { database, appUser, maintainerUser, debeziumUser, dbaUser } = options;
  for (const name of [
    database,
    appUser.name,
    maintainerUser.name,
    debeziumUser.name,
    ...(dbaUser ? [dbaUser.name] : []),
  ]) {
    if (!identifier.test(name)) throw new Error(`invalid identifier: ${name}`);
  }
  const db = options.database;
  await admin.query(`CREATE DATABASE IF NOT EXISTS \`${db}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  await ensureUsers(admin, options);
  await admin.query(`USE \`${db}\``);
  await admin.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INT PRIMARY KEY,
    name VARCHAR(200) NOT NULL,
    applied_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
  ) ENGINE=InnoDB`);
  const [rows] = await admin.query("SELECT version FROM schema_migrations");
  const done = new Set((rows as { version: number }[]).map((row) => row.version));
  const applied: number[] = [];
  for (const migration of readMigrations()) {
    if (done.has(migration.version)) continue;
    for (const statement of migration.statements) await admin.query(statement);
    await admin.query("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", [
      migration.version,
      migration.name,
    ]);
    applied.push(migration.version);
    options.onApplied?.(migration);
  }
  await grantTablePrivileges(admin, options);
  return { applied };
}

async function ensureUsers(
  admin: Connection,
  { database, appUser, maintainerUser, debeziumUser, dbaUser }: MigrateOptions,
) {
  for (const user of [appUser, maintainerUser, debeziumUser, ...(dbaUser ? [dbaUser] : [])]) {
    try {
      await admin.query("CREATE USER IF NOT EXISTS ?@'%' IDENTIFIED BY ?", [user.name, user.password]);
      // Keeps the password in step with the local secrets file if it was regenerated.
      await admin.query("ALTER USER ?@'%' IDENTIFIED BY ?", [user.name, user.password]);
    } catch (error) {
      // mysql2 attaches the statement, password included, to its error: pass on only the server's words.
      const { message, code, errno } = error as Error & { code?: string; errno?: number };
      throw Object.assign(new Error(`cannot create or update database user ${user.name}: ${message}`), {
        code,
        errno,
      });
    }
  }
  // Debezium reads the binlog and the sale database's tables (the schema at a reset, an operator's
  // incremental snapshot), nothing else; REPLICATION CLIENT is BINLOG MONITOR on MariaDB. Its schema
  // snapshot flushes and read-locks the tables: on MySQL with FLUSH_TABLES, not RELOAD, with which it
  // could RESET MASTER (the GTID history gone, the replica broken); MariaDB has no narrower privilege.
  await admin.query(
    "GRANT SHOW DATABASES, LOCK TABLES, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO ?@'%'",
    [debeziumUser.name],
  );
  const [[server]] = await admin.query<RowDataPacket[]>("SELECT VERSION() AS version");
  if (String(server.version).includes("MariaDB")) {
    await admin.query("GRANT RELOAD ON *.* TO ?@'%'", [debeziumUser.name]);
  } else {
    await admin.query("GRANT FLUSH_TABLES ON *.* TO ?@'%'", [debeziumUser.name]);
    // An earlier version granted RELOAD.
    await revokeIfGranted(admin, "REVOKE RELOAD ON *.* FROM ?@'%'", [debeziumUser.name]);
  }
  // An earlier version granted SELECT on every database, mysql.* included.
  await revokeIfGranted(admin, "REVOKE SELECT ON *.* FROM ?@'%'", [debeziumUser.name]);
  await admin.query(`GRANT SELECT ON \`${database}\`.* TO ?@'%'`, [debeziumUser.name]);
}

/** Revokes what an earlier version granted; nothing to revoke on a server it never ran on. */
async function revokeIfGranted(admin: Connection, statement: string, values: string[]) {
  await admin.query(statement, values).catch((error: { errno?: number }) => {
    if (error.errno !== serverErrors.noSuchGrant && error.errno !== serverErrors.noSuchTableGrant)
      throw error;
  });
}

/** What a DBA may not touch: the migrations' bookkeeping, the CDC probe's row and Debezium's signals. */
const notForDbas = ["schema_migrations", "cdc_heartbeat", "debezium_signal"];
/**
 * What each app's account may do to each table (the rest: nothing). No DELETE anywhere: flashgate never
 * deletes a row (orders are closed, not removed). The stock ledger and payment events are audit trails,
 * a line added and never rewritten; a lost change is a finding, recorded once. The orders' version is
 * the triggers' alone (they run as their definer); the migrations' bookkeeping and Debezium's signals
 * are no app's.
 */
const forApi: Record<string, string> = {
  // Decisions, the back-office's activities, SKUs and restocks, closures and payments.
  activity: "SELECT, INSERT, UPDATE",
  sale_stock: "SELECT, INSERT, UPDATE",
  sale_order: "SELECT, INSERT, UPDATE",
  stock_ledger: "SELECT, INSERT",
  payment_event: "SELECT, INSERT",
  // The sold-out shortcut's version, and the back-office's fenced SKU view.
  sku_orders_version: "SELECT",
};
const forMaintainer: Record<string, string> = {
  // Rebuilds, the directory and the drift check read; the order expiry closes orders and gives units back.
  activity: "SELECT",
  sale_stock: "SELECT, UPDATE",
  sale_order: "SELECT, UPDATE",
  sku_orders_version: "SELECT",
  // Its lag probe's row, and what a failover lost.
  cdc_heartbeat: "SELECT, INSERT, UPDATE",
  lost_change: "SELECT, INSERT",
};
/** What an earlier version granted an account beyond its table's privileges, taken back. */
const beyond = (privileges: string) =>
  ["SELECT", "INSERT", "UPDATE", "DELETE"].filter((privilege) => !privileges.includes(privilege));

/**
 * What a DBA reads but never rewrites: the stock ledger is an audit trail (a line may be added), a
 * payment event the provider's record (a deleted one would let a replayed event apply again), and the
 * orders' version is the triggers' alone (they run as their definer).
 */
const readOnlyForDbas: Record<string, string> = {
  stock_ledger: "SELECT, INSERT",
  payment_event: "SELECT",
  sku_orders_version: "SELECT",
  // What a failover lost is the maintainer's finding, read by operators.
  lost_change: "SELECT",
};

async function grantTablePrivileges(
  admin: Connection,
  { database, appUser, maintainerUser, debeziumUser, dbaUser }: MigrateOptions,
) {
  // Both read binlog coordinates (never the binlog itself) to fence what they read: the maintainer its
  // rebuilds and drift checks, the API its back-office SKU view.
  for (const user of [maintainerUser, appUser])
    await admin.query("GRANT REPLICATION CLIENT ON *.* TO ?@'%'", [user.name]);
  // The maintainer's CDC fallback waits for the oldest open transaction (information_schema.innodb_trx).
  await admin.query("GRANT PROCESS ON *.* TO ?@'%'", [maintainerUser.name]);
  const [tables] = await admin.query<RowDataPacket[]>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ? AND table_name <> 'debezium_signal'",
    [database],
  );
  const names = tables.map(({ name }) => String(name));
  // The maintainer's account before the API's loses what the two shared, so that an existing deployment's
  // maintainers, rolled to their own account, find it ready.
  for (const [user, privileges] of [
    [maintainerUser.name, forMaintainer],
    [appUser.name, forApi],
  ] as const) {
    // An earlier version granted the whole database.
    await revokeIfGranted(admin, `REVOKE SELECT, INSERT, UPDATE, DELETE ON \`${database}\`.* FROM ?@'%'`, [
      user,
    ]);
    // Granted before what is taken back, so a deployment's running apps never lack what they use.
    for (const [name, granted] of Object.entries(privileges))
      await admin.query(`GRANT ${granted} ON \`${database}\`.\`${name}\` TO ?@'%'`, [user]);
    for (const name of names) {
      const extra = beyond(privileges[name] ?? "");
      if (extra.length)
        await revokeIfGranted(admin, `REVOKE ${extra.join(", ")} ON \`${database}\`.\`${name}\` FROM ?@'%'`, [
          user,
        ]);
    }
  }
  // An earlier version gave the API's account the maintainer's PROCESS.
  await revokeIfGranted(admin, "REVOKE PROCESS ON *.* FROM ?@'%'", [appUser.name]);
  const grantRows = async (user: string, names: string[]) => {
    for (const name of names)
      await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON \`${database}\`.\`${name}\` TO ?@'%'`, [
        user,
      ]);
  };
  if (dbaUser) {
    await grantRows(
      dbaUser.name,
      names.filter((name) => !notForDbas.includes(name) && !(name in readOnlyForDbas)),
    );
    for (const [name, privileges] of Object.entries(readOnlyForDbas)) {
      // An earlier version granted these every row privilege.
      await revokeIfGranted(admin, `REVOKE UPDATE, DELETE ON \`${database}\`.\`${name}\` FROM ?@'%'`, [
        dbaUser.name,
      ]);
      await admin.query(`GRANT ${privileges} ON \`${database}\`.\`${name}\` TO ?@'%'`, [dbaUser.name]);
    }
  }
  // Incremental snapshots write their watermarks into the signal table.
  await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON \`${database}\`.debezium_signal TO ?@'%'`, [
    debeziumUser.name,
  ]);
}
