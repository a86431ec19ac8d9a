import { skuKeys } from "@flashgate/cache";
import {
  createSale,
  eventually,
  freshIds,
  skuInDatabase,
  sold,
  stackEnv,
  startTcpProxy,
  type TcpProxy,
} from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import { afterEach, describe, expect, it } from "vitest";

describe("fail closed", () => {
  let api: ApiHarness | undefined;
  let proxy: TcpProxy | undefined;
  afterEach(async () => {
    await api?.close();
    await proxy?.close();
  });

  it("answers 503 at once with Redis unreachable, and attempts no database transaction", async () => {
    const env = stackEnv();
    const redisPort = Number(new URL(env.REDIS_URL).port);
    proxy = await startTcpProxy(redisPort);
    const viaProxy = new URL(env.REDIS_URL);
    viaProxy.port = String(proxy.port);
    api = await startApi({ redisUrl: viaProxy.toString() });
    const sale = freshIds();
    await createSale(api.pool, { ...sale, units: 10 });
    await api.load(sale.activityId, sale.skuId);

    await proxy.cut();
    const before = await api.transactions();
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => api?.purchase(500 + i, sale)));
    const elapsed = performance.now() - started;
    expect(results.every((r) => r?.status === 503 && r.body.code === "UNAVAILABLE")).toBe(true);
    expect(results[0]?.headers.get("retry-after")).toBeTruthy();
    expect(elapsed).toBeLessThan(1000);
    expect(await api.transactions()).toBe(before);
    expect(sold(await skuInDatabase(api.pool, sale.activityId, sale.skuId))).toBe(0);
    // Not swallowed: every failed call is counted (and logged, at most once a second).
    const failures = (await api.app.metrics.dependencyErrors.get()).values;
    expect(
      failures.find((v) => v.labels.dependency === "redis" && v.labels.operation === "reserve")?.value,
    ).toBe(50);
  });

  it("answers 503 with the database unreachable and frees the reservation once it returns", async () => {
    const env = stackEnv();
    const dbUrl = new URL(env.DATABASE_URL);
    proxy = await startTcpProxy(Number(dbUrl.port));
    dbUrl.port = String(proxy.port);
    api = await startApi({ databaseUrl: dbUrl.toString(), env: { RESERVATION_TTL_MS: "3000" } });
    const sale = freshIds();
    await createSale(api.pool, { ...sale, units: 1 });
    await api.load(sale.activityId, sale.skuId);

    await proxy.cut();
    const down = await api.purchase(77, sale);
    expect([down.status, down.body.code]).toEqual([503, "UNAVAILABLE"]);
    await proxy.restore();

    // The lone unit must be buyable again: the failed attempt released (or its TTL expired) its reservation.
    const keys = skuKeys(sale.activityId, sale.skuId);
    await eventually(
      async () => expect(await api?.redis.zcount(keys.reservations, Date.now(), "+inf")).toBe(0),
      { timeoutMs: 5000 },
    );
    const retry = await eventually(async () => {
      const result = await api?.purchase(78, sale);
      expect(result?.status).toBe(201);
      return result;
    });
    expect(retry?.body.state).toBe("PENDING");
    const ledger = await skuInDatabase(api.pool, sale.activityId, sale.skuId);
    expect(ledger.available + sold(ledger)).toBe(1);
  });
});
