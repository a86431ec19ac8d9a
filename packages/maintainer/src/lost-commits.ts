import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { FlashgateRedis } from "@flashgate/cache";
import { type ChangeEvent, parseChange, topics } from "@flashgate/cdc";
import { executedGtids, holdsGtid, type LostChange, recordLostChanges } from "@flashgate/db";
import type { Logger } from "@flashgate/logger";
import { recordIncident } from "@flashgate/sync";
import type { Kafka } from "kafkajs";
import type { Pool } from "mysql2/promise";
import type { MaintainerMetrics } from "./metrics.ts";

/** The lost-commit check reads the topics back under a group of its own, named with this prefix, deleted after. */
export const lostCommitGroupPrefix = "flashgate-lost-commits-";

/** The topics whose changes a lost primary may have written: the sale's rows and the activities. */
const scanned = [topics.sale, topics.activity];
/** A scan reading longer than this gives up; the next watchdog pass tries again. */
const scanTimeoutMs = 120_000;

/**
 * After a failover (another server behind the database endpoint), names every change the cache saw
 * through CDC that the new primary lacks: with asynchronous replication, a transaction the old primary
 * committed and Debezium read, but the replica never received, is gone — its orders were told 201. The
 * changes are read back from the CDC topics, from `lookbackMs` before the failover was seen (the
 * replica's lag is bounded by that, or the changes before it are not looked at), and each whose GTID is
 * not in the new primary's `gtid_executed` is recorded in `lost_change`, counted, logged and listed as
 * an incident. The cache itself converges by the forced rebuild that the change of source starts.
 */
export function createLostCommitFinder(deps: {
  kafka: Kafka;
  pool: Pool;
  redis: FlashgateRedis;
  metrics: MaintainerMetrics;
  logger: Logger;
  lookbackMs: number;
}) {
  const { kafka, pool, redis, metrics, logger, lookbackMs } = deps;

  return async function findLostCommits(seenAtMs: number): Promise<LostChange[]> {
    const changes = await readChangesSince(kafka, seenAtMs - lookbackMs);
    // Read after the topics' ends were taken: every change read was committed before, so a transaction
    // of the new primary among them is in this set, never taken for lost.
    const executed = await executedGtids(pool);
    if (!executed) {
      logger.warn("the lost-commit check reads MySQL GTIDs: not run on this server");
      return [];
    }
    const lost = changes
      .filter((change) => change.gtid !== undefined && !holdsGtid(executed, change.gtid))
      .map(lostChange);
    const added = await recordLostChanges(pool, lost);
    const transactions = new Set(lost.map((change) => change.gtid));
    const orders = lost.filter((change) => change.orderId !== null && change.op === "c");
    if (added) {
      for (const change of lost) metrics.lostChanges.inc({ table: change.table });
      logger.error(
        {
          transactions: [...transactions],
          orders: orders.map(({ orderId, userId, activityId, skuId }) => ({
            orderId,
            userId,
            activityId,
            skuId,
          })),
        },
        "commits lost in the failover: the cache saw these transactions from the old primary, the new one lacks them",
      );
      await recordIncident(redis, {
        kind: "lost-commits",
        transactions: transactions.size,
        orders: orders.slice(0, 50).map((change) => change.orderId),
      });
    }
    logger.info(
      { lost: lost.length, transactions: transactions.size, lookbackMs },
      "lost-commit check after a change of database source done",
    );
    return lost;
  };
}

function lostChange(change: ChangeEvent & { gtid?: string }): LostChange {
  const row = change.after ?? change.before ?? {};
  const id = (name: string) => (row[name] === undefined || row[name] === null ? null : Number(row[name]));
  return {
    gtid: change.gtid ?? "",
    binlogPosition: change.position,
    table: change.table,
    op: change.op,
    activityId: id("activity_id") ?? (change.table === "activity" ? id("id") : null),
    skuId: id("sku_id"),
    orderId: change.table === "sale_order" ? String(row.order_id ?? row.request_id ?? "") || null : null,
    userId: id("user_id"),
    committedAtMs: change.committedAtMs ?? change.emittedAtMs ?? Date.now(),
    after: change.after,
  };
}

/** A record that is no row change (a tombstone, a truncate) names nothing. */
function parsedOrNothing(value: string | undefined): ChangeEvent | undefined {
  try {
    return parseChange(value);
  } catch {
    return undefined;
  }
}

/** Every change in the scanned topics written since `sinceMs`, up to their ends as they are now. */
async function readChangesSince(kafka: Kafka, sinceMs: number): Promise<ChangeEvent[]> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<string, bigint>();
  const starts: { topic: string; partition: number; offset: string }[] = [];
  try {
    for (const topic of scanned) {
      const high = await admin.fetchTopicOffsets(topic);
      const from = await admin.fetchTopicOffsetsByTimestamp(topic, Math.max(0, sinceMs));
      for (const { partition, offset } of from) {
        const end = BigInt(high.find((p) => p.partition === partition)?.high ?? offset);
        if (BigInt(offset) >= end) continue;
        ends.set(`${topic}/${partition}`, end);
        starts.push({ topic, partition, offset });
      }
    }
  } finally {
    await admin.disconnect();
  }
  if (!starts.length) return [];
  // A group of its own that commits nothing: the sale's consumer group is left alone.
  const groupId = `${lostCommitGroupPrefix}${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
  const changes: ChangeEvent[] = [];
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: scanned, fromBeginning: false });
    let finished!: () => void;
    const done = new Promise<void>((resolve) => {
      finished = resolve;
    });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const key = `${batch.topic}/${batch.partition}`;
        const end = ends.get(key);
        if (end === undefined) return;
        for (const message of batch.messages) {
          if (BigInt(message.offset) >= end) break;
          const change = parsedOrNothing(message.value?.toString());
          if (change) changes.push(change);
        }
        if (BigInt(batch.lastOffset()) >= end - 1n) ends.delete(key);
        if (!ends.size) finished();
      },
    });
    for (const start of starts) consumer.seek(start);
    await Promise.race([
      done,
      sleep(scanTimeoutMs).then(() => {
        throw new Error(`reading the CDC topics back took over ${scanTimeoutMs / 1000} s`);
      }),
    ]);
  } finally {
    await consumer.disconnect().catch(() => {});
    const cleanup = kafka.admin();
    await cleanup
      .connect()
      .then(() => cleanup.deleteGroups([groupId]))
      .catch(() => {})
      .finally(() => cleanup.disconnect());
  }
  return changes;
}
