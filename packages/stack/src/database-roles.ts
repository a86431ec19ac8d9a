import { renameSync } from "node:fs";
import type { Connection, RowDataPacket } from "mysql2/promise";
import {
  adminConnection,
  databaseDataDir,
  databaseNodeName,
  databaseNodes,
  primaryNode,
  recordPrimary,
  replicated,
} from "./components/database-nodes.ts";
import { fence, routeTo } from "./components/database-proxy.ts";
import { followPrimary } from "./components/database-replication.ts";
import type { StackContext } from "./context.ts";
import { readPid, stopDaemon } from "./processes.ts";
import { StackError, waitFor } from "./wait.ts";

export interface RoleChange {
  from: string;
  to: string;
  /** From the moment the old primary stopped taking writes (or was fenced) until the new one took them. */
  writesStoppedMs: number;
}

const gtidExecuted = async (connection: Connection) =>
  String((await connection.query<RowDataPacket[]>("SELECT @@GLOBAL.gtid_executed AS gtids"))[0][0].gtids);

function otherNode(ctx: StackContext): { primary: number; replica: number } {
  if (!replicated(ctx))
    throw new StackError(
      "this stack runs one database server: switchover and failover need the cluster topology on MySQL",
    );
  const primary = primaryNode(ctx);
  const replica = databaseNodes(ctx).find((node) => node !== primary);
  if (replica === undefined) throw new StackError("no replica to promote");
  return { primary, replica };
}

/** The replica stops replicating and takes writes. */
async function promote(replica: Connection) {
  await replica.query("STOP REPLICA");
  await replica.query("RESET REPLICA ALL");
  await replica.query("SET GLOBAL super_read_only = OFF");
  await replica.query("SET GLOBAL read_only = OFF");
}

/**
 * A planned switchover: the primary stops taking writes, the replica applies every transaction it
 * committed (waiting on its GTID set: none is lost), is promoted, the endpoint moves to it and cuts the
 * old primary's connections — the apps' pools and the connector's binlog stream reconnect to the new
 * one — and the old primary becomes its replica.
 */
export async function switchover(
  ctx: StackContext,
  options: { catchUpTimeoutS?: number } = {},
): Promise<RoleChange> {
  const { primary, replica } = otherNode(ctx);
  const step = ctx.progress.step(
    `switchover ${databaseNodeName(ctx, primary)} → ${databaseNodeName(ctx, replica)}`,
  );
  const oldPrimary = await adminConnection(ctx, undefined, primary);
  const newPrimary = await adminConnection(ctx, undefined, replica);
  try {
    const [[state]] = await newPrimary.query<RowDataPacket[]>("SHOW REPLICA STATUS");
    if (state?.Replica_IO_Running !== "Yes" || state?.Replica_SQL_Running !== "Yes")
      throw new StackError(
        `${databaseNodeName(ctx, replica)} is not replicating (${state?.Last_IO_Error || state?.Last_SQL_Error || "no replication configured"}): not switching over`,
      );
    step.waiting("the primary stops taking writes");
    const stoppedAt = Date.now();
    // Waits for commits in flight; every later write is refused (1290), which buyers see as a 503.
    await oldPrimary.query("SET GLOBAL super_read_only = ON");
    const last = await gtidExecuted(oldPrimary);
    step.waiting("the replica applies the primary's last transactions");
    const [[caughtUp]] = await newPrimary.query<RowDataPacket[]>(
      "SELECT WAIT_FOR_EXECUTED_GTID_SET(?, ?) AS timedOut",
      [last, options.catchUpTimeoutS ?? 60],
    );
    if (Number(caughtUp.timedOut) !== 0) {
      await oldPrimary.query("SET GLOBAL super_read_only = OFF");
      throw new StackError(
        `${databaseNodeName(ctx, replica)} did not catch up with ${last}: switchover abandoned, the primary takes writes again`,
      );
    }
    await promote(newPrimary);
    recordPrimary(ctx, replica);
    await routeTo(ctx, replica);
    const writesStoppedMs = Date.now() - stoppedAt;
    step.waiting("the old primary follows the new one");
    await followPrimary(ctx, primary);
    step.done(`writes refused for ${writesStoppedMs} ms, no transaction lost`);
    return { from: databaseNodeName(ctx, primary), to: databaseNodeName(ctx, replica), writesStoppedMs };
  } finally {
    await oldPrimary.end().catch(() => {});
    await newPrimary.end().catch(() => {});
  }
}

/**
 * An unplanned failover, as an operator (or orchestrator) runs it once the primary is judged lost: the
 * old primary fenced (no connection reaches it, its process stopped if it still runs), the replica
 * applies what it had received and is promoted, the endpoint moves to it. With asynchronous replication
 * the transactions the replica never received are lost: the cache-maintainer names each one it saw
 * (`flashgate db lost-commits`). The old primary's data is kept aside, never served again: it may hold
 * those transactions. `up` makes that node a fresh replica of the new primary.
 */
export async function failover(ctx: StackContext): Promise<RoleChange & { keptAside: string }> {
  const { primary, replica } = otherNode(ctx);
  const step = ctx.progress.step(
    `failover ${databaseNodeName(ctx, primary)} → ${databaseNodeName(ctx, replica)}`,
  );
  const fencedAt = Date.now();
  await fence(ctx, primary);
  if (readPid(ctx.paths.pids, databaseNodeName(ctx, primary)) !== undefined) {
    step.waiting(`stopping ${databaseNodeName(ctx, primary)}`);
    await stopDaemon(ctx.paths.pids, databaseNodeName(ctx, primary), 5000);
  }
  const newPrimary = await adminConnection(ctx, undefined, replica);
  try {
    // What was received is applied before promotion; nothing more can come.
    await newPrimary.query("STOP REPLICA IO_THREAD");
    const [[state]] = await newPrimary.query<RowDataPacket[]>("SHOW REPLICA STATUS");
    const received = String(state?.Retrieved_Gtid_Set ?? "");
    step.waiting("the replica applies what it received");
    await waitFor(
      "the replica to apply its relay log",
      async () => {
        const [[row]] = await newPrimary.query<RowDataPacket[]>(
          "SELECT GTID_SUBSET(?, @@GLOBAL.gtid_executed) AS applied",
          [received],
        );
        return Number(row.applied) === 1;
      },
      { timeoutMs: 120_000, progress: step },
    );
    await promote(newPrimary);
    recordPrimary(ctx, replica);
    await routeTo(ctx, replica);
  } finally {
    await newPrimary.end().catch(() => {});
  }
  const writesStoppedMs = Date.now() - fencedAt;
  const dataDir = databaseDataDir(ctx, primary);
  const keptAside = `${dataDir}.failed-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  renameSync(dataDir, keptAside);
  step.done(
    `${databaseNodeName(ctx, replica)} is primary ${writesStoppedMs} ms after the fence; old data kept in ${keptAside}`,
  );
  return {
    from: databaseNodeName(ctx, primary),
    to: databaseNodeName(ctx, replica),
    writesStoppedMs,
    keptAside,
  };
}
