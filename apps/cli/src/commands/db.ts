import { createPool, lostChanges } from "@flashgate/db";
import type { Command } from "commander";
import { localStack } from "../local-stack.ts";

export function registerDatabaseCommands(program: Command) {
  const db = program
    .command("db")
    .description("the database's primary and replica: roles, switchover, failover, commits a failover lost");

  db.command("switchover")
    .description(
      "planned: the primary stops taking writes, the replica catches up to its last GTID and is promoted, the old primary follows it (local cluster stack)",
    )
    .action(async () => {
      const { stackContext, switchover } = await localStack();
      const change = await switchover(stackContext());
      process.stdout.write(`${change.to} is primary; writes were refused for ${change.writesStoppedMs} ms\n`);
    });

  db.command("failover")
    .description(
      "unplanned: the primary fenced and stopped, the replica promoted with what it received; `flashgate up` rebuilds the old node as a replica (local cluster stack)",
    )
    .action(async () => {
      const { stackContext, failover } = await localStack();
      const change = await failover(stackContext());
      process.stdout.write(
        `${change.to} is primary ${change.writesStoppedMs} ms after the fence; the old data is kept in ${change.keptAside}\n` +
          "commits the old primary lost are named by the cache-maintainer: flashgate db lost-commits\n",
      );
    });

  db.command("lost-commits")
    .description(
      "the changes the cache saw from a primary lost in a failover that the database no longer holds (DATABASE_URL: the cache-maintainer's account or the DBA's; else the local stack's maintainer's)",
    )
    .option("--json", "machine-readable output")
    .action(async (options: { json?: boolean }) => {
      const url = process.env.DATABASE_URL || (await localDatabaseUrl());
      const pool = createPool(url, { connectionLimit: 1 });
      try {
        const changes = await lostChanges(pool);
        if (options.json) {
          process.stdout.write(`${JSON.stringify(changes, null, 2)}\n`);
          return;
        }
        const transactions = new Set(changes.map((change) => change.gtid));
        process.stdout.write(`${changes.length} lost changes in ${transactions.size} transactions\n`);
        for (const change of changes) {
          const what =
            change.table === "sale_order"
              ? `order ${change.orderId} of user ${change.userId} (${change.after?.state ?? "deleted"})`
              : `${change.table} ${change.op}`;
          process.stdout.write(
            `  ${new Date(change.committedAtMs).toISOString()} ${change.gtid} activity ${change.activityId} sku ${change.skuId}: ${what}\n`,
          );
        }
      } finally {
        await pool.end();
      }
    });
}

/** The local cache-maintainer's account: lost changes are its findings. */
async function localDatabaseUrl(): Promise<string> {
  const { appEnv, stackContext } = await localStack();
  return appEnv(stackContext()).MAINTAINER_DATABASE_URL;
}
