export {
  type ActivityWindow,
  type ApplyResult,
  applyActivityChange,
  applySkuChanges,
  removeActivity,
} from "./apply.ts";
export { parseRedisUrl, type RedisClient, type RedisClientOptions, redisClient } from "./client.ts";
export {
  type DirectoryAnswer,
  type DirectoryEntry,
  lookupDirectory,
  markDirectoryComplete,
  markDirectoryIncomplete,
  presentEntries,
  readDirectory,
  writeDirectory,
} from "./directory.ts";
export {
  activitySkusKey,
  appliedWatermarkKey,
  binlogSourceKey,
  buyerField,
  cacheEpochKey,
  cdcKeys,
  directoryKeys,
  driftCheckKey,
  driftIncidentsKey,
  endedGraceMs,
  parseSkuRef,
  rebuildQueueKey,
  type SkuKeys,
  skuKeys,
  skuRef,
  ticketKey,
  ticketOutcomesChannel,
  unitsBackChannel,
} from "./keys.ts";
export { type Lease, takeLease } from "./lease.ts";
export { type LoadResult, type SkuLoad, writeSkuLoad } from "./load.ts";
export {
  type FastPathLimits,
  type Queueing,
  type ReserveInput,
  type ReserveOutcome,
  releaseReservation,
  reserveArguments,
  reserveUnit,
} from "./reserve.ts";
export { type FlashgateRedis, reserveKeyCount, scriptSource, withScripts } from "./scripts.ts";
export { type CachedSku, type PublicSkuState, publicState, readCachedSku } from "./sku-view.ts";
export { forgetPlace, type QueuedPlace, readTicket, recordOutcomes, recordQueued } from "./tickets.ts";
