import { databaseName, dbaDbUser } from "@flashgate/db";
import { adminConnection, type StackContext } from "@flashgate/stack";
import mysql, { type RowDataPacket } from "mysql2/promise";

/** A session of the DBA's account (`flashgate sql`'s) on a stack's database: a DBA's raw SQL, as a test makes it. */
export const dbaConnection = (ctx: StackContext) =>
  mysql.createConnection({
    host: "127.0.0.1",
    port: Number(ctx.config.FLASHGATE_DB_PORT),
    user: dbaDbUser,
    password: ctx.secrets.dbaDbPassword,
    database: databaseName,
    timezone: "Z",
  });

/**
 * An account of its own for one app under test, with the app's grants, whose statements the server
 * counts (performance_schema, per account): "this flood ran no statement" is then read on the server.
 */
export async function countedAccount(ctx: StackContext, databaseUrl: string, name: string) {
  const password = `${name}-${Date.now()}-0123456789`;
  const admin = await adminConnection(ctx);
  try {
    await admin.query("CREATE USER IF NOT EXISTS ?@'%' IDENTIFIED BY ?", [name, password]);
    await admin.query("ALTER USER ?@'%' IDENTIFIED BY ?", [name, password]);
    await admin.query(`GRANT SELECT, INSERT, UPDATE ON ${databaseName}.* TO ?@'%'`, [name]);
    // The binlog coordinate a load of the cache is fenced by, as the app's account reads it.
    await admin.query("GRANT REPLICATION CLIENT ON *.* TO ?@'%'", [name]);
  } finally {
    await admin.end();
  }
  const url = new URL(databaseUrl);
  url.username = name;
  url.password = password;
  return {
    databaseUrl: url.toString(),
    /** Statements this account's sessions have run so far. */
    statements: async () => {
      const counter = await adminConnection(ctx);
      try {
        const [rows] = await counter.query<RowDataPacket[]>(
          `SELECT COALESCE(SUM(COUNT_STAR), 0) AS statements
             FROM performance_schema.events_statements_summary_by_user_by_event_name WHERE USER = ?`,
          [name],
        );
        return Number(rows[0].statements);
      } finally {
        await counter.end();
      }
    },
  };
}
