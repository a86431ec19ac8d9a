import { setTimeout as sleep } from "node:timers/promises";
import {
  addSkus,
  createSale,
  dbaConnection,
  failureOf,
  fastDatabaseUrl,
  fastTierContext,
  freshIds,
  type SaleFixture,
  skuInDatabase,
  untilIdle,
  untilLockWait,
} from "@flashgate/testkit";
import type { Pool, PoolConnection } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appDbUser } from "./accounts.ts";
import { closeAllExpiredOrders, closeOrder } from "./lifecycle.ts";
import { findOrder, findPurchase } from "./orders.ts";
import { createPool, lockWaitTimeoutS } from "./pool.ts";
import { DecisionConflictError, type PurchaseDecision, placeOrder, placeOrders } from "./purchase.ts";

describe("the purchase decision in SQL, on the database alone", () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(fastDatabaseUrl(), { connectionLimit: 4, multipleStatements: true });
  });
  afterAll(async () => pool.end());

  const sale = async (units: number, fields: Partial<SaleFixture> = {}) => {
    const ids = freshIds();
    await createSale(pool, { ...ids, units, ...fields });
    // Keys are global in the database (it outlives a run): each sale's keys carry its activity id.
    const buy = (user: number, key = String(user)) =>
      placeOrder(pool, { ...ids, userId: String(user), requestId: `k-${ids.activityId}-${key}` });
    return { ids, buy };
  };

  it("creates a PENDING order priced from the stock row, due after the activity's payment timeout", async () => {
    const { ids, buy } = await sale(2, { priceCents: 4200, paymentTimeoutS: 600 });
    const decision = await buy(1);
    expect(decision.kind).toBe("created");
    const { order } = decision as Extract<PurchaseDecision, { kind: "created" }>;
    expect(order).toMatchObject({ state: "PENDING", amountCents: 4200, currency: "EUR" });
    expect(order.expiresAt.getTime() - order.createdAt.getTime()).toBe(600_000);
    expect((await skuInDatabase(pool, ids.activityId, ids.skuId)).available).toBe(1);
  });

  it("tells each buyer of a batch their order as it is stored, and stores a batch's orders in the order of their ids", async () => {
    const { ids } = await sale(5, { priceCents: 1500, paymentTimeoutS: 300 });
    const buyers = [1, 2, 3].map((user) => ({
      ...ids,
      userId: String(user),
      requestId: `k-${ids.activityId}-${user}`,
    }));
    const decisions = await placeOrders(pool, buyers);
    const orders = decisions.map(
      (decision) => (decision as Extract<PurchaseDecision, { kind: "created" }>).order,
    );
    for (const order of orders) expect(await findOrder(pool, order.orderId)).toEqual(order);
    expect(orders.map((order) => order.orderId)).toEqual(orders.map((order) => order.orderId).sort());
  });

  it("answers a retry with its order, a second key of the buyer as already purchased", async () => {
    const { buy } = await sale(5);
    const first = await buy(1, "key-a");
    expect(first.kind).toBe("created");
    expect(await buy(1, "key-a")).toEqual({ kind: "replayed", order: (first as { order: unknown }).order });
    expect(await buy(1, "key-b")).toEqual({ kind: "already_purchased" });
  });

  it("scopes a key to its user: another user's same key is a purchase of their own, alone or in a batch", async () => {
    const { ids, buy } = await sale(5);
    const first = await buy(1, "shared");
    const second = await buy(2, "shared");
    expect([first.kind, second.kind]).toEqual(["created", "created"]);
    const [a, b] = [first, second].map((decision) => (decision as { order: { orderId: string } }).order);
    expect(a.orderId).not.toBe(b.orderId);
    const key = `k-${ids.activityId}-batch`;
    const batch = await placeOrders(pool, [
      { ...ids, userId: "3", requestId: key },
      { ...ids, userId: "4", requestId: key },
    ]);
    expect(batch?.map((d) => d?.kind === "created" && [d.order.userId, d.order.requestId])).toEqual([
      ["3", key],
      ["4", key],
    ]);
    expect((await skuInDatabase(pool, ids.activityId, ids.skuId)).available).toBe(1);
  });

  it("refuses the buyer's own key used again for another SKU", async () => {
    const { ids, buy } = await sale(5);
    await buy(1, "key-a");
    const other = await sale(5);
    const reuse = await placeOrder(pool, {
      ...other.ids,
      userId: "1",
      requestId: `k-${ids.activityId}-key-a`,
    });
    expect(reuse).toEqual({ kind: "key_reused" });
  });

  it("a retry of the purchase that took the last unit gets its order, not sold out", async () => {
    const { buy } = await sale(1);
    const first = await buy(1, "last");
    expect(await buy(1, "last")).toEqual({ kind: "replayed", order: (first as { order: unknown }).order });
    expect(await buy(2)).toEqual({ kind: "sold_out" });
  });

  it("tells a sold-out SKU's buyer retrying with a new key that they hold an order, not that it is sold out", async () => {
    const { buy } = await sale(1);
    expect((await buy(1, "first")).kind).toBe("created");
    expect(await buy(1, "second")).toEqual({ kind: "already_purchased" });
    expect(await buy(2)).toEqual({ kind: "sold_out" });
  });

  it("refuses a key reused for another SKU of the same activity, and a batch across activities", async () => {
    const { ids, buy } = await sale(5);
    await buy(1, "key-a");
    const sibling = { activityId: ids.activityId, skuId: ids.skuId + 1 };
    await createSale(pool, { ...sibling, units: 5 });
    expect(
      await placeOrder(pool, { ...sibling, userId: "1", requestId: `k-${ids.activityId}-key-a` }),
    ).toEqual({
      kind: "key_reused",
    });
    const elsewhere = (await sale(5)).ids;
    await expect(
      placeOrders(pool, [
        { ...ids, userId: "2", requestId: `k-${ids.activityId}-b1` },
        { ...elsewhere, userId: "3", requestId: `k-${ids.activityId}-b2` },
      ]),
    ).rejects.toThrow("a batch holds buyers of one activity");
  });

  it("decides a batch over an activity's SKUs all or nothing per SKU: a SKU short of units sells nothing, the others sell", async () => {
    const { ids } = await sale(5);
    const [short, single] = [ids.skuId + 1, ids.skuId + 2];
    await createSale(pool, { activityId: ids.activityId, skuId: short, units: 1 });
    await createSale(pool, { activityId: ids.activityId, skuId: single, units: 3 });
    const buyer = (skuId: number, user: number) => ({
      activityId: ids.activityId,
      skuId,
      userId: String(user),
      requestId: `m-${ids.activityId}-${user}`,
    });
    const orders = await placeOrders(pool, [
      buyer(ids.skuId, 1),
      buyer(short, 2),
      buyer(single, 3),
      buyer(ids.skuId, 4),
      buyer(short, 5),
    ]);
    expect(orders?.map((d) => d?.kind === "created" && [d.order.userId, d.order.skuId])).toEqual([
      ["1", ids.skuId],
      false,
      ["3", single],
      ["4", ids.skuId],
      false,
    ]);
    const ledger = async (skuId: number) => {
      const { available, pending } = await skuInDatabase(pool, ids.activityId, skuId);
      return [available, pending];
    };
    expect([await ledger(ids.skuId), await ledger(short), await ledger(single)]).toEqual([
      [3, 2],
      [1, 0],
      [2, 1],
    ]);
    // When no SKU of the batch can take its buyers, nothing is committed: each is decided alone.
    expect(await placeOrders(pool, [buyer(short, 6), buyer(short, 7)])).toEqual([undefined, undefined]);
    // A SKU with no unit left refuses all its buyers in the batch: none needs a transaction of their own.
    await placeOrder(pool, buyer(short, 8));
    expect(await placeOrders(pool, [buyer(short, 9), buyer(short, 10)])).toEqual([
      { kind: "sold_out" },
      { kind: "sold_out" },
    ]);
  });

  it("lets an error that is not a duplicate key surface, with nothing committed", async () => {
    const { ids } = await sale(5);
    await expect(
      placeOrder(pool, { ...ids, userId: "not-a-user-id", requestId: `k-${ids.activityId}-bad` }),
    ).rejects.toMatchObject({
      errno: expect.any(Number),
    });
    expect((await skuInDatabase(pool, ids.activityId, ids.skuId)).available).toBe(5);
  });

  it("refuses outside the window and for an unknown SKU, and leaves the stock alone", async () => {
    const early = await sale(3, { startsAt: new Date(Date.now() + 60_000) });
    expect(await early.buy(1)).toEqual({ kind: "not_open" });
    const late = await sale(3, { endsAt: new Date(Date.now() - 1) });
    expect(await late.buy(1)).toEqual({ kind: "not_open" });
    expect((await skuInDatabase(pool, late.ids.activityId, late.ids.skuId)).available).toBe(3);
    const ids = freshIds();
    expect(await placeOrder(pool, { ...ids, userId: "1", requestId: `none-${ids.activityId}` })).toEqual({
      kind: "unknown_sku",
    });
  });

  it("a SKU whose price a decision learned sells at the price its row holds now, and refuses once its window closed or its row is gone", async () => {
    const { ids, buy } = await sale(10, { priceCents: 1000 });
    expect((await buy(1)).kind).toBe("created");
    const dba = await dbaConnection(fastTierContext());
    try {
      await dba.query("UPDATE sale_stock SET price_cents = 1300 WHERE activity_id = ? AND sku_id = ?", [
        ids.activityId,
        ids.skuId,
      ]);
      expect(await buy(2)).toMatchObject({ kind: "created", order: { amountCents: 1300 } });
      const window = await sale(5);
      expect((await window.buy(1)).kind).toBe("created");
      await dba.query("UPDATE activity SET ends_at = NOW(3) - INTERVAL 1 SECOND WHERE id = ?", [
        window.ids.activityId,
      ]);
      expect(await window.buy(2)).toEqual({ kind: "not_open" });
      expect(await skuInDatabase(pool, window.ids.activityId, window.ids.skuId)).toMatchObject({
        available: 4,
        pending: 1,
      });
      await dba.query("DELETE FROM sale_stock WHERE activity_id = ? AND sku_id = ?", [
        ids.activityId,
        ids.skuId,
      ]);
      expect(await buy(3)).toEqual({ kind: "unknown_sku" });
      const [[orders]] = (await pool.query(
        "SELECT COUNT(*) AS n FROM sale_order WHERE activity_id = ? AND sku_id = ?",
        [ids.activityId, ids.skuId],
      )) as unknown as [[{ n: number }]];
      expect(Number(orders.n)).toBe(2);
    } finally {
      await dba.end();
    }
  });

  it("decides a batch all or nothing: enough units for all, or no order and no decrement", async () => {
    const batch = async (units: number) => {
      const { ids, buy } = await sale(units);
      const buyers = (n: number) =>
        Array.from({ length: n }, (_, i) => ({
          ...ids,
          userId: String(i + 1),
          requestId: `b-${ids.activityId}-${i + 1}`,
        }));
      const orders = async () => (await skuInDatabase(pool, ids.activityId, ids.skuId)).pending;
      const available = async () => (await skuInDatabase(pool, ids.activityId, ids.skuId)).available;
      return { buy, buyers, orders, available };
    };
    const short = await batch(3);
    expect(await placeOrders(pool, short.buyers(4))).toEqual([undefined, undefined, undefined, undefined]);
    expect([await short.orders(), await short.available()]).toEqual([0, 3]);
    expect(
      (await placeOrders(pool, short.buyers(3)))?.map((d) => d?.kind === "created" && d.order.userId),
    ).toEqual(["1", "2", "3"]);
    expect([await short.orders(), await short.available()]).toEqual([3, 0]);

    // One buyer seen before (user 3 already holds an order) costs only that buyer: the others commit.
    const seen = await batch(5);
    expect((await seen.buy(3)).kind).toBe("created");
    expect((await placeOrders(pool, seen.buyers(3)))?.map((decision) => decision?.kind)).toEqual([
      "created",
      "created",
      "already_purchased",
    ]);
    expect([await seen.orders(), await seen.available()]).toEqual([3, 2]);
  });

  it("a batch answers each buyer seen before as what they are — a replay gets its own order, a key reused on another SKU is refused — and sells to the rest in the same transaction", async () => {
    const { ids, buy } = await sale(5);
    const sibling = { activityId: ids.activityId, skuId: ids.skuId + 1 };
    await createSale(pool, { ...sibling, units: 5 });
    const first = (await buy(1, "held")) as Extract<PurchaseDecision, { kind: "created" }>;
    const key = (name: string) => `k-${ids.activityId}-${name}`;
    const decisions = await placeOrders(pool, [
      { ...ids, userId: "1", requestId: key("held") },
      { ...sibling, userId: "1", requestId: key("held") },
      { ...ids, userId: "2", requestId: key("2") },
      { ...sibling, userId: "3", requestId: key("3") },
    ]);
    expect(decisions?.[0]).toEqual({ kind: "replayed", order: first.order });
    // A second buyer of the batch with the same user and key is left to decide alone, as a reuse.
    expect(decisions?.[1]).toBeUndefined();
    expect(await placeOrder(pool, { ...sibling, userId: "1", requestId: key("held") })).toEqual({
      kind: "key_reused",
    });
    expect(decisions?.slice(2).map((d) => d?.kind === "created" && [d.order.userId, d.order.skuId])).toEqual([
      ["2", ids.skuId],
      ["3", sibling.skuId],
    ]);
    expect((await skuInDatabase(pool, ids.activityId, ids.skuId)).available).toBe(3);
    expect((await skuInDatabase(pool, ids.activityId, sibling.skuId)).available).toBe(4);
  });

  it("a key reused on a SKU the batch cannot sell is refused as a reuse, never handed the other SKU's order, and the SKU's honest buyer is left to decide alone", async () => {
    const { ids, buy } = await sale(5);
    const short = { activityId: ids.activityId, skuId: ids.skuId + 1 };
    await createSale(pool, { ...short, units: 1 });
    await buy(1, "held");
    const decisions = await placeOrders(pool, [
      { ...short, userId: "1", requestId: `k-${ids.activityId}-held` },
      { ...short, userId: "2", requestId: `k-${ids.activityId}-2` },
      { ...short, userId: "3", requestId: `k-${ids.activityId}-3` },
      { ...ids, userId: "4", requestId: `k-${ids.activityId}-4` },
    ]);
    expect(decisions?.map((decision) => decision?.kind)).toEqual([
      "key_reused",
      undefined,
      undefined,
      "created",
    ]);
    expect((await skuInDatabase(pool, ids.activityId, short.skuId)).available).toBe(1);
  });

  it("closing an order returns its unit once; with rebuy allowed the buyer may buy again", async () => {
    const { ids, buy } = await sale(1, { rebuyAfterClose: true });
    const first = await buy(1, "first");
    const { orderId } = (first as { order: { orderId: string } }).order;
    expect((await closeOrder(pool, orderId)).kind).toBe("closed");
    expect((await closeOrder(pool, orderId)).kind).toBe("not_pending");
    expect((await skuInDatabase(pool, ids.activityId, ids.skuId)).available).toBe(1);
    expect((await buy(1, "second")).kind).toBe("created");
  });

  it("expiry closes only orders past their due time, each unit returned once", async () => {
    const { ids, buy } = await sale(2, { paymentTimeoutS: 1 });
    await buy(1);
    await pool.query("UPDATE sale_order SET expires_at = NOW(3) - INTERVAL 1 SECOND WHERE activity_id = ?", [
      ids.activityId,
    ]);
    await buy(2);
    await pool.query(
      "UPDATE sale_order SET expires_at = NOW(3) + INTERVAL 1 HOUR WHERE activity_id = ? AND user_id = 2",
      [ids.activityId],
    );
    await closeAllExpiredOrders(pool);
    const ledger = await skuInDatabase(pool, ids.activityId, ids.skuId);
    expect(ledger).toMatchObject({ available: 1, pending: 1, closed: 1 });
  });

  it("a decision kept waiting on a locked stock row is given up as a conflict: nothing left waiting, nothing sold", async () => {
    const { ids, buy } = await sale(3);
    const holder = await pool.getConnection();
    try {
      await lockStockRow(holder, ids);
      // Run again while the row stayed locked, then given up on as a conflict, not a database down.
      expect(await failureOf(buy(1))).toBeInstanceOf(DecisionConflictError);
      await untilIdle(appDbUser);
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
    expect((await skuInDatabase(pool, ids.activityId, ids.skuId)).available).toBe(3);
  }, 30_000);

  it("a decision its client gave up on (two lock waits outlast its timeout) never commits afterwards", async () => {
    const { ids } = await sale(3);
    await addSkus(pool, ids.activityId, [{ skuId: ids.skuId + 1, units: 3 }]);
    const buyer = { ...ids, userId: "1", requestId: `k-${ids.activityId}-waits` };
    const stockHolder = await pool.getConnection();
    const keyHolder = await pool.getConnection();
    try {
      await lockStockRow(stockHolder, ids);
      // The buyer's key, taken by a transaction still open on another SKU: the decision's insert waits on it.
      await keyHolder.query("START TRANSACTION");
      await keyHolder.query(
        "INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at) VALUES (?, ?, ?, 1, 'PENDING', 1, 'EUR', NOW(3), NOW(3))",
        [buyer.requestId, ids.activityId, ids.skuId + 1],
      );
      const decision = failureOf(placeOrder(pool, buyer));
      await untilLockWait("FOR UPDATE");
      // Most of the first lock wait spent on the stock row, the rest of the client's time on the key.
      await sleep((lockWaitTimeoutS - 0.5) * 1000);
      await stockHolder.query("COMMIT");
      expect(await decision).toBeInstanceOf(Error);
      await keyHolder.query("ROLLBACK");
      await untilIdle(appDbUser);
    } finally {
      for (const connection of [stockHolder, keyHolder]) {
        await connection.query("ROLLBACK");
        connection.release();
      }
    }
    expect(await findPurchase(pool, buyer.userId, buyer.requestId)).toBeUndefined();
    expect((await skuInDatabase(pool, ids.activityId, ids.skuId)).available).toBe(3);
  }, 30_000);

  /** Opens a transaction on `connection` holding the SKU's stock row, as a decision or a DBA would. */
  const lockStockRow = async (connection: PoolConnection, ids: { activityId: number; skuId: number }) => {
    await connection.query("START TRANSACTION");
    await connection.query("SELECT * FROM sale_stock WHERE activity_id = ? AND sku_id = ? FOR UPDATE", [
      ids.activityId,
      ids.skuId,
    ]);
  };
});
