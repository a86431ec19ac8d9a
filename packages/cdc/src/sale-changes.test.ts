import { describe, expect, it } from "vitest";
import type { ChangeEvent } from "./envelope.ts";
import { toActivityChange, toSaleChange } from "./sale-changes.ts";

const event = (table: string, op: ChangeEvent["op"], before: unknown, after: unknown): ChangeEvent => ({
  table,
  op,
  before: before as Record<string, unknown> | null,
  after: after as Record<string, unknown> | null,
  position: "00000001:0000000000100:000000",
  emittedAtMs: 1,
});

const order = { activity_id: 1, sku_id: 2, user_id: 42, state: "PENDING", closed_seq: 0, updated_at: 1000 };

describe("toSaleChange", () => {
  it("maps a stock update to the applied availability", () => {
    const change = toSaleChange(
      event("sale_stock", "u", null, {
        activity_id: 1,
        sku_id: 2,
        available: 7,
        price_cents: 100,
        currency: "EUR",
        updated_at: 5,
      }),
    );
    expect(change).toMatchObject({ kind: "stock", activityId: 1, skuId: 2, available: 7, committedAtMs: 5 });
  });

  it("keeps a buyer while the order is live or closed without rebuy, and frees them otherwise", () => {
    expect(toSaleChange(event("sale_order", "c", null, order))).toMatchObject({
      kind: "order",
      userId: "42",
      live: true,
    });
    expect(toSaleChange(event("sale_order", "u", order, { ...order, state: "CLOSED" }))).toMatchObject({
      live: true,
    });
    expect(
      toSaleChange(event("sale_order", "u", order, { ...order, state: "CLOSED", closed_seq: 99 })),
    ).toMatchObject({ live: false });
    expect(toSaleChange(event("sale_order", "d", order, null))).toMatchObject({ live: false });
  });

  it("turns a deleted SKU row into gone", () => {
    expect(toSaleChange(event("sale_stock", "d", { activity_id: 1, sku_id: 2 }, null))).toMatchObject({
      kind: "gone",
      activityId: 1,
      skuId: 2,
    });
  });

  it("rejects rows it cannot trust", () => {
    expect(() =>
      toSaleChange(event("sale_stock", "u", null, { activity_id: 1, sku_id: 2, available: "7" })),
    ).toThrow(/available/);
    expect(() => toSaleChange(event("payment_event", "c", null, {}))).toThrow(/unexpected table/);
  });
});

describe("toActivityChange", () => {
  it("maps the sale window, the rebuy policy and the admission (none in an image from before its column)", () => {
    const row = { id: 9, starts_at: 1, ends_at: 2, rebuy_after_close: 1 };
    expect(toActivityChange(event("activity", "u", null, { ...row, admission: "queued" }))).toEqual({
      kind: "activity",
      activityId: 9,
      position: "00000001:0000000000100:000000",
      startsMs: 1,
      endsMs: 2,
      rebuy: true,
      admission: "queued",
    });
    expect(toActivityChange(event("activity", "u", null, { ...row, admission: null }))).toMatchObject({
      admission: null,
    });
    expect(toActivityChange(event("activity", "u", null, row))).toMatchObject({ admission: null });
    expect(toActivityChange(event("activity", "d", { id: 9 }, null))).toMatchObject({
      kind: "activity-gone",
      activityId: 9,
    });
  });
});
