import { createSale, freshIds } from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

describe("the public SKU view", () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => api.close());

  it("is revalidated by its ETag: 304 without a body while current, 200 with a new one once it changed", async () => {
    const sale = freshIds();
    await createSale(api.pool, { ...sale, units: 5 });
    await api.load(sale.activityId, sale.skuId);
    const path = `${api.url}/v1/activities/${sale.activityId}/skus/${sale.skuId}`;
    const first = await fetch(path);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ state: "OPEN", available: 5 });
    const etag = first.headers.get("etag") ?? "";
    expect(etag).toMatch(/^W\/".+"$/);
    expect(first.headers.get("cache-control")).toBe("public, max-age=1");

    // The same view, its trace id echoed, whether the bare handler or Hono (a query string) serves it.
    const traced = await fetch(path, { headers: { "x-request-id": "trace-view-1" } });
    expect(traced.headers.get("x-request-id")).toBe("trace-view-1");
    const viaHono = await fetch(`${path}?utm_source=mail`, { headers: { "x-request-id": "trace-view-2" } });
    expect([viaHono.status, viaHono.headers.get("etag"), viaHono.headers.get("x-request-id")]).toEqual([
      200,
      etag,
      "trace-view-2",
    ]);
    expect(await viaHono.json()).toEqual(await traced.json());
    expect((await fetch(`${path}?a=1`, { headers: { "if-none-match": etag } })).status).toBe(304);

    const revalidated = await fetch(path, { headers: { "if-none-match": `"other", ${etag}` } });
    expect(revalidated.status).toBe(304);
    expect(await revalidated.text()).toBe("");
    expect(revalidated.headers.get("etag")).toBe(etag);
    expect((await fetch(path, { headers: { "if-none-match": "*" } })).status).toBe(304);

    // A purchase reserves a unit: the view the client holds is no longer current.
    expect((await api.purchase(1, sale)).status).toBe(201);
    const changed = await fetch(path, { headers: { "if-none-match": etag } });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({ available: 4 });
    expect(changed.headers.get("etag")).not.toBe(etag);
  });

  it("is read from Redis once per VIEW_CACHE_MS by each instance, whatever the crowd", async () => {
    const holding = await startApi({ env: { VIEW_CACHE_MS: "60000" } });
    try {
      const sale = freshIds();
      await createSale(api.pool, { ...sale, units: 5 });
      await api.load(sale.activityId, sale.skuId);
      const path = `/v1/activities/${sale.activityId}/skus/${sale.skuId}`;
      const viewOf = async (on: ApiHarness) =>
        ((await (await fetch(`${on.url}${path}`)).json()) as { available: number }).available;
      expect(await viewOf(holding)).toBe(5);
      expect((await api.purchase(1, sale)).status).toBe(201);
      // The instance that holds the view answers it as it read it; one that holds none reads Redis.
      expect(await viewOf(holding)).toBe(5);
      expect(await viewOf(api)).toBe(4);
    } finally {
      await holding.close();
    }
  });
});
