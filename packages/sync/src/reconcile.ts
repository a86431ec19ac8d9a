import {
  appliedWatermarkKey,
  driftCheckKey,
  driftIncidentsKey,
  type FlashgateRedis,
  skuKeys,
} from "@flashgate/cache";
import { binlogPosition } from "@flashgate/cdc";
import { binlogCoordinates, liveSkus, readSkuSnapshot, type SkuSnapshot } from "@flashgate/db";
import type { Pool } from "mysql2/promise";
import { cacheMatches, databaseState, readCacheState } from "./drift.ts";
import { loadSkuFromDatabase } from "./load-sku.ts";

export const driftVerdicts = ["in-sync", "drift", "behind", "changing"] as const;
export type DriftVerdict = (typeof driftVerdicts)[number];

export interface SkuDriftReport {
  activityId: number;
  skuId: number;
  verdict: DriftVerdict;
  database: { available: number; buyers: number } | null;
  cache: { available: number; buyers: number; reservations: number; position: string | null } | null;
  readPosition: string;
}

/**
 * Compares one SKU without false alarms while CDC is merely behind: MySQL is read at P1, the cache,
 * then MySQL again at P2. Only if the maintainer has applied past P1 and the SKU did not change
 * between P1 and P2 must the cache equal MySQL; otherwise the verdict is "behind" or "changing".
 */
export async function checkSku(
  pool: Pool,
  redis: FlashgateRedis,
  activityId: number,
  skuId: number,
  earlier?: { snapshot: SkuSnapshot | undefined },
): Promise<SkuDriftReport & { snapshot: SkuSnapshot | undefined }> {
  // A re-check keeps the first read: the probe's writes move the binlog forward every second, so a
  // fresh read would always be just ahead of what CDC has delivered.
  const first = earlier ? earlier.snapshot : await readSkuSnapshot(pool, activityId, skuId);
  const keys = skuKeys(activityId, skuId);
  const [state, reservations, watermark] = await Promise.all([
    readCacheState(redis, activityId, skuId),
    redis.zcount(keys.reservations, Date.now(), "+inf"),
    redis.get(appliedWatermarkKey),
  ]);
  const second = await readSkuSnapshot(pool, activityId, skuId);
  const readAt = first ? binlogPosition(first.binlogFile, first.binlogPos) : "";
  const cache = state
    ? { available: state.available, buyers: state.buyers.length, reservations, position: state.position }
    : null;
  const database = first ? { available: first.available, buyers: first.buyers.length } : null;
  const report = (verdict: DriftVerdict) => ({
    activityId,
    skuId,
    verdict,
    database,
    cache,
    readPosition: readAt,
    snapshot: first,
  });
  if (!first && !cache) return report("in-sync");
  if (!cacheMatches(databaseState(first), databaseState(second))) return report("changing");
  const applied = [cache?.position ?? "", watermark ?? ""].some((position) => position >= readAt);
  if (!applied) return report("behind");
  const equal = cacheMatches(databaseState(first), state);
  return report(equal ? "in-sync" : "drift");
}

export interface DriftCheck {
  checkedAt: number;
  skus: SkuDriftReport[];
  drifted: SkuDriftReport[];
  repaired: number;
}

/**
 * The drift verdict of each SKU, settled: "behind" usually means only that the next heartbeat has not
 * been applied yet (the last one read sits just before the read position), so the SKUs still behind or
 * changing are looked at again for up to `settleMs`, keeping their first read. A paused or broken
 * pipeline stays "behind", never "drift". Every caller — the periodic check, the CLI, the admin view —
 * gets its verdict from here.
 */
export async function skuVerdicts(
  pool: Pool,
  redis: FlashgateRedis,
  skus: { activityId: number; skuId: number }[],
  settleMs = 3000,
): Promise<(SkuDriftReport & { snapshot: SkuSnapshot | undefined })[]> {
  const reports: (SkuDriftReport & { snapshot: SkuSnapshot | undefined })[] = [];
  for (const sku of skus) reports.push(await checkSku(pool, redis, sku.activityId, sku.skuId));
  const settleUntil = Date.now() + settleMs;
  while (
    reports.some((r) => r.verdict === "behind" || r.verdict === "changing") &&
    Date.now() < settleUntil
  ) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (const [index, report] of reports.entries()) {
      if (report.verdict === "behind")
        reports[index] = await checkSku(pool, redis, report.activityId, report.skuId, report);
      else if (report.verdict === "changing")
        reports[index] = await checkSku(pool, redis, report.activityId, report.skuId);
    }
  }
  return reports;
}

/** Checks every live SKU (or one activity's); with repair, rebuilds drifted SKUs from MySQL, fenced by position. */
export async function reconcile(
  pool: Pool,
  redis: FlashgateRedis,
  options: {
    activityId?: number;
    repair?: boolean;
    settleMs?: number;
    limit?: number;
    recordIncidents?: boolean;
  } = {},
): Promise<DriftCheck> {
  const skus = await liveSkus(pool, { activityId: options.activityId, limit: options.limit ?? 5000 });
  const reports = await skuVerdicts(pool, redis, skus, options.settleMs);
  const plain = reports.map(({ snapshot: _, ...report }): SkuDriftReport => report);
  const drifted = plain.filter((report) => report.verdict === "drift");
  let repaired = 0;
  // Nothing applied from this binlog can be past its position now: a cached position that is belongs
  // to an earlier binlog (a source change whose forced rebuild never reached the SKU), and only a forced
  // load can replace it.
  const now = drifted.length && options.repair ? await binlogCoordinates(pool) : undefined;
  const current = now ? binlogPosition(now.file, now.pos, 999_999) : "";
  for (const report of drifted) {
    if (options.recordIncidents ?? true) await recordIncident(redis, { kind: "detected", ...report });
    if (!options.repair) continue;
    const force = (report.cache?.position ?? "") > current;
    if ((await loadSkuFromDatabase(pool, redis, report.activityId, report.skuId, { force })) === "loaded") {
      repaired += 1;
      await recordIncident(redis, { kind: "repaired", activityId: report.activityId, skuId: report.skuId });
    }
  }
  return { checkedAt: Date.now(), skus: plain, drifted, repaired };
}

/** Appends to the incident log the dashboard shows (drift found and repaired, SKUs isolated and recovered). */
export async function recordIncident(redis: FlashgateRedis, incident: Record<string, unknown>) {
  await redis
    .multi()
    .lpush(driftIncidentsKey, JSON.stringify({ at: Date.now(), ...incident }))
    .ltrim(driftIncidentsKey, 0, 199)
    .exec();
}

export async function driftIncidents(redis: FlashgateRedis, count = 50): Promise<Record<string, unknown>[]> {
  return (await redis.lrange(driftIncidentsKey, 0, count - 1)).map((line) => JSON.parse(line));
}

/** A check as published for viewers: when it ran, how many SKUs it compared, the first of them (drifted first). */
export interface PublishedDriftCheck {
  checkedAt: number;
  compared: number;
  skus: SkuDriftReport[];
}

/** A published check holds at most this many SKUs: what a page shows, not a deployment's whole catalogue. */
const publishedSkus = 200;

/**
 * Publishes the maintainer's check, so that a viewer shows its verdicts without a database account of
 * its own (a verdict needs share-locking reads, which are a writer's privilege).
 */
export async function publishDriftCheck(redis: FlashgateRedis, check: DriftCheck) {
  const rest = check.skus.filter((sku) => sku.verdict !== "drift");
  const published: PublishedDriftCheck = {
    checkedAt: check.checkedAt,
    compared: check.skus.length,
    skus: [...check.drifted, ...rest].slice(0, publishedSkus),
  };
  await redis.set(driftCheckKey, JSON.stringify(published));
}

export async function latestDriftCheck(redis: FlashgateRedis): Promise<PublishedDriftCheck | undefined> {
  const text = await redis.get(driftCheckKey);
  return text ? (JSON.parse(text) as PublishedDriftCheck) : undefined;
}
