import {
  applyActivityChange,
  applySkuChanges,
  cdcKeys,
  type DirectoryEntry,
  type FlashgateRedis,
  rebuildQueueKey,
  removeActivity,
  skuRef,
  writeDirectory,
} from "@flashgate/cache";
import {
  type ActivityChange,
  parseChange,
  type SaleChange,
  toActivityChange,
  topics,
  toSaleChange,
} from "@flashgate/cdc";
import type { Logger } from "@flashgate/logger";
import { loadSkuFromDatabase } from "@flashgate/sync";
import type { Pool } from "mysql2/promise";
import { isSkuFailure } from "./failures.ts";
import type { AppliedChange, LostCommits } from "./lost-commits.ts";
import type { MaintainerMetrics } from "./metrics.ts";

/** What the applier reads of a Kafka record: the client's own records are handed over as they are. */
export interface InboundRecord {
  topic: string;
  partition: number;
  offset: bigint;
  key: string | undefined;
  value: string | undefined;
  /** Kafka's timestamp of the record (ms): when the broker appended it (LogAppendTime). */
  timestampMs?: number;
  /** When this maintainer received it (ms). */
  consumedAtMs?: number;
}

/** A sale change with the record that carried it and when Debezium read it from the binlog. */
interface Item {
  change: SaleChange;
  record: InboundRecord;
  emittedAtMs: number | undefined;
}

export interface DeadLetter {
  record: InboundRecord;
  reason: string;
}

/**
 * What a change tells the sale directory: an activity's window, or a SKU's stock row created or deleted
 * (an update changes no existence: a key change comes as a delete and a create).
 */
function directoryEntry(change: SaleChange | ActivityChange): DirectoryEntry | undefined {
  const { activityId, position } = change;
  switch (change.kind) {
    case "activity":
      return { kind: "activity", activityId, position, endsMs: change.endsMs };
    case "activity-gone":
      return { kind: "activity", activityId, position, endsMs: undefined };
    case "stock":
      return change.op === "u"
        ? undefined
        : { kind: "sku", activityId, skuId: change.skuId, position, exists: true };
    case "gone":
      return { kind: "sku", activityId, skuId: change.skuId, position, exists: false };
    case "order":
      return undefined;
  }
}

/** The stages between a commit and its apply, in order (flashgate_cdc_stage_seconds). */
const lagStages = ["binlog-read", "kafka-send", "consumed", "applied"] as const;

/** The SKU a sale record's key names ({"activity_id":…,"sku_id":…}), when it can be read. */
function skuOfKey(key: string | undefined): { activityId: number; skuId: number } | undefined {
  try {
    const { activity_id: activityId, sku_id: skuId } = JSON.parse(key ?? "");
    if (Number.isSafeInteger(activityId) && Number.isSafeInteger(skuId)) return { activityId, skuId };
  } catch {
    // An unreadable key names no SKU; the drift check still finds what it missed.
  }
  return undefined;
}

export function createApplier(deps: {
  redis: FlashgateRedis;
  pool: Pool;
  metrics: MaintainerMetrics;
  logger: Logger;
  /** Takes a SKU out of the cache until it can be rebuilt from MySQL (see Rebuilder.isolate). */
  isolate: (activityId: number, skuId: number, error: unknown) => Promise<void>;
  /** Names what a failover lost: such changes are left out of the batch (see LostCommits). */
  lostCommits?: Pick<LostCommits, "screen" | "afterApply">;
}) {
  const { redis, pool, metrics, logger, isolate } = deps;
  // Each source's stage histograms, bound once: observed for every change applied.
  const stagesOf = (source: "row" | "heartbeat") =>
    lagStages.map((stage) => metrics.stageLag.labels({ source, stage }));
  const stageHistograms = { row: stagesOf("row"), heartbeat: stagesOf("heartbeat") };

  /**
   * Commit → apply, and each stage of it: Debezium's read of the binlog (its envelope's ts_ms), Connect's
   * send until the broker appended it (the record's timestamp), Kafka's replication and this maintainer's
   * fetch until its receipt, and its apply. Each stage's clock is its host's: across hosts a skew shows in
   * the stages, never below 0.
   */
  function observeLag(
    source: "row" | "heartbeat",
    committedAtMs: number,
    emittedAtMs: number | undefined,
    record: InboundRecord,
    appliedAtMs: number,
  ) {
    metrics.lag.observe({ source }, Math.max(0, appliedAtMs - committedAtMs) / 1000);
    const marks = [committedAtMs, emittedAtMs, record.timestampMs, record.consumedAtMs, appliedAtMs];
    for (const [index, histogram] of stageHistograms[source].entries()) {
      const [from, to] = [marks[index], marks[index + 1]];
      if (from !== undefined && to !== undefined) histogram.observe(Math.max(0, to - from) / 1000);
    }
  }

  /**
   * A failure of this SKU alone isolates it: its changes are superseded by the rebuild from MySQL that
   * follows, so the batch (every other SKU's changes) goes on and is committed. A failure of Redis or
   * MySQL as a whole throws: the batch is held, uncommitted, and retried.
   */
  async function applySku(activityId: number, skuId: number, items: Item[]) {
    try {
      await applyInOrder(activityId, skuId, items);
    } catch (error) {
      if (!isSkuFailure(error)) throw error;
      await isolate(activityId, skuId, error);
    }
  }

  async function applyInOrder(activityId: number, skuId: number, items: Item[]) {
    let pending = items;
    for (let attempt = 0; attempt < 3 && pending.length > 0; attempt++) {
      const result = await applySkuChanges(
        redis,
        activityId,
        skuId,
        pending.map((item) => item.change),
      );
      metrics.events.inc({ kind: "sale", result: "applied" }, result.applied);
      metrics.events.inc({ kind: "sale", result: "skipped" }, result.skipped);
      if (result.verdict !== "REBUILD") break;
      // No state for this SKU (new, lost or expired): rebuild it from MySQL at a known position;
      // the remaining changes then apply on top or are skipped as already included.
      const loaded = await loadSkuFromDatabase(pool, redis, activityId, skuId);
      metrics.rebuilds.inc({ reason: "missing" });
      if (loaded === "unknown_sku" || loaded === "ended") return;
      pending = pending.slice(result.stoppedAt);
    }
    const now = Date.now();
    for (const { change, record, emittedAtMs } of items)
      if (change.committedAtMs) observeLag("row", change.committedAtMs, emittedAtMs, record, now);
    metrics.lastAppliedAt.set(now / 1000);
  }

  async function applyActivity(change: ActivityChange) {
    if (change.kind === "activity-gone") await removeActivity(redis, change.activityId);
    else {
      const { failed } = await applyActivityChange(redis, change.activityId, change);
      const shared = failed.find((failure) => !isSkuFailure(failure.error));
      if (shared) throw shared.error;
      for (const failure of failed) await isolate(change.activityId, failure.skuId, failure.error);
    }
    metrics.events.inc({ kind: change.kind, result: "handled" });
  }

  /**
   * Applies a batch in order per SKU; SKUs proceed concurrently (ioredis pipelines them). Returns the
   * records that can never be applied; connection failures throw so that nothing is committed.
   */
  async function applyBatch(
    records: InboundRecord[],
  ): Promise<{ dead: DeadLetter[]; heartbeat: string | undefined }> {
    const dead: DeadLetter[] = [];
    let heartbeat: string | undefined;
    let beatAt: number | undefined;
    const parsed: (AppliedChange & { record: InboundRecord; converted: SaleChange | ActivityChange })[] = [];
    for (const record of records) {
      try {
        const event = parseChange(record.value);
        if (!event) continue; // tombstone: the delete before it did the work
        if (record.topic === topics.heartbeat) {
          const beat = Number(event.after?.beat_at);
          if (Number.isFinite(beat)) {
            observeLag("heartbeat", beat, event.emittedAtMs, record, Date.now());
            beatAt = beat;
          }
          heartbeat = event.position;
          continue;
        }
        const converted = record.topic === topics.activity ? toActivityChange(event) : toSaleChange(event);
        const { topic, partition, offset } = record;
        parsed.push({ topic, partition, offset, change: event, record, converted });
      } catch (error) {
        dead.push({ record, reason: (error as Error).message });
      }
    }
    const screened = parsed.length
      ? await deps.lostCommits?.screen(parsed.map((item) => item.change))
      : undefined;
    const lost = screened?.lost ?? new Set();
    const bySku = new Map<string, { activityId: number; skuId: number; items: Item[] }>();
    const activities: ActivityChange[] = [];
    const directory: DirectoryEntry[] = [];
    for (const { change: event, record, converted: change } of parsed) {
      if (lost.has(event)) continue;
      const entry = directoryEntry(change);
      if (entry) directory.push(entry);
      if (change.kind === "activity" || change.kind === "activity-gone") {
        activities.push(change);
        continue;
      }
      const key = skuRef(change.activityId, change.skuId);
      let group = bySku.get(key);
      if (!group) {
        group = { activityId: change.activityId, skuId: change.skuId, items: [] };
        bySku.set(key, group);
      }
      group.items.push({ change, record, emittedAtMs: event.emittedAtMs });
    }
    await Promise.all([
      ...[...bySku.values()].map((group) => applySku(group.activityId, group.skuId, group.items)),
      directory.length ? writeDirectory(redis, directory) : undefined,
    ]);
    for (const activity of activities) await applyActivity(activity);
    // Every instance's stall fallback reads these: CDC has delivered MySQL up to this commit time, and
    // the stream still moves.
    await Promise.all([
      redis.set(cdcKeys.changesApplied, String(Date.now())),
      beatAt === undefined ? undefined : redis.set(cdcKeys.heartbeatApplied, String(beatAt)),
      screened ? deps.lostCommits?.afterApply(parsed, screened) : undefined,
    ]);
    for (const letter of dead) {
      metrics.deadLetters.inc();
      // The SKU missed this change: a rebuild from MySQL, which holds its effect, converges it.
      const sku = letter.record.topic === topics.sale ? skuOfKey(letter.record.key) : undefined;
      if (sku) await redis.sadd(rebuildQueueKey, skuRef(sku.activityId, sku.skuId));
      logger.warn(
        {
          topic: letter.record.topic,
          partition: letter.record.partition,
          offset: String(letter.record.offset),
          reason: letter.reason,
        },
        "dead letter",
      );
    }
    return { dead, heartbeat };
  }

  return { applyBatch };
}

export type Applier = ReturnType<typeof createApplier>;
