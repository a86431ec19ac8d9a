import { createSale, dbaConnection, fastDatabaseUrl, fastTierContext, freshIds } from "@flashgate/testkit";
import type { Pool, RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeAllExpiredOrders, closeExpiredOrders, type PaymentEvent, recordPayment } from "./lifecycle.ts";
import { findOrder, type SoldOutSnapshot, soldOutBuyers } from "./orders.ts";
import { createPool } from "./pool.ts";
import { placeOrder } from "./purchase.ts";

describe("an order's life after the purchase, on the database alone", () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(fastDatabaseUrl(), { connectionLimit: 4, multipleStatements: true });
  });
  afterAll(async () => pool.end());

  async function sale(units: number, buyers: number[], fields: { paymentTimeoutS?: number } = {}) {
    const ids = freshIds();
    await createSale(pool, { ...ids, units, ...fields });
    const key = (user: number) => `l-${ids.activityId}-${user}`;
    const orderIds = new Map<number, string>();
    for (const user of buyers) {
      const decision = await placeOrder(pool, { ...ids, userId: String(user), requestId: key(user) });
      if (decision.kind === "created") orderIds.set(user, decision.order.orderId);
    }
    const orderOf = (user: number) => orderIds.get(user) ?? `no-order-${ids.activityId}-${user}`;
    return { ids, key, orderOf };
  }

  it("records a payment once: the policy decides, the event and its effect commit together", async () => {
    const { key, orderOf } = await sale(3, [1, 2]);
    const event = (fields: Partial<PaymentEvent>): PaymentEvent => ({
      eventId: `e-${key(1)}`,
      orderId: orderOf(1),
      status: "SUCCEEDED",
      amountCents: 1999,
      currency: "EUR",
      ...fields,
    });
    const seen: unknown[] = [];
    const pays = (order: unknown) => {
      seen.push(order);
      return { outcome: "PAID", pays: true, needsRefund: false };
    };
    const first = await recordPayment(pool, event({}), pays);
    expect(first).toMatchObject({ kind: "recorded", outcome: "PAID", order: { state: "PAID" } });
    expect(seen).toEqual([{ state: "PENDING", amountCents: 1999, currency: "EUR" }]);
    expect(await recordPayment(pool, event({}), pays)).toEqual({ kind: "duplicate", outcome: "PAID" });
    expect(seen).toHaveLength(2);

    // A refusal writes the event, marked for refund, and leaves the order as it was.
    const refused = await recordPayment(
      pool,
      event({ eventId: `e2-${key(2)}`, orderId: orderOf(2) }),
      () => ({
        outcome: "AMOUNT_MISMATCH",
        pays: false,
        needsRefund: true,
      }),
    );
    expect(refused).toMatchObject({
      kind: "recorded",
      outcome: "AMOUNT_MISMATCH",
      order: { state: "PENDING" },
    });
    const [rows] = await pool.query<RowDataPacket[]>(
      "SELECT outcome, needs_refund, amount_cents FROM payment_event WHERE order_id = ?",
      [orderOf(2)],
    );
    expect(rows.map((row) => [row.outcome, Boolean(row.needs_refund), Number(row.amount_cents)])).toEqual([
      ["AMOUNT_MISMATCH", true, 1999],
    ]);

    // No such order: the policy is told so, and the event is still recorded.
    const unknown = await recordPayment(
      pool,
      event({ eventId: `e3-${key(9)}`, orderId: orderOf(9) }),
      (order) => ({
        outcome: order ? "PAID" : "UNKNOWN_ORDER",
        pays: false,
        needsRefund: true,
      }),
    );
    expect(unknown).toEqual({ kind: "recorded", outcome: "UNKNOWN_ORDER", order: undefined });

    // Any other failure is not a replay: it surfaces, and nothing is recorded.
    const tooLong = `e4-${"x".repeat(70)}`;
    await expect(
      recordPayment(pool, event({ eventId: tooLong }), () => ({
        outcome: "PAID",
        pays: true,
        needsRefund: false,
      })),
    ).rejects.toMatchObject({ errno: 1406 });
    const [none] = await pool.query<RowDataPacket[]>(
      "SELECT COUNT(*) AS n FROM payment_event WHERE event_id LIKE 'e4-%'",
    );
    expect(Number(none[0].n)).toBe(0);
  });

  it("closes every expired PENDING order and counts them; paid and unexpired ones stay", async () => {
    // The database outlives runs: orders other tests left expired are closed too, and counted.
    await closeAllExpiredOrders(pool, 1000);
    const { ids, orderOf } = await sale(5, [1, 2, 3, 4], { paymentTimeoutS: 60 });
    await pool.query(
      "UPDATE sale_order SET expires_at = NOW(3) - INTERVAL 1 SECOND WHERE order_id IN (?, ?, ?)",
      [orderOf(1), orderOf(2), orderOf(3)],
    );
    await pool.query("UPDATE sale_order SET state = 'PAID' WHERE order_id = ?", [orderOf(3)]);
    expect(await closeExpiredOrders(pool, 1)).toBe(1);
    expect(await closeExpiredOrders(pool, 1000)).toBe(1);
    expect(await closeExpiredOrders(pool, 1000)).toBe(0);
    const states = await Promise.all(
      [1, 2, 3, 4].map(async (user) => (await findOrder(pool, orderOf(user)))?.state),
    );
    expect(states).toEqual(["CLOSED", "CLOSED", "PAID", "PENDING"]);
    const [stock] = await pool.query<RowDataPacket[]>(
      "SELECT available FROM sale_stock WHERE activity_id = ? AND sku_id = ?",
      [ids.activityId, ids.skuId],
    );
    expect(Number(stock[0].available)).toBe(3);
  });

  it("closes a deadline's expired orders a batch to a transaction: each SKU's stock row written once per batch", async () => {
    await closeAllExpiredOrders(pool, 1000);
    const buyers = Array.from({ length: 30 }, (_, i) => i + 1);
    const { ids, orderOf } = await sale(30, buyers, { paymentTimeoutS: 60 });
    const stock = async () => {
      const [rows] = await pool.query<RowDataPacket[]>(
        "SELECT available, version FROM sale_stock WHERE activity_id = ? AND sku_id = ?",
        [ids.activityId, ids.skuId],
      );
      return { available: Number(rows[0].available), version: Number(rows[0].version) };
    };
    await pool.query("UPDATE sale_order SET expires_at = NOW(3) - INTERVAL 1 SECOND WHERE activity_id = ?", [
      ids.activityId,
    ]);
    const before = await stock();
    expect(before.available).toBe(0);
    expect(await closeExpiredOrders(pool, 100)).toBe(30);
    const after = await stock();
    expect(after.available).toBe(30);
    expect(after.version - before.version).toBe(1);
    const states = await Promise.all(
      buyers.map(async (user) => (await findOrder(pool, orderOf(user)))?.state),
    );
    expect(new Set(states)).toEqual(new Set(["CLOSED"]));
  });

  it("gives each SKU of a batch its own units back, however many SKUs and sales the batch spans", async () => {
    await closeAllExpiredOrders(pool, 1000);
    const sales = await Promise.all(
      [3, 1, 2].map((count) =>
        sale(
          count,
          Array.from({ length: count }, (_, i) => i + 1),
          { paymentTimeoutS: 60 },
        ),
      ),
    );
    const stock = async (ids: { activityId: number; skuId: number }) => {
      const [rows] = await pool.query<RowDataPacket[]>(
        "SELECT available, version FROM sale_stock WHERE activity_id = ? AND sku_id = ?",
        [ids.activityId, ids.skuId],
      );
      return { available: Number(rows[0].available), version: Number(rows[0].version) };
    };
    const before = await Promise.all(sales.map(({ ids }) => stock(ids)));
    await pool.query(
      "UPDATE sale_order SET expires_at = NOW(3) - INTERVAL 1 SECOND WHERE activity_id IN (?)",
      [sales.map(({ ids }) => ids.activityId)],
    );
    expect(await closeExpiredOrders(pool, 100)).toBe(6);
    const after = await Promise.all(sales.map(({ ids }) => stock(ids)));
    expect(after.map((row) => row.available)).toEqual([3, 1, 2]);
    expect(after.map((row, i) => row.version - before[i].version)).toEqual([1, 1, 1]);
  });

  it("closes every order due now in one call, batch after batch until one comes back short", async () => {
    const buyers = Array.from({ length: 25 }, (_, i) => i + 1);
    const { ids, orderOf } = await sale(25, buyers, { paymentTimeoutS: 60 });
    await pool.query("UPDATE sale_order SET expires_at = NOW(3) - INTERVAL 1 SECOND WHERE activity_id = ?", [
      ids.activityId,
    ]);
    expect(await closeAllExpiredOrders(pool, 10)).toBeGreaterThanOrEqual(25);
    const states = await Promise.all(
      buyers.map(async (user) => (await findOrder(pool, orderOf(user)))?.state),
    );
    expect(new Set(states)).toEqual(new Set(["CLOSED"]));
  });

  it("names the buyers of a sold-out SKU by request id, and nobody while units are left", async () => {
    const open = await sale(3, [1]);
    expect(await soldOutBuyers(pool, open.ids.activityId, open.ids.skuId)).toBeNull();
    expect(await soldOutBuyers(pool, open.ids.activityId, open.ids.skuId + 1)).toBeNull();
    const gone = await sale(2, [7, 8]);
    expect((await soldOutBuyers(pool, gone.ids.activityId, gone.ids.skuId))?.buyers).toEqual(
      new Map([
        ["7", gone.key(7)],
        ["8", gone.key(8)],
      ]),
    );
  });

  it("renews a sold-out snapshot with one row read while nothing changed, and reads the buyers again after any change of them", async () => {
    const { ids, key } = await sale(1, [7]);
    const first = await soldOutBuyers(pool, ids.activityId, ids.skuId);
    expect(first?.buyers).toEqual(new Map([["7", key(7)]]));
    expect(await soldOutBuyers(pool, ids.activityId, ids.skuId, first ?? undefined)).toBe(first);
    // A DBA's session, which knows nothing of flashgate's: an order inserted without touching the stock row.
    const dba = await dbaConnection(fastTierContext());
    const renewed = async (known: SoldOutSnapshot | null | undefined) => {
      const next = await soldOutBuyers(pool, ids.activityId, ids.skuId, known ?? undefined);
      expect(next).not.toBe(known);
      return next;
    };
    try {
      // Priced from the stock row it reads (the version is no write to that row: a trigger could not).
      await dba.query(
        `INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
         SELECT ?, activity_id, sku_id, 777, 'PENDING', price_cents, currency, NOW(3), NOW(3) + INTERVAL 1 HOUR
           FROM sale_stock WHERE activity_id = ? AND sku_id = ?`,
        [key(777), ids.activityId, ids.skuId],
      );
      const inserted = await renewed(first);
      expect(inserted?.buyers.get("777")).toBe(key(777));
      // Reassigned to another user, then deleted: each is a new version.
      await dba.query("UPDATE sale_order SET user_id = 778 WHERE user_id = 777 AND request_id = ?", [
        key(777),
      ]);
      const reassigned = await renewed(inserted);
      expect([...(reassigned?.buyers.keys() ?? [])].sort()).toEqual(["7", "778"]);
      await dba.query("DELETE FROM sale_order WHERE user_id = 778 AND request_id = ?", [key(777)]);
      const deleted = await renewed(reassigned);
      expect([...(deleted?.buyers.keys() ?? [])]).toEqual(["7"]);
      // A change of the stock row stamped with the time it already had (a statement stamped with its start).
      await dba.query(
        "UPDATE sale_stock SET price_cents = price_cents + 1, updated_at = updated_at WHERE activity_id = ? AND sku_id = ?",
        [ids.activityId, ids.skuId],
      );
      await renewed(deleted);
    } finally {
      await dba.end();
    }
  });
});
