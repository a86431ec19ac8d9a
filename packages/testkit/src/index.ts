export { adminToken, idempotencyKey, type Problem, problemOf, serveApp, userToken } from "./api-harness.ts";
export { fastDatabaseUrl, fastRedisUrl, fastTierContext, stackEnv, testContext } from "./env.ts";
export { eventually } from "./eventually.ts";
export { freshIds } from "./ids.ts";
export { type AppProcess, freePort, startAppProcess } from "./processes.ts";
export { saleChangesOf } from "./sale-changes.ts";
export { createSale, type SaleFixture, type SkuLedger, skuLedger, sold } from "./sale-fixture.ts";
export { startTcpProxy, type TcpProxy } from "./tcp-proxy.ts";
export { testEngine, testStackEnv } from "./test-stack.ts";
