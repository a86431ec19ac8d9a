import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import mysql, { type Connection } from "mysql2/promise";
import type { StackContext } from "../context.ts";
import { instancePort } from "../topology.ts";

// Which servers the stack's database has, where each listens and which is the primary: what the
// database's component, its replication and its proxy all need, so none of them imports another for it.

/**
 * The cluster topology on MySQL runs the database as production does past one node: a primary and a
 * GTID replica behind one endpoint (database-proxy.ts). MariaDB stays a single server.
 */
export const replicated = (ctx: StackContext) =>
  ctx.config.FLASHGATE_TOPOLOGY === "cluster" && ctx.config.FLASHGATE_DB === "mysql";

/** The database's servers: node 0 alone, or nodes 0 and 1. */
export const databaseNodes = (ctx: StackContext) => (replicated(ctx) ? [0, 1] : [0]);

export const databaseNodeName = (ctx: StackContext, node: number) =>
  replicated(ctx) ? `database-${node + 1}` : "database";

/** A replicated node listens 100·(node + 1) above FLASHGATE_DB_PORT, where the proxy answers for the primary. */
export const databaseNodePort = (ctx: StackContext, node: number) =>
  replicated(ctx) ? instancePort(ctx.config.FLASHGATE_DB_PORT, node + 1) : ctx.config.FLASHGATE_DB_PORT;

/** What a node adds to its files' names: nothing for node 0, "-2" for node 1. */
export const nodeSuffix = (node: number) => (node ? `-${node + 1}` : "");
export const databaseDataDir = (ctx: StackContext, node: number) =>
  join(ctx.paths.home, `${ctx.config.FLASHGATE_DB}${nodeSuffix(node)}`);
export const socketPath = (ctx: StackContext, node: number) =>
  join(ctx.paths.home, `${ctx.config.FLASHGATE_DB}${nodeSuffix(node)}.sock`);

/** Which node is the primary: recorded in the home, so a switchover outlives every restart. */
export function primaryNode(ctx: StackContext): number {
  if (!replicated(ctx) || !existsSync(ctx.paths.databasePrimary)) return 0;
  const node = Number(readFileSync(ctx.paths.databasePrimary, "utf8").trim());
  return databaseNodes(ctx).includes(node) ? node : 0;
}

export const recordPrimary = (ctx: StackContext, node: number) =>
  writeFileSync(ctx.paths.databasePrimary, `${node}\n`);

/** Root on a node of the stack's database, the primary unless told otherwise. */
export function adminConnection(
  ctx: StackContext,
  password: string = ctx.secrets.databaseRootPassword,
  node: number = primaryNode(ctx),
): Promise<Connection> {
  // The stack's own server through its socket; one in a container (the test stack's
  // FLASHGATE_TEST_STACK=containers) through its published port, where root may log in from anywhere.
  const socket = socketPath(ctx, node);
  return mysql.createConnection({
    ...(existsSync(socket)
      ? { socketPath: socket }
      : { host: "127.0.0.1", port: databaseNodePort(ctx, node) }),
    user: "root",
    password,
    multipleStatements: false,
    connectTimeout: 2000,
  });
}
