import { fastDatabaseUrl, freshIds } from "@flashgate/testkit";
import type { Pool, RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeOrder } from "./lifecycle.ts";
import { createPool } from "./pool.ts";
import { placeOrder } from "./purchase.ts";
import { restock, skuDatabaseView, upsertActivity, upsertSku } from "./stock.ts";

const hour = 3600_000;

describe("the back-office's SQL, on the database alone", () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(fastDatabaseUrl(), { connectionLimit: 4, multipleStatements: true });
  });
  afterAll(async () => pool.end());

  const activity = (id: number, fields: Partial<Parameters<typeof upsertActivity>[1]> = {}) =>
    upsertActivity(pool, {
      id,
      name: "spring sale",
      startsAt: new Date(Date.now() - hour),
      endsAt: new Date(Date.now() + hour),
      paymentTimeoutS: 900,
      rebuyAfterClose: false,
      ...fields,
    });
  const ledger = async (ids: { activityId: number; skuId: number }) => {
    const [rows] = await pool.query<RowDataPacket[]>(
      "SELECT delta, available_after, reason, operator FROM stock_ledger WHERE activity_id = ? AND sku_id = ? ORDER BY id",
      [ids.activityId, ids.skuId],
    );
    return rows.map((row) => ({ ...row }));
  };

  it("creates an activity, then updates every field of it", async () => {
    const { activityId } = freshIds();
    expect(await activity(activityId)).toBe("created");
    const endsAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 2 * hour);
    expect(
      await activity(activityId, {
        name: "renamed",
        endsAt,
        paymentTimeoutS: 60,
        rebuyAfterClose: true,
        admission: "queued",
      }),
    ).toBe("updated");
    const read = async () => {
      const [rows] = await pool.query<RowDataPacket[]>(
        "SELECT name, ends_at, payment_timeout_s, rebuy_after_close, admission FROM activity WHERE id = ?",
        [activityId],
      );
      return { ...rows[0], rebuy_after_close: Boolean(rows[0].rebuy_after_close) } as Record<string, unknown>;
    };
    expect(await read()).toEqual({
      name: "renamed",
      ends_at: endsAt,
      payment_timeout_s: 60,
      rebuy_after_close: true,
      admission: "queued",
    });
    // Saved without one, the activity follows the API's admission again.
    await activity(activityId);
    expect((await read()).admission).toBeNull();
  });

  it("creates a SKU with its initial stock ledgered; an update changes the price only", async () => {
    const ids = freshIds();
    const sku = { ...ids, initialStock: 10, priceCents: 1999, currency: "EUR", operator: "alice" };
    expect(await upsertSku(pool, sku)).toBe("no_activity");
    expect(await skuDatabaseView(pool, ids.activityId, ids.skuId)).toBeUndefined();
    await activity(ids.activityId);
    expect(await upsertSku(pool, sku)).toBe("created");
    expect(await upsertSku(pool, { ...sku, initialStock: 99, priceCents: 2500, currency: "USD" })).toBe(
      "updated",
    );
    expect(await skuDatabaseView(pool, ids.activityId, ids.skuId)).toEqual({
      available: 10,
      pending: 0,
      paid: 0,
      closed: 0,
      supply: 10,
      priceCents: 2500,
      currency: "USD",
    });
    expect(await ledger(ids)).toEqual([
      { delta: 10, available_after: 10, reason: "initial stock", operator: "alice" },
    ]);
  });

  it("a save with the very same values again is an update: no second initial-stock ledger row", async () => {
    const ids = freshIds();
    const startsAt = new Date(Math.floor(Date.now() / 1000) * 1000 - hour);
    const same = { startsAt, endsAt: new Date(startsAt.getTime() + 2 * hour) };
    expect(await activity(ids.activityId, same)).toBe("created");
    expect(await activity(ids.activityId, same)).toBe("updated");
    const sku = { ...ids, initialStock: 7, priceCents: 100, currency: "EUR", operator: "alice" };
    expect(await upsertSku(pool, sku)).toBe("created");
    expect(await upsertSku(pool, sku)).toBe("updated");
    expect(await ledger(ids)).toEqual([
      { delta: 7, available_after: 7, reason: "initial stock", operator: "alice" },
    ]);
  });

  it("restocks and corrects with a ledger row each; refuses to go below zero or to touch an unknown SKU", async () => {
    const ids = freshIds();
    await activity(ids.activityId);
    await upsertSku(pool, { ...ids, initialStock: 3, priceCents: 100, currency: "EUR", operator: "alice" });
    const change = (delta: number) =>
      restock(pool, { ...ids, delta, reason: `by ${delta}`, operator: "bob" });
    expect(await change(5)).toEqual({ kind: "restocked", available: 8 });
    expect(await change(-8)).toEqual({ kind: "restocked", available: 0 });
    expect(await change(-1)).toEqual({ kind: "below_zero", available: 0 });
    expect(await restock(pool, { ...freshIds(), delta: 1, reason: "x", operator: "bob" })).toEqual({
      kind: "not_found",
    });
    expect((await ledger(ids)).slice(1)).toEqual([
      { delta: 5, available_after: 8, reason: "by 5", operator: "bob" },
      { delta: -8, available_after: 0, reason: "by -8", operator: "bob" },
    ]);
  });

  it("counts a SKU's orders by state: supply is what is available plus what is held", async () => {
    const ids = freshIds();
    await activity(ids.activityId);
    await upsertSku(pool, { ...ids, initialStock: 5, priceCents: 100, currency: "EUR", operator: "alice" });
    const key = (n: number) => `v-${ids.activityId}-${n}`;
    const orderIds: string[] = [];
    for (const user of [1, 2, 3]) {
      const decision = await placeOrder(pool, { ...ids, userId: String(user), requestId: key(user) });
      if (decision.kind === "created") orderIds.push(decision.order.orderId);
    }
    await pool.query("UPDATE sale_order SET state = 'PAID' WHERE order_id = ?", [orderIds[1]]);
    expect((await closeOrder(pool, orderIds[2])).kind).toBe("closed");
    expect(await skuDatabaseView(pool, ids.activityId, ids.skuId)).toMatchObject({
      available: 3,
      pending: 1,
      paid: 1,
      closed: 1,
      supply: 5,
    });
  });
});
