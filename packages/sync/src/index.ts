export { cacheMatches, compareSku, readCacheState, type SkuComparison, type SkuState } from "./drift.ts";
export { loadDirectoryFromDatabase } from "./load-directory.ts";
export { loadSkuFromDatabase } from "./load-sku.ts";
export {
  checkSku,
  type DriftCheck,
  type DriftVerdict,
  driftIncidents,
  driftVerdicts,
  latestDriftCheck,
  type PublishedDriftCheck,
  publishDriftCheck,
  reconcile,
  recordIncident,
  type SkuDriftReport,
  skuVerdicts,
} from "./reconcile.ts";
