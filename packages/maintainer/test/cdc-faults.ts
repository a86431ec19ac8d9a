// The real faults the CDC healing tests cause (a wrong password, a reset binlog) and their checks.

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cdcKeys } from "@flashgate/cache";
import { connectClient, isRunning } from "@flashgate/connect";
import { serverErrors } from "@flashgate/db";
import { adminConnection, repoRoot } from "@flashgate/stack";
import {
  type AppProcess,
  cachedAvailable,
  type clients,
  createSale,
  eventually,
  expectConverged,
  freshIds,
  maintainerMetric,
  stackEnv,
  startMaintainer,
  testContext,
  testEngine,
} from "@flashgate/testkit";
import { type ApiHarness, soldOutSale, startApi } from "@flashgate/testkit/purchase-api";
import { afterAll, afterEach, beforeAll, expect } from "vitest";

export const connector = "flashgate-sale";

export const setAvailable = (
  c: ReturnType<typeof clients>,
  sale: { activityId: number; skuId: number },
  units: number,
) =>
  c.pool.query("UPDATE sale_stock SET available = ? WHERE activity_id = ? AND sku_id = ?", [
    units,
    sale.activityId,
    sale.skuId,
  ]);

export async function asRoot<T>(
  run: (admin: Awaited<ReturnType<typeof adminConnection>>) => Promise<T>,
): Promise<T> {
  const admin = await adminConnection(testContext());
  try {
    return await run(admin);
  } finally {
    await admin.end();
  }
}

export const setDebeziumPassword = (password: string) =>
  asRoot(async (admin) => {
    await admin.query("ALTER USER 'debezium'@'%' IDENTIFIED BY ?", [password]);
  });

/** The real thing: MySQL 8.4 renamed it; 8.0 and MariaDB know RESET MASTER. */
export const resetBinlog = () =>
  asRoot(async (admin) => {
    try {
      await admin.query("RESET BINARY LOGS AND GTIDS");
    } catch (error) {
      if ((error as { errno?: number }).errno !== serverErrors.parse) throw error;
      await admin.query("RESET MASTER");
    }
  });

export const resetStatement = `RESET MASTER (${testEngine})`;

/** A SKU sold out through CDC: the cache says 0 left. */
export async function soldOut(c: ReturnType<typeof clients>) {
  const sale = freshIds();
  await createSale(c.pool, { ...sale, units: 2 });
  await expectConverged(c, sale.activityId, sale.skuId);
  await setAvailable(c, sale, 0);
  await eventually(async () => expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(0));
  return sale;
}

/** Proves the stack whole again: the connector RUNNING (the supervisor's next restart may be a backoff away) and a change reaching Redis through CDC. */
export async function expectCdcFlows(c: ReturnType<typeof clients>) {
  const connect = connectClient(stackEnv().KAFKA_CONNECT_URL);
  await connect.waitUntil(connector, isRunning, { timeoutMs: 240_000, failedGraceMs: 240_000 });
  await connect.runningFor(connector, 2000, 60_000);
  const sale = freshIds();
  await createSale(c.pool, { ...sale, units: 3 });
  await expectConverged(c, sale.activityId, sale.skuId, 60_000);
}

/**
 * A real wrong password: the connector's task FAILED, as after any dropped connection, with the count of
 * earlier restarts cleared (as after a long healthy run). Returns a sale that had converged before. The
 * caller restores the password (setDebeziumPassword).
 */
export async function failTaskByWrongPassword(c: ReturnType<typeof clients>) {
  const sale = freshIds();
  await createSale(c.pool, { ...sale, units: 5 });
  await expectConverged(c, sale.activityId, sale.skuId);
  await c.redis.del(cdcKeys.restarts, cdcKeys.restartGate);
  await setDebeziumPassword("wrong-password-for-this-test");
  const connect = connectClient(stackEnv().KAFKA_CONNECT_URL);
  // A restart reconnects with the wrong password: the task fails.
  await connect.restart(connector, false);
  await eventually(
    async () => expect((await connect.status(connector)).tasks.map((t) => t.state)).toContain("FAILED"),
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  return sale;
}

/**
 * Sells a SKU out, breaks CDC (`breakCdc`, which the caller restores), waits until the maintainer sees the
 * stall, restocks by raw SQL: the ms until a buyer got 201. Nobody is told anything untrue meanwhile.
 */
export async function restockSoldFromMysql(
  c: ReturnType<typeof clients>,
  api: ApiHarness,
  maintainer: AppProcess,
  breakCdc: () => Promise<void>,
): Promise<number> {
  const sale = await soldOutSale(c, api);
  await breakCdc();
  // The stall is seen first, so the restock cannot have come through CDC.
  await eventually(async () => expect(await maintainerMetric(maintainer, "flashgate_cdc_stalled")).toBe(1), {
    timeoutMs: 60_000,
  });
  await setAvailable(c, sale, 1);
  const restocked = Date.now();
  await eventually(async () => expect((await api.purchase(2, sale)).status).toBe(201), {
    timeoutMs: 30_000,
    intervalMs: 100,
  });
  const tookMs = Date.now() - restocked;
  // The unit went to one buyer, MySQL agrees, the next is refused.
  expect((await api.purchase(3, sale)).body.code).toBe("SOLD_OUT");
  await expectConverged(c, sale.activityId, sale.skuId);
  return tookMs;
}

/**
 * Called inside a describe: a maintainer and an API for its tests; after each test, the fault it left in
 * `broken` restored and a change seen flowing through CDC; at the end, `timings` written to
 * test-artifacts/<artifact>.
 */
export function cdcOutageFixture(
  c: ReturnType<typeof clients>,
  timings: Record<string, number>,
  artifact: string,
) {
  const fixture = {} as {
    maintainer: AppProcess;
    api: ApiHarness;
    broken?: { restore: () => Promise<void> };
  };
  beforeAll(async () => {
    fixture.maintainer = await startMaintainer();
    fixture.api = await startApi();
  });
  afterEach(async () => {
    await fixture.broken?.restore();
    fixture.broken = undefined;
    await expectCdcFlows(c);
  }, 300_000);
  afterAll(async () => {
    await fixture.api.close();
    await fixture.maintainer.kill();
    await c.close();
    mkdirSync(join(repoRoot, "test-artifacts"), { recursive: true });
    writeFileSync(join(repoRoot, "test-artifacts", artifact), `${JSON.stringify(timings, null, 2)}\n`);
  });
  return fixture;
}
