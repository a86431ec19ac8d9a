/**
 * Redis layout of one SKU. Every key carries the hash tag {a:s}, so each Lua call touches one slot and
 * runs unchanged on Redis Cluster.
 *   fg:{a:s}:sku      hash   available (as applied), price_cents, currency, starts_ms, ends_ms, rebuy,
 *                            admission (the activity's; empty: the API's PURCHASE_ADMISSION),
 *                            pos (last applied binlog position), lag sample fields, and the buyers:
 *                            b:<user id> for each user holding an order that blocks another purchase
 *                            (its value the order's key; "1" where it is not known),
 *                            their count in `buyers`. In the SKU's own hash, one HMGET answers a
 *                            rejection (window, stock and this user) in a single redis.call.
 *   fg:{a:s}:res      zset   in-flight reservations: member user id, score expiry (ms)
 *   fg:{a:s}:resreq   hash   user id → request id of that reservation
 *   fg:{a:s}:rl:<u>   string per-user request counter of the current rate window
 *   fg:{a:s}:load:<n> hash   one rebuild's staging copy of the SKU hash, renamed onto it when complete
 */
export interface SkuKeys {
  sku: string;
  reservations: string;
  reservationRequests: string;
  ratePrefix: string;
  loadPrefix: string;
}

export function skuKeys(activityId: number, skuId: number): SkuKeys {
  const tag = `{${activityId}:${skuId}}`;
  return {
    sku: `fg:${tag}:sku`,
    reservations: `fg:${tag}:res`,
    reservationRequests: `fg:${tag}:resreq`,
    ratePrefix: `fg:${tag}:rl:`,
    loadPrefix: `fg:${tag}:load:`,
  };
}

/** The SKU hash's fields of buyers start with this (the scripts get it as `buyer_prefix`). */
export const buyerPrefix = "b:";

/** The SKU hash's field of a buyer. */
export const buyerField = (userId: string) => `${buyerPrefix}${userId}`;

/** A SKU named in a message or a set member (the rebuild queue, the units-back channel): "<activity>:<sku>". */
export const skuRef = (activityId: number, skuId: number) => `${activityId}:${skuId}`;

export function parseSkuRef(ref: string): { activityId: number; skuId: number } | undefined {
  const [activityId, skuId] = ref.split(":").map(Number);
  return Number.isSafeInteger(activityId) && Number.isSafeInteger(skuId) ? { activityId, skuId } : undefined;
}

/** SKUs of an activity, so an activity change reaches each SKU's own slot. */
export const activitySkusKey = (activityId: number) => `fg:activity:${activityId}:skus`;

/**
 * The sale directory: which activities and SKUs exist and when each sale ends, kept from the binlog like
 * the rest and loaded whole from MySQL, so that an id the cache holds no state for is answered without
 * MySQL. One slot, {dir}: a lookup is one round trip, and the load writes many activities per call.
 *   fg:{dir}:a:<activity>  hash   w: "<position> <ends ms>" ("-" once deleted), s:<sku>: "<position> +"
 *                                 while its stock row exists ("-" once deleted); each fenced by position
 *   fg:{dir}:index         set    activity ids the directory holds entries of
 *   fg:{dir}:state         hash   complete: when the last full load finished; absent while it holds
 *                                 less than MySQL may (never loaded, FLUSHALL, a changed binlog source)
 */
export const directoryKeys = {
  activity: (activityId: number) => `fg:{dir}:a:${activityId}`,
  index: "fg:{dir}:index",
  state: "fg:{dir}:state",
} as const;

/** SKUs the API found missing in Redis; the maintainer rebuilds them from MySQL. */
export const rebuildQueueKey = "fg:rebuild";

/**
 * Set by the maintainer once the cache holds everything; gone after FLUSHALL or a Redis restart without
 * data. It names the layout: a cache written in an earlier one (layout 1 kept buyers in a set) lacks
 * this key, so the maintainer rebuilds every SKU in the current layout when it starts.
 */
export const cacheEpochKey = "fg:epoch:2";

/**
 * The binlog source the cache was built from (identity) and the furthest position the maintainer has
 * seen it at. A different identity, or a position behind that one, means the positions in the cache
 * belong to another binlog (failover, RESET MASTER, a restore). `forced-rebuild` is "pending" from the
 * moment such a change is recorded until the forced rebuild of every SKU it calls for has finished;
 * `reset-rebuild` from a reset of the connector's offsets (it then streams from the server's position
 * at that moment, with no snapshot) until every SKU has been rebuilt from MySQL.
 */
export const binlogSourceKey = "fg:binlog-source";

/**
 * Published (message "<activity>:<sku>") whenever units may have come back to a SKU in the cache — a
 * restock, a closure or expiry, a rebuild — so that API instances drop the sold-out snapshots they
 * answer from before anyone can buy those units.
 */
export const unitsBackChannel = "fg:units-back";

/**
 * A queued purchase's ticket (ADR 0030), by its user and Idempotency-Key: QUEUED from the moment the
 * buyer is put on the queue, then what the writer decided. Its own slot per user.
 */
export const ticketKey = (userId: string, requestId: string) => `fg:ticket:{${userId}}:${requestId}`;

/** Published ("<user id> <request id>") when a ticket's outcome is recorded, so that its waiters wake. */
export const ticketOutcomesChannel = "fg:ticket-outcomes";

/** Keys of an ended sale linger this long for the back-office, then expire. */
export const endedGraceMs = 24 * 3600 * 1000;

/** The newest drift incidents (repairs, isolations, repositions), at most 200, newest first. */
export const driftIncidentsKey = "fg:drift:incidents";

/** The maintainers' latest drift check, as the dashboard shows it (it holds no database account). */
export const driftCheckKey = "fg:drift:last";

/** The highest binlog position the maintainer has applied with nothing older left in hand (from heartbeats). */
export const appliedWatermarkKey = "fg:watermark";

/**
 * What every maintainer shares about the pipeline itself. The connector supervisor's restarts of a
 * FAILED connector are gated (`restartGate`, set for the wait before the next one) and counted
 * (`restarts`, forgotten once it has been RUNNING, as first seen at `runningSince`, for a while);
 * `reposition:<offset hash>` holds off a second reset of the same lost position by another instance;
 * `resetting` marks a reset or a GTID trim under way (the connector stopped by it) and `resetter` is its
 * maintainer's lease, its short-lived proof of life (renewed and released only by the holder of its
 * token), so that a reset whose maintainer died is finished by another; the two share a slot, so the mark
 * is set only by the lease's holder.
 */
export const cdcKeys = {
  restartGate: "fg:cdc:restart-gate",
  restarts: "fg:cdc:restarts",
  runningSince: "fg:cdc:running-since",
  reposition: (offsetHash: string) => `fg:cdc:reposition:${offsetHash}`,
  resetting: "fg:cdc:{reset}:resetting",
  resetter: "fg:cdc:{reset}:resetter",
  /** Commit time (ms) of the newest heartbeat row applied: how current CDC's view of MySQL is. */
  heartbeatApplied: "fg:cdc:heartbeat-applied",
  /** When (ms) a maintainer last applied a batch of CDC records: the stream moving, however far behind. */
  changesApplied: "fg:cdc:changes-applied",
  /**
   * Set by the rebuild watchdog when the binlog went back on the same server (RESET MASTER, a restore):
   * the connector's stored offset belongs to the history before, however valid its coordinates look
   * once the new history has outgrown them. Cleared by the reset it calls for.
   */
  historyReset: "fg:cdc:history-reset",
  /** Held by the maintainer reading the CDC topics back for a failover's lost commits: one at a time. */
  lostCommitCheck: "fg:cdc:lost-commit-check",
  /**
   * A CDC partition's GTID marks, newest first (`offset gtid`): where the lost-commit check starts
   * reading it back after a failover.
   */
  gtidMarks: (topic: string, partition: number) => `fg:cdc:gtid-marks:${topic}:${partition}`,
} as const;
