import { skuKeys } from "@flashgate/cache";
import {
  type AppProcess,
  clients,
  createSale,
  eventually,
  expectConverged,
  freshIds,
  startMaintainer,
} from "@flashgate/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { flashgate } from "./cli.ts";

const check = async (activityId: number, ...flags: string[]) => {
  const result = await flashgate("drift", "check", "--activity", String(activityId), "--json", ...flags);
  return {
    code: result.code,
    report: JSON.parse(result.stdout) as { skus: { verdict: string }[]; remaining: number; repaired: number },
  };
};

describe("drift detection and repair", () => {
  const c = clients();
  let maintainer: AppProcess;
  beforeAll(async () => {
    maintainer = await startMaintainer({
      DRIFT_INTERVAL_MS: "1000",
      DRIFT_AUTO_REPAIR: "false",
      CDC_STALL_MS: "0",
    });
  });
  afterAll(async () => {
    await maintainer.kill();
    await c.close();
  });

  it("flags a hand-made difference at its next check pass, and --repair clears it", async () => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 8 });
    await expectConverged(c, sale.activityId, sale.skuId);
    expect((await check(sale.activityId)).report.skus.map((s) => s.verdict)).toEqual(["in-sync"]);

    await c.redis.hset(skuKeys(sale.activityId, sale.skuId).sku, "available", "800");
    await eventually(
      async () => {
        const metrics = await (await fetch(`${maintainer.url}/metrics`)).text();
        expect(metrics).toMatch(/^flashgate_drift_skus [1-9]/m);
      },
      // A pass checks every live SKU of the shared test database (hundreds by the time this file runs,
      // each read from MySQL and Redis in turn): it can take seconds longer than the 1 s interval.
      { timeoutMs: 30_000 },
    );
    const flagged = await check(sale.activityId);
    expect(flagged.code).toBe(1);
    expect(flagged.report.skus.map((s) => s.verdict)).toEqual(["drift"]);

    const repaired = await check(sale.activityId, "--repair");
    expect([repaired.code, repaired.report.repaired]).toEqual([0, 1]);
    const after = await check(sale.activityId);
    expect([after.code, after.report.skus.map((s) => s.verdict)]).toEqual([0, ["in-sync"]]);
  });

  it("reports no drift while CDC is paused and MySQL changes, and in-sync once caught up", async () => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 8 });
    await expectConverged(c, sale.activityId, sale.skuId);
    expect((await flashgate("connectors", "pause", "flashgate-sale")).code).toBe(0);
    try {
      await eventually(async () =>
        expect((await flashgate("connectors", "status", "flashgate-sale")).stdout).toMatch(/PAUSED/),
      );
      await c.pool.query("UPDATE sale_stock SET available = 3 WHERE activity_id = ? AND sku_id = ?", [
        sale.activityId,
        sale.skuId,
      ]);
      const during = await check(sale.activityId);
      expect(during.code).toBe(0);
      expect(during.report.skus.map((s) => s.verdict)).toEqual(["behind"]);
    } finally {
      await flashgate("connectors", "resume", "flashgate-sale");
    }
    await expectConverged(c, sale.activityId, sale.skuId, 60_000);
    await eventually(async () =>
      expect((await check(sale.activityId)).report.skus.map((s) => s.verdict)).toEqual(["in-sync"]),
    );
  });
});
