import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { binlogSourceKey, cdcKeys, type FlashgateRedis, releaseReservation } from "@flashgate/cache";
import { type ChangeEvent, parseChange, topics } from "@flashgate/cdc";
import {
  executedGtids,
  type GtidSet,
  holdsGtid,
  type LostChange,
  readBinlogSource,
  recordLostChanges,
} from "@flashgate/db";
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
/** A GTID mark per partition at most this often, the newest `marksKept` kept: ten minutes of a busy stream. */
const markEveryMs = 1_000;
const marksKept = 600;

/** A change of a batch the applier takes, and where in the topics it was read. */
export interface AppliedChange {
  topic: string;
  partition: number;
  offset: bigint;
  change: ChangeEvent;
}

/** A batch's changes checked before it is applied: against which recorded server, and those left out. */
interface Screened {
  identity: string | null;
  lost: Set<ChangeEvent>;
}

const serverUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The server that ran a MySQL transaction (`uuid:n`, `uuid:tag:n`); none for MariaDB's GTIDs. */
export function gtidServer(gtid: string | undefined): string | undefined {
  const uuid = gtid?.split(":")[0].toLowerCase();
  return uuid && serverUuid.test(uuid) ? uuid : undefined;
}

/** The server uuid of a recorded identity (`server_id/server_uuid`); empty on MariaDB. */
const serverOf = (identity: string) => identity.split("/")[1]?.toLowerCase() ?? "";

/**
 * Where reading a partition back starts, from its marks (newest first, `offset gtid`): the newest of
 * another server's transactions that this server holds. That server's transactions this one lacks all
 * come after it — Debezium writes a binlog's transactions in order, and the replica received them in that
 * order. Undefined when no mark is held (the replica lagged more than the marks reach).
 */
export function scanStart(marks: string[], executed: GtidSet, server: string): bigint | undefined {
  for (const mark of marks) {
    const [offset, gtid] = mark.split(" ");
    const source = gtidServer(gtid);
    if (source !== undefined && source !== server && holdsGtid(executed, gtid)) return BigInt(offset);
  }
  return undefined;
}

/**
 * Names every change the cache saw through CDC that the database lacks after a failover (another
 * server behind the database endpoint): with asynchronous replication, a transaction the old primary
 * committed and Debezium read, but the replica never received, is gone — its orders were told 201. Each
 * such change is recorded in `lost_change`, counted, logged and listed as an incident; the cache itself
 * converges by the forced rebuild that the change of source starts.
 *
 * Every change is covered, whenever it reaches Kafka:
 * - `find`, once the new server is recorded, reads the CDC topics back up to their ends as they are
 *   then, each partition from its newest GTID mark the new server holds (`afterApply` leaves one a
 *   second), or from `lookbackMs` before the failover was seen when none is held. What it finds was
 *   applied before the forced rebuild, which replaced it;
 * - `screen` checks each batch's changes of another server than the recorded one against the database
 *   before they are applied, so a change Connect sends after `find` (it was frozen, or its link to
 *   Kafka held) is named and never applied on top of the rebuild;
 * - `afterApply` reads the recorded server after the batch is applied: a batch screened before the new
 *   server was recorded is checked again. A change applied while the server was still the old one's was
 *   in the topics before `find` took their ends.
 */
export function createLostCommits(deps: {
  kafka: Kafka;
  pool: Pool;
  redis: FlashgateRedis;
  metrics: MaintainerMetrics;
  logger: Logger;
  lookbackMs: number;
}) {
  const { kafka, pool, redis, metrics, logger, lookbackMs } = deps;
  const markedAt = new Map<string, number>();
  /** The database's executed GTIDs, read again when the recorded server changes or a change is not in them. */
  let known: { identity: string; executed: GtidSet } | undefined;

  /** Records, counts, logs and lists as an incident changes whose transactions the database lacks. */
  async function name(changes: ChangeEvent[], found: string): Promise<LostChange[]> {
    const lost = changes.map(lostChange);
    const added = await recordLostChanges(pool, lost);
    if (!added) return lost;
    const transactions = new Set(lost.map((change) => change.gtid));
    const orders = lost.filter((change) => change.orderId !== null && change.op === "c");
    for (const change of lost) metrics.lostChanges.inc({ table: change.table });
    logger.error(
      {
        found,
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
    return lost;
  }

  /** Changes of a server other than `identity`'s that the database lacks (read again on a miss). */
  async function lostOf(identity: string | null, changes: ChangeEvent[]): Promise<ChangeEvent[]> {
    const server = identity && serverOf(identity);
    if (!identity || !server) return [];
    const foreign = changes.filter((change) => {
      const source = gtidServer(change.gtid);
      return source !== undefined && source !== server;
    });
    if (!foreign.length) return [];
    const allHeld = (executed: GtidSet) =>
      foreign.every((change) => holdsGtid(executed, String(change.gtid)));
    if (known?.identity !== identity || !allHeld(known.executed)) {
      const executed = await executedGtids(pool);
      if (!executed) return [];
      known = { identity, executed };
    }
    const { executed } = known;
    return foreign.filter((change) => !holdsGtid(executed, String(change.gtid)));
  }

  /**
   * Before a batch is applied: its changes of another server than the one recorded (the failover's
   * old primary) that the database lacks. They are named, and left out of the cache.
   */
  async function screen(changes: ChangeEvent[]): Promise<Screened> {
    // Read for each batch: a maintainer whose partitions were quiet since the failover must not screen
    // with the server it saw before it.
    // (MariaDB's GTIDs name no server: nothing to screen, and no read.)
    const identity = changes.some((change) => gtidServer(change.gtid))
      ? await redis.hget(binlogSourceKey, "identity")
      : null;
    const lost = await lostOf(identity, changes);
    if (lost.length) await name(lost, "arrived after the new primary was recorded");
    // The reservation that admitted a lost order was never met by the order's change: it holds a unit
    // the new primary has free until it expires, and buyers would be told SOLD_OUT meanwhile.
    for (const { table, op, after } of lost)
      if (table === "sale_order" && op === "c" && after)
        await releaseReservation(redis, {
          activityId: Number(after.activity_id),
          skuId: Number(after.sku_id),
          userId: String(after.user_id),
          requestId: String(after.request_id),
        });
    return { identity, lost: new Set(lost) };
  }

  /**
   * After the batch is applied: leaves GTID marks for `find`, and reads the recorded server again. If it
   * changed since `screen` (a failover seen meanwhile), the changes just applied are checked against the
   * new one; one it lacks was maybe applied after the forced rebuild, which is asked for again.
   */
  async function afterApply(applied: AppliedChange[], screened: Screened): Promise<void> {
    const now = Date.now();
    const newest = new Map<string, AppliedChange>();
    for (const item of applied)
      if (gtidServer(item.change.gtid)) newest.set(`${item.topic}:${item.partition}`, item);
    const marking = [...newest].filter(([partition]) => now - (markedAt.get(partition) ?? 0) >= markEveryMs);
    const [identity] = await Promise.all([
      redis.hget(binlogSourceKey, "identity"),
      ...marking.map(async ([partition, { topic, partition: number, offset, change }]) => {
        const key = cdcKeys.gtidMarks(topic, number);
        await redis
          .multi()
          .lpush(key, `${offset} ${change.gtid}`)
          .ltrim(key, 0, marksKept - 1)
          .exec();
        markedAt.set(partition, now);
      }),
    ]);
    if (identity === screened.identity) return;
    const lost = await lostOf(
      identity,
      applied.map(({ change }) => change).filter((change) => !screened.lost.has(change)),
    );
    if (!lost.length) return;
    await name(lost, "applied while the new primary was being recorded");
    await redis.hset(binlogSourceKey, "forced-rebuild", "pending");
  }

  /** Reads the topics back after the failover seen at `seenAtMs` (the watchdog calls it once the cache is rebuilt). */
  async function find(seenAtMs: number): Promise<LostChange[]> {
    const before = await executedGtids(pool);
    if (!before) {
      logger.warn("the lost-commit check reads MySQL GTIDs: not run on this server");
      return [];
    }
    const server = serverOf((await readBinlogSource(pool)).identity);
    const read = await readBack(kafka, seenAtMs - lookbackMs, async (topic, partition) =>
      scanStart(await redis.lrange(cdcKeys.gtidMarks(topic, partition), 0, -1), before, server),
    );
    // Read after the topics' ends were taken: every change read was committed before, so a transaction
    // of the new primary among them is in this set, never taken for lost.
    const executed = (await executedGtids(pool)) ?? before;
    const lost = await name(
      read.changes.filter((change) => change.gtid !== undefined && !holdsGtid(executed, change.gtid)),
      "read back from the CDC topics",
    );
    const level = read.fromLookback ? "warn" : "info";
    logger[level](
      {
        lost: lost.length,
        transactions: new Set(lost.map((change) => change.gtid)).size,
        read: read.changes.length,
        partitions: read.partitions,
        fromLookback: read.fromLookback,
        lookbackMs,
      },
      read.fromLookback
        ? "lost-commit check done; partitions without a GTID mark the new primary holds were read from the lookback"
        : "lost-commit check after a change of database source done",
    );
    return lost;
  }

  return { find, screen, afterApply };
}

export type LostCommits = ReturnType<typeof createLostCommits>;

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

/**
 * Every change in the scanned topics from each partition's start (`startOf`, or the first record written
 * since `sinceMs` where it has none) up to their ends as they are now.
 */
async function readBack(
  kafka: Kafka,
  sinceMs: number,
  startOf: (topic: string, partition: number) => Promise<bigint | undefined>,
): Promise<{ changes: ChangeEvent[]; partitions: number; fromLookback: number }> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<string, bigint>();
  const starts: { topic: string; partition: number; offset: string }[] = [];
  let fromLookback = 0;
  try {
    for (const topic of scanned) {
      let byTime: { partition: number; offset: string }[] | undefined;
      for (const { partition, high, low } of await admin.fetchTopicOffsets(topic)) {
        let start = await startOf(topic, partition);
        if (start === undefined) {
          byTime ??= await admin.fetchTopicOffsetsByTimestamp(topic, Math.max(0, sinceMs));
          start = BigInt(byTime.find((p) => p.partition === partition)?.offset ?? high);
          fromLookback += 1;
        }
        if (start < BigInt(low)) start = BigInt(low);
        if (start >= BigInt(high)) continue;
        ends.set(`${topic}/${partition}`, BigInt(high));
        starts.push({ topic, partition, offset: String(start) });
      }
    }
  } finally {
    await admin.disconnect();
  }
  if (!starts.length) return { changes: [], partitions: 0, fromLookback };
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
  return { changes, partitions: starts.length, fromLookback };
}
