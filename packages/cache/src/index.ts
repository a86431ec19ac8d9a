export {
  type ActivityWindow,
  type ApplyResult,
  applyActivityChange,
  applySkuChanges,
  removeActivity,
  type SkuChange,
} from "./apply.ts";
export { cacheMatches, compareSku, readCacheState, type SkuComparison, type SkuState } from "./drift.ts";
export {
  activitySkusKey,
  binlogSourceKey,
  buyerField,
  cacheEpochKey,
  parseSkuRef,
  rebuildQueueKey,
  type SkuKeys,
  skuKeys,
  skuRef,
  unitsBackChannel,
} from "./keys.ts";
export { endedGraceMs, type LoadResult, loadSkuFromDatabase, writeSkuSnapshot } from "./load-sku.ts";
export {
  appliedWatermarkKey,
  checkSku,
  type DriftCheck,
  type DriftVerdict,
  driftIncidents,
  listSkus,
  reconcile,
  recordIncident,
  type SkuDriftReport,
  skuVerdicts,
} from "./reconcile.ts";
export {
  type FastPathLimits,
  type ReserveInput,
  type ReserveOutcome,
  releaseReservation,
  reserveArguments,
  reserveKeyCount,
  reserveUnit,
} from "./reserve.ts";
export { type FlashgateRedis, scriptSource, withScripts } from "./scripts.ts";
export { type CachedSku, type PublicSkuState, publicState, readCachedSku } from "./sku-view.ts";
