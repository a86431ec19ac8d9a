import { writeSkuLoad } from "@flashgate/cache";
import { binlogPosition } from "@flashgate/cdc";
import {
  type AppProcess,
  createSale,
  eventually,
  freshIds,
  openSkuLoad,
  skuInDatabase,
  sold,
  startMaintainer,
} from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Several API instances share one Redis and one MySQL. What an instance answers on its own is the
 * sold-out shortcut alone (SOLD_OUT and ALREADY_PURCHASED, for at most SOLD_OUT_CACHE_MS, dropped on
 * every instance when units come back); the rate limit, reservations and the decision are shared.
 */
describe("two API instances against one sale", () => {
  let a: ApiHarness;
  let b: ApiHarness;
  let maintainer: AppProcess;
  beforeAll(async () => {
    [a, b] = await Promise.all([
      startApi({ env: { RATE_LIMIT: "3" } }),
      startApi({ env: { RATE_LIMIT: "3" } }),
    ]);
    maintainer = await startMaintainer();
  });
  afterAll(async () => {
    await maintainer?.kill();
    await Promise.all([a?.close(), b?.close()]);
  });

  it("sell exactly the units between them", async () => {
    const sale = freshIds();
    await createSale(a.pool, { ...sale, units: 20 });
    await a.load(sale.activityId, sale.skuId);
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).purchase(5_000_000 + i, sale)),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(20);
    expect(answers.every((answer) => answer.status === 201 || answer.body.code === "SOLD_OUT")).toBe(true);
    expect(sold(await skuInDatabase(a.pool, sale.activityId, sale.skuId))).toBe(20);
  });

  it("count a user's requests to either instance against one rate limit", async () => {
    // Redis believes in units MySQL does not have (loaded at a position past anything CDC will bring):
    // every request is counted, then refused by MySQL.
    const sale = freshIds();
    await createSale(a.pool, { ...sale, units: 0 });
    const ahead = binlogPosition("binlog.999999", 1, 0);
    await writeSkuLoad(a.redis, sale.activityId, sale.skuId, openSkuLoad({ available: 5, position: ahead }));
    const codes = [];
    for (const api of [a, b, a, b]) codes.push((await api.purchase(6_000_001, sale)).body.code);
    expect(codes).toEqual(["SOLD_OUT", "SOLD_OUT", "SOLD_OUT", "RATE_LIMITED"]);
  });

  it("hear units come back on both: after a raw-SQL restock of a sold-out SKU, each instance sells again", async () => {
    const sale = freshIds();
    await createSale(a.pool, { ...sale, units: 2 });
    await a.load(sale.activityId, sale.skuId);
    expect((await a.purchase(7_000_001, sale)).status).toBe(201);
    expect((await b.purchase(7_000_002, sale)).status).toBe(201);
    // Both answer sold out, and keep it in their shortcut once MySQL agrees.
    await eventually(async () => {
      expect((await a.purchase(7_000_003, sale)).body.code).toBe("SOLD_OUT");
      expect((await b.purchase(7_000_004, sale)).body.code).toBe("SOLD_OUT");
    });
    await a.pool.query(
      "UPDATE sale_stock SET available = available + 2 WHERE activity_id = ? AND sku_id = ?",
      [sale.activityId, sale.skuId],
    );
    await eventually(async () => expect((await a.purchase(7_000_005, sale)).status).toBe(201));
    await eventually(async () => expect((await b.purchase(7_000_006, sale)).status).toBe(201));
    expect(sold(await skuInDatabase(a.pool, sale.activityId, sale.skuId))).toBe(4);
  });
});
