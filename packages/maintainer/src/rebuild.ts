import {
  appliedWatermarkKey,
  binlogSourceKey,
  cacheEpochKey,
  cdcKeys,
  directoryKeys,
  type FlashgateRedis,
  parseSkuRef,
  rebuildQueueKey,
  skuKeys,
  skuRef,
  takeLease,
} from "@flashgate/cache";
import { binlogPosition } from "@flashgate/cdc";
import { liveSkus, readBinlogSource } from "@flashgate/db";
import type { Logger } from "@flashgate/logger";
import { loadDirectoryFromDatabase, loadSkuFromDatabase, recordIncident } from "@flashgate/sync";
import type { Pool } from "mysql2/promise";
import { isSkuFailure } from "./failures.ts";
import type { MaintainerMetrics } from "./metrics.ts";

async function inParallel<T>(items: T[], width: number, task: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await task(items[next++]);
    }),
  );
}

interface Isolated {
  activityId: number;
  skuId: number;
  attempts: number;
  nextAt: number;
}

const retryBaseMs = 500;
const retryMaxMs = 60_000;
/**
 * The lost-commit check's lease, renewed while it reads: one maintainer checks at a time, one that died
 * holding it frees it this soon, and a check stalled past it neither renews nor frees another's.
 */
const lostCommitCheckLeaseMs = 30_000;

/**
 * Detects lost Redis data (FLUSHALL, a restart without persistence) by the epoch key the maintainer
 * sets after a full load, and rebuilds every SKU of a live or recent sale from MySQL. Also serves the
 * SKUs the API asked for (it finds them missing and queues them), and retries isolated SKUs.
 *
 * A SKU that fails on its own (see isSkuFailure) never stops the others: it is isolated — its keys
 * deleted, so the API answers 503 for it alone and nothing stale is served — and rebuilt with backoff.
 * Its CDC changes meanwhile are superseded by that rebuild, which reads MySQL at a later position.
 */
export function createRebuilder(deps: {
  redis: FlashgateRedis;
  pool: Pool;
  metrics: MaintainerMetrics;
  logger: Logger;
  /** Names the commits a failover lost (lost-commits.ts), given when the new source was first seen. */
  findLostCommits?: (seenAtMs: number) => Promise<unknown>;
}) {
  const { redis, pool, metrics, logger } = deps;
  const isolated = new Map<string, Isolated>();
  let running: Promise<void> | undefined;
  let checkingLostCommits = false;

  async function isolate(activityId: number, skuId: number, error: unknown) {
    const keys = skuKeys(activityId, skuId);
    await redis.del(keys.sku, keys.reservations, keys.reservationRequests);
    const key = skuRef(activityId, skuId);
    const entry = isolated.get(key) ?? { activityId, skuId, attempts: 0, nextAt: 0 };
    entry.attempts += 1;
    entry.nextAt = Date.now() + Math.min(retryMaxMs, retryBaseMs * 2 ** (entry.attempts - 1));
    const fresh = !isolated.has(key);
    isolated.set(key, entry);
    metrics.isolatedSkus.set(isolated.size);
    if (!fresh) return;
    metrics.isolations.inc();
    const reason = (error as Error).message;
    logger.error(
      { activityId, skuId, err: reason },
      "SKU isolated: it fails on its own; rebuilding it from MySQL",
    );
    await recordIncident(redis, { kind: "isolated", activityId, skuId, reason: reason.slice(0, 300) });
  }

  /** Loads one SKU; a failure of its own isolates it, a failure of a dependency throws. */
  async function rebuild(activityId: number, skuId: number, force = false): Promise<void> {
    try {
      await loadSkuFromDatabase(pool, redis, activityId, skuId, { force });
    } catch (error) {
      if (!isSkuFailure(error)) throw error;
      await isolate(activityId, skuId, error);
      return;
    }
    if (isolated.delete(skuRef(activityId, skuId))) {
      metrics.isolatedSkus.set(isolated.size);
      logger.info({ activityId, skuId }, "isolated SKU rebuilt");
      await recordIncident(redis, { kind: "recovered", activityId, skuId });
    }
  }

  /** The sale directory first: it is one read, and ids the cache lacks are answered from it once loaded. */
  async function loadDirectory(reason: string, force = false) {
    const started = Date.now();
    const loaded = await loadDirectoryFromDatabase(pool, redis, { force });
    logger.info({ ...loaded, reason, ms: Date.now() - started }, "sale directory loaded from MySQL");
  }

  async function rebuildAll(reason: string, force = false): Promise<number> {
    const started = Date.now();
    await loadDirectory(reason, force);
    const rows = await liveSkus(pool);
    await inParallel(rows, 8, (sku) => rebuild(sku.activityId, sku.skuId, force));
    metrics.rebuilds.inc({ reason }, rows.length);
    await redis.set(cacheEpochKey, String(Date.now()));
    logger.info(
      { skus: rows.length, isolated: isolated.size, reason, ms: Date.now() - started },
      "cache rebuilt from MySQL",
    );
    return rows.length;
  }

  /** Rebuilds these SKUs, fenced by position, eight at a time. */
  async function rebuildSkus(skus: { activityId: number; skuId: number }[], reason: string): Promise<void> {
    await inParallel(skus, 8, (sku) => rebuild(sku.activityId, sku.skuId));
    if (skus.length) metrics.rebuilds.inc({ reason }, skus.length);
  }

  async function drainQueue(): Promise<number> {
    const requested = (await redis.spop(rebuildQueueKey, 100)) as string[];
    const due = [...isolated.values()].filter((entry) => entry.nextAt <= Date.now());
    // An isolated SKU is rebuilt on its own backoff, however often the API asks for it.
    const skus = [...requested.flatMap((ref) => (isolated.has(ref) ? [] : (parseSkuRef(ref) ?? []))), ...due];
    try {
      await inParallel(skus, 8, (sku) => rebuild(sku.activityId, sku.skuId));
    } catch (error) {
      // Redis or MySQL failed: whoever asked still needs the rebuild on the next pass.
      if (requested.length) await redis.sadd(rebuildQueueKey, ...requested).catch(() => {});
      throw error;
    }
    if (requested.length) metrics.rebuilds.inc({ reason: "requested" }, requested.length);
    if (due.length) metrics.rebuilds.inc({ reason: "isolated" }, due.length);
    return skus.length;
  }

  /**
   * Whether the binlog source changed since the last pass: another server (failover), or the same one
   * behind where it was seen (RESET MASTER, a restore). Records where it stands now either way.
   */
  async function sourceChanged(): Promise<boolean> {
    const [identity, seen] = await redis.hmget(binlogSourceKey, "identity", "seen");
    // Read after what another maintainer may have recorded, so that its newer read is never taken
    // for a step back.
    const source = await readBinlogSource(pool);
    const position = binlogPosition(source.file, source.pos);
    const changed = identity !== null && (identity !== source.identity || (seen !== null && position < seen));
    if (changed) {
      metrics.sourceChanges.inc();
      logger.error(
        { was: { identity, seen }, now: { identity: source.identity, position } },
        "binlog source changed: every cached position belongs to another binlog; rebuilding all SKUs",
      );
      await recordIncident(redis, { kind: "source-changed", was: identity, now: source.identity, position });
      // The same server's binlog went back: the connector's stored offset is from the history before.
      if (identity === source.identity) await redis.set(cdcKeys.historyReset, position);
    }
    // Another server: what the cache saw from the old one may be missing from the new one.
    const failedOver = changed && identity !== source.identity;
    // The pending forced rebuild is recorded with the new identity, so a maintainer killed or failing
    // before it is done leaves it for the next pass, whichever maintainer runs that.
    await redis.hset(
      binlogSourceKey,
      "identity",
      source.identity,
      "seen",
      position,
      ...(changed ? ["forced-rebuild", "pending"] : []),
      ...(failedOver ? ["lost-commit-check", String(Date.now())] : []),
    );
    return changed;
  }

  /**
   * After a failover, once the cache is rebuilt; beside the watchdog's passes, which go on serving
   * rebuilds while the topics are read back. Left pending for a later pass (any maintainer's) if it fails.
   */
  function startLostCommitCheck() {
    if (checkingLostCommits) return;
    checkingLostCommits = true;
    checkLostCommits()
      .catch((error: Error) =>
        logger.error({ err: error.message }, "the lost-commit check failed; the next pass tries again"),
      )
      .finally(() => {
        checkingLostCommits = false;
      });
  }

  async function checkLostCommits(): Promise<void> {
    const seenAt = await redis.hget(binlogSourceKey, "lost-commit-check");
    if (!seenAt || !deps.findLostCommits) return;
    const lease = await takeLease(redis, cdcKeys.lostCommitCheck, lostCommitCheckLeaseMs);
    if (!lease) return;
    const renew = setInterval(() => lease.renew().catch(() => false), lostCommitCheckLeaseMs / 3);
    try {
      await deps.findLostCommits(Number(seenAt));
      if ((await redis.hget(binlogSourceKey, "lost-commit-check")) === seenAt)
        await redis.hdel(binlogSourceKey, "lost-commit-check");
    } finally {
      clearInterval(renew);
      await lease.release();
    }
  }

  /**
   * One pass of the watchdog: a changed binlog source, a reset connector or a missing epoch rebuilds
   * everything (the first forced, since the old positions fence nothing), then queued and due SKUs.
   * Never overlaps itself.
   */
  async function check(): Promise<void> {
    if (running) return running;
    running = (async () => {
      const [forced, afterReset] = await redis.hmget(binlogSourceKey, "forced-rebuild", "reset-rebuild");
      if (await sourceChanged()) {
        // The watermark and the positions it fenced belong to the old binlog.
        await redis.del(appliedWatermarkKey);
        await rebuildAll("source-changed", true);
        await redis.hdel(binlogSourceKey, "forced-rebuild", ...(afterReset ? ["reset-rebuild"] : []));
      } else if (forced === "pending") {
        logger.warn("resuming the forced rebuild an earlier pass began after a binlog source change");
        await rebuildAll("source-changed-resumed", true);
        await redis.hdel(binlogSourceKey, "forced-rebuild", ...(afterReset ? ["reset-rebuild"] : []));
      } else if (afterReset === "pending") {
        await rebuildAll("connector-reset");
        await redis.hdel(binlogSourceKey, "reset-rebuild");
      } else if (!(await redis.exists(cacheEpochKey))) await rebuildAll("epoch-missing");
      else if (!(await redis.hexists(directoryKeys.state, "complete")))
        await loadDirectory("directory-missing");
      await drainQueue();
      startLostCommitCheck();
    })().finally(() => {
      running = undefined;
    });
    return running;
  }

  return { rebuildSkus, rebuildAll, drainQueue, check, isolate };
}

export type Rebuilder = ReturnType<typeof createRebuilder>;
