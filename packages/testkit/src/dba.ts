import { databaseName, dbaDbUser } from "@flashgate/db";
import type { StackContext } from "@flashgate/stack";
import mysql from "mysql2/promise";

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
