import { type ReplicaStatus, readReplicaStatus } from "@flashgate/db";
import type { StackContext } from "../context.ts";
import { StackError, waitFor } from "../wait.ts";
import { adminConnection, databaseNodeName, databaseNodePort, primaryNode } from "./database-nodes.ts";

/** The account a replica reads its primary's binlog with. */
const replicationUser = "flashgate_replication";

/**
 * Makes `node` a read-only GTID replica of the recorded primary: pointed at it if it is not already (a
 * fresh node, or the old primary after a switchover), and replicating before this returns. A fresh
 * node starts from an empty GTID set and receives the primary's whole binlog: every transaction since
 * the stack was made (the stack never purges binlogs within their three days).
 */
export async function followPrimary(ctx: StackContext, node: number): Promise<void> {
  const primary = primaryNode(ctx);
  const sourcePort = databaseNodePort(ctx, primary);
  const replica = await adminConnection(ctx, undefined, node);
  try {
    await replica.query("SET GLOBAL super_read_only = ON");
    if ((await readReplicaStatus(replica))?.sourcePort !== sourcePort) {
      await ensureReplicationUser(ctx, primary);
      await replica.query("STOP REPLICA");
      await replica.query(
        "CHANGE REPLICATION SOURCE TO SOURCE_HOST = '127.0.0.1', SOURCE_PORT = ?, SOURCE_USER = ?, SOURCE_PASSWORD = ?, SOURCE_AUTO_POSITION = 1, SOURCE_SSL = 1, SOURCE_CONNECT_RETRY = 1",
        [sourcePort, replicationUser, ctx.secrets.replicationDbPassword],
      );
    }
    await replica.query("START REPLICA");
    const step = ctx.progress.step(
      `${databaseNodeName(ctx, node)} replicating from ${databaseNodeName(ctx, primary)}`,
    );
    await waitFor(
      `${databaseNodeName(ctx, node)} to replicate`,
      async () => {
        const state = await replicaState(ctx, node);
        if (state?.error) throw new StackError(state.error);
        return state?.receiving && state.applying;
      },
      { timeoutMs: 60_000, progress: step },
    );
    step.done();
  } finally {
    await replica.end();
  }
}

async function ensureReplicationUser(ctx: StackContext, primary: number) {
  const admin = await adminConnection(ctx, undefined, primary);
  try {
    await admin.query("CREATE USER IF NOT EXISTS ?@'127.0.0.1' IDENTIFIED BY ?", [
      replicationUser,
      ctx.secrets.replicationDbPassword,
    ]);
    await admin.query("ALTER USER ?@'127.0.0.1' IDENTIFIED BY ?", [
      replicationUser,
      ctx.secrets.replicationDbPassword,
    ]);
    await admin.query("GRANT REPLICATION SLAVE ON *.* TO ?@'127.0.0.1'", [replicationUser]);
  } finally {
    await admin.end();
  }
}

/** How a node replicates, or undefined if it is no replica. */
export async function replicaState(ctx: StackContext, node: number): Promise<ReplicaStatus | undefined> {
  const admin = await adminConnection(ctx, undefined, node);
  try {
    return await readReplicaStatus(admin);
  } finally {
    await admin.end();
  }
}
