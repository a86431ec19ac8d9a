import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import { isDuplicateKey } from "./errors.ts";
import { findOrder, type Order } from "./orders.ts";

export type CloseResult =
  | { kind: "closed"; order: Order }
  | { kind: "not_pending"; order: Order }
  | { kind: "not_found" };

async function inTransaction<T>(pool: Pool, work: (connection: PoolConnection) => Promise<T>): Promise<T> {
  const connection = await pool.getConnection();
  try {
    await connection.query("START TRANSACTION");
    const result = await work(connection);
    await connection.query("COMMIT");
    return result;
  } catch (error) {
    await connection.query("ROLLBACK").catch(() => connection.destroy());
    throw error;
  } finally {
    connection.release();
  }
}

/**
 * PENDING → CLOSED and the unit back to stock, in one transaction. Only the transaction whose
 * conditional update hit the row releases the unit, so racing workers and payments release it once.
 */
export async function closeOrder(pool: Pool, orderId: string): Promise<CloseResult> {
  const closed = await inTransaction(pool, async (connection) => {
    const [update] = await connection.query(
      "UPDATE sale_order SET state = 'CLOSED' WHERE order_id = ? AND state = 'PENDING'",
      [orderId],
    );
    if ((update as { affectedRows: number }).affectedRows !== 1) return false;
    await connection.query(
      `UPDATE sale_stock s JOIN sale_order o ON o.activity_id = s.activity_id AND o.sku_id = s.sku_id
          SET s.available = s.available + 1 WHERE o.order_id = ?`,
      [orderId],
    );
    return true;
  });
  const order = await findOrder(pool, orderId);
  if (!order) return { kind: "not_found" };
  return closed ? { kind: "closed", order } : { kind: "not_pending", order };
}

/**
 * Closes up to `batchSize` PENDING orders past their deadline, oldest first, in one transaction: the
 * orders in one UPDATE and every SKU's units back in one more (its stock rows locked in key order, as
 * every writer takes them), so a sale's deadline costs a transaction per batch, not per order. The orders are
 * locked first and skipped when another worker or a payment holds them: a payment that got there first
 * wins, one that comes after finds the order CLOSED. Returns how many it closed.
 */
export async function closeExpiredOrders(pool: Pool, batchSize = 100): Promise<number> {
  return inTransaction(pool, async (connection) => {
    const [due] = await connection.query<RowDataPacket[]>(
      `SELECT order_id, activity_id, sku_id FROM sale_order WHERE state = 'PENDING' AND expires_at < NOW(3)
        ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED`,
      [batchSize],
    );
    if (due.length === 0) return 0;
    const [update] = await connection.query<ResultSetHeader>(
      "UPDATE sale_order SET state = 'CLOSED' WHERE order_id IN (?) AND state = 'PENDING'",
      [due.map((row) => row.order_id)],
    );
    // Locked PENDING above, so every one changed; anything else would return units twice or never.
    if (update.affectedRows !== due.length)
      throw new Error(`closed ${update.affectedRows} of ${due.length} locked orders`);
    const bySku = new Map<string, { activityId: number; skuId: number; units: number }>();
    for (const row of due) {
      const key = `${row.activity_id}:${row.sku_id}`;
      const sku = bySku.get(key) ?? { activityId: row.activity_id, skuId: row.sku_id, units: 0 };
      sku.units += 1;
      bySku.set(key, sku);
    }
    const returned = [...bySku.values()];
    // One statement for every SKU of the batch (a round trip per SKU made a deadline's expiry crawl); it
    // finds the rows through the primary key's range, so it locks them in key order as every writer does.
    await connection.query(
      `UPDATE sale_stock SET available = available + CASE ${returned.map(() => "WHEN activity_id = ? AND sku_id = ? THEN ?").join(" ")} END
        WHERE (activity_id, sku_id) IN (${returned.map(() => "(?, ?)").join(", ")})`,
      [
        ...returned.flatMap((sku) => [sku.activityId, sku.skuId, sku.units]),
        ...returned.flatMap((sku) => [sku.activityId, sku.skuId]),
      ],
    );
    return due.length;
  });
}

/** Every order due now closed, a batch to a transaction until a batch comes back short: a sale's deadline is over in seconds. */
export async function closeAllExpiredOrders(pool: Pool, batchSize = 100): Promise<number> {
  let closed = 0;
  for (let batch = batchSize; batch === batchSize; closed += batch)
    batch = await closeExpiredOrders(pool, batchSize);
  return closed;
}

export interface PaymentEvent {
  eventId: string;
  orderId: string;
  status: "SUCCEEDED" | "FAILED";
  amountCents: number;
  currency: string;
}

/** The order a payment event names, as the event's transaction holds it locked. */
export interface PaidOrder {
  state: Order["state"];
  amountCents: number;
  currency: string;
}

/** What an event does, decided by the payment policy (packages/sale payments.ts), recorded here. */
export interface PaymentDecision<Outcome extends string> {
  outcome: Outcome;
  /** PENDING → PAID. */
  pays: boolean;
  needsRefund: boolean;
}

export type PaymentRecord<Outcome extends string> =
  | { kind: "recorded"; outcome: Outcome; order: Order | undefined }
  | { kind: "duplicate"; outcome: Outcome };

/**
 * Records a provider's payment event exactly once: the event row and its effect commit together, and
 * the order row is locked first, so a racing expiry either closed it before or waits. `decide` is the
 * policy, given the order as locked (undefined: no such order).
 */
export async function recordPayment<Outcome extends string>(
  pool: Pool,
  event: PaymentEvent,
  decide: (order: PaidOrder | undefined, event: PaymentEvent) => PaymentDecision<Outcome>,
): Promise<PaymentRecord<Outcome>> {
  try {
    return await inTransaction(pool, async (connection) => {
      const [orders] = await connection.query<RowDataPacket[]>(
        "SELECT state, amount_cents, currency FROM sale_order WHERE order_id = ? FOR UPDATE",
        [event.orderId],
      );
      const row = orders[0];
      const decision = decide(
        row && { state: row.state, amountCents: Number(row.amount_cents), currency: row.currency },
        event,
      );
      await connection.query(
        `INSERT INTO payment_event (event_id, order_id, status, amount_cents, currency, outcome, needs_refund)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
        [
          event.eventId,
          event.orderId,
          event.status,
          event.amountCents,
          event.currency,
          decision.outcome,
          decision.needsRefund,
        ],
      );
      if (decision.pays)
        await connection.query(
          "UPDATE sale_order SET state = 'PAID' WHERE order_id = ? AND state = 'PENDING'",
          [event.orderId],
        );
      return {
        kind: "recorded",
        outcome: decision.outcome,
        order: row ? await findOrder(connection, event.orderId) : undefined,
      } as const;
    });
  } catch (error) {
    if (!isDuplicateKey(error)) throw error;
    const [rows] = await pool.query<RowDataPacket[]>("SELECT outcome FROM payment_event WHERE event_id = ?", [
      event.eventId,
    ]);
    return { kind: "duplicate", outcome: rows[0]?.outcome };
  }
}
