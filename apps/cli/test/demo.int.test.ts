import { type AppProcess, startMaintainer } from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { flashgate } from "./cli.ts";

interface Summary {
  restock: { units: number; sold: number; firstSoldAfterMs: number | null };
  answers: Record<string, number>;
  orders: number;
  paid: number;
  skus: {
    skuId: number;
    database: { available: number; pending: number; paid: number; closed: number; supply: number };
    cacheAvailable: number | null;
    verdict: string;
  }[];
}

describe("flashgate demo", () => {
  let api: ApiHarness;
  let maintainer: AppProcess;
  beforeAll(async () => {
    api = await startApi();
    maintainer = await startMaintainer();
  });
  afterAll(async () => {
    await maintainer?.kill();
    await api?.close();
  });

  it("runs a sale through the API with a restock and a closure mid-sale, the restock sold through CDC before it ends; MySQL and Redis agree after", async () => {
    const result = await flashgate(
      "demo",
      ...[
        "--skus",
        "2",
        "--units",
        "20",
        "--buyers",
        "120",
        "--concurrency",
        "20",
        "--api",
        api.url,
        "--json",
      ],
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/\d+ requests, \d+\/s — sold \d+, sold out \d+/);
    expect(result.stderr).toMatch(/mid-sale: \+10 units on SKU 1 by raw SQL, order \S+ closed/);
    const summary = JSON.parse(result.stdout) as Summary;
    // SKU 1 was sold out when the DBA restocked it: its restocked units reached buyers through CDC.
    expect(summary.restock.sold).toBeGreaterThanOrEqual(10);
    expect(summary.restock.firstSoldAfterMs).toBeGreaterThan(0);
    expect(summary.answers["201"]).toBe(summary.orders);
    expect(summary.answers.SOLD_OUT).toBeGreaterThan(0);
    expect(summary.paid).toBe(Math.ceil(summary.orders / 2));
    expect(
      summary.skus.map((sku) => [sku.skuId, sku.database.supply, sku.verdict, sku.cacheAvailable]),
    ).toEqual([
      [1, 30, "in-sync", summary.skus[0].database.available],
      [2, 20, "in-sync", summary.skus[1].database.available],
    ]);
    const total = (field: "pending" | "paid" | "closed") =>
      summary.skus.reduce((sum, sku) => sum + sku.database[field], 0);
    expect(total("pending") + total("paid") + total("closed")).toBe(summary.orders);
    expect(total("closed")).toBe(1);
    expect(total("paid")).toBeGreaterThanOrEqual(summary.paid - 1);
  });
});
