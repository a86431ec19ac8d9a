export {
  adminToken,
  basicAuthorization,
  idempotencyKey,
  type Problem,
  problemOf,
  serveApp,
  userToken,
} from "./api-harness.ts";
export {
  awaitPartitionsShared,
  cachedAvailable,
  clients,
  expectConverged,
  maintainerMetric,
  openSkuLoad,
  startMaintainer,
} from "./cache-harness.ts";
export { countedAccount, dbaConnection } from "./dba.ts";
export { fastDatabaseUrl, fastRedisUrl, fastTierContext, stackEnv, testContext } from "./env.ts";
export { eventually, failureOf } from "./eventually.ts";
export { freshIds } from "./ids.ts";
export { untilIdle, untilLockWait } from "./lock-wait.ts";
export { type AppProcess, freePort, startAppProcess } from "./processes.ts";
export { saleChangesOf } from "./sale-changes.ts";
export {
  addSkus,
  createActivity,
  createSale,
  type SaleFixture,
  skuInDatabase,
  sold,
} from "./sale-fixture.ts";
export { stackPart } from "./stack-part.ts";
export { startTcpProxy, type TcpProxy } from "./tcp-proxy.ts";
export { testEngine, testStackEnv } from "./test-stack.ts";
export { inWaves } from "./waves.ts";
