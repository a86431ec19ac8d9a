import { appliedWatermarkKey, readCachedSku } from "@flashgate/cache";
import { reconcile } from "@flashgate/sync";
import {
  type AppProcess,
  adminToken,
  cachedAvailable,
  clients,
  createSale,
  eventually,
  expectConverged,
  freshIds,
  startMaintainer,
} from "@flashgate/testkit";
import { type ApiHarness, soldOutSale, startApi } from "@flashgate/testkit/purchase-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

describe("back-office writes reach Redis only through CDC", () => {
  let api: ApiHarness;
  const c = clients();
  let maintainer: AppProcess | undefined;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => {
    await maintainer?.kill();
    await api.close();
    await c.close();
  });

  const restock = (sale: { activityId: number; skuId: number }, delta: number) =>
    fetch(`${api.url}/admin/v1/activities/${sale.activityId}/skus/${sale.skuId}/restock`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${adminToken(api.config.ADMIN_JWT_SECRET, "bob")}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ delta, reason: "test restock" }),
    });

  it("with the maintainer stopped an admin restock changes MySQL, not Redis; once it runs Redis catches up", async () => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 1 });
    await api.load(sale.activityId, sale.skuId);
    expect((await restock(sale, 10)).status).toBe(200);
    const [rows] = await c.pool.query(
      "SELECT available FROM sale_stock WHERE activity_id = ? AND sku_id = ?",
      [sale.activityId, sale.skuId],
    );
    expect((rows as { available: number }[])[0].available).toBe(11);
    expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(1);

    maintainer = await startMaintainer();
    await expectConverged(c, sale.activityId, sale.skuId);
    expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(11);
  });

  it("a restock through the API and one through raw SQL each make a sold-out SKU sellable", async () => {
    maintainer ??= await startMaintainer();
    const sale = await soldOutSale(c, api);

    expect((await restock(sale, 1)).status).toBe(200);
    await eventually(async () => expect((await api.purchase(2, sale)).status).toBe(201));
    await expectConverged(c, sale.activityId, sale.skuId);
    expect((await api.purchase(3, sale)).body.code).toBe("SOLD_OUT");

    await c.pool.query(
      "UPDATE sale_stock SET available = available + 1 WHERE activity_id = ? AND sku_id = ?",
      [sale.activityId, sale.skuId],
    );
    await eventually(async () => expect((await api.purchase(3, sale)).status).toBe(201));
  });

  it("the admin SKU view gives a quiet SKU the drift check's verdict: in-sync, not behind", async () => {
    maintainer ??= await startMaintainer();
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 4 });
    await expectConverged(c, sale.activityId, sale.skuId);
    // Quiet: heartbeats committed after the SKU's last change have been applied since.
    const skuPosition = (await readCachedSku(c.redis, sale.activityId, sale.skuId))?.position ?? "";
    await eventually(async () =>
      expect(((await c.redis.get(appliedWatermarkKey)) ?? "") > skuPosition, "watermark past the SKU").toBe(
        true,
      ),
    );
    const check = await reconcile(c.pool, c.redis, { activityId: sale.activityId, recordIncidents: false });
    expect(check.skus.map((sku) => sku.verdict)).toEqual(["in-sync"]);
    const view = await fetch(`${api.url}/admin/v1/activities/${sale.activityId}/skus/${sale.skuId}`, {
      headers: { authorization: `Bearer ${adminToken(api.config.ADMIN_JWT_SECRET, "bob")}` },
    });
    expect(await view.json()).toMatchObject({ drift: "in-sync", cache: { stock: 4 } });
  });
});
