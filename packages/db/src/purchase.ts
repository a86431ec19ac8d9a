import type { Pool, PoolConnection, RowDataPacket } from "mysql2/promise";
import { findBlockingOrder, findOrder, type Order } from "./orders.ts";

export interface PurchaseInput {
  requestId: string;
  activityId: number;
  skuId: number;
  userId: string;
}

export type PurchaseDecision =
  | { kind: "created"; order: Order }
  | { kind: "replayed"; order: Order }
  | { kind: "sold_out" }
  | { kind: "not_open" }
  | { kind: "unknown_sku" }
  | { kind: "already_purchased" }
  | { kind: "key_reused" };

/** The outcome is unknown: the transaction may or may not have committed. Retry with the same key. */
export class OutcomeUnknownError extends Error {
  override name = "OutcomeUnknownError";
}

interface SaleRow extends RowDataPacket {
  price_cents: number;
  currency: string;
  payment_timeout_s: number;
  open: number;
}

const DUPLICATE_KEY = 1062;

/**
 * The authoritative decision. The price read is a non-locking consistent read; the hot stock row is
 * locked only by the conditional UPDATE, right before COMMIT, so it is held as briefly as possible.
 */
export async function placeOrder(pool: Pool, input: PurchaseInput): Promise<PurchaseDecision> {
  const connection = await pool.getConnection();
  let committing = false;
  try {
    const [sale] = await connection.query<SaleRow[]>(
      `SELECT s.price_cents, s.currency, a.payment_timeout_s, (NOW(3) >= a.starts_at AND NOW(3) < a.ends_at) AS open
         FROM sale_stock s JOIN activity a ON a.id = s.activity_id
        WHERE s.activity_id = ? AND s.sku_id = ?`,
      [input.activityId, input.skuId],
    );
    const row = sale[0];
    if (!row) return { kind: "unknown_sku" };
    if (!Number(row.open)) return { kind: "not_open" };
    await connection.query("START TRANSACTION");
    try {
      await connection.query(
        `INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
         VALUES (?, ?, ?, ?, 'PENDING', ?, ?, NOW(3), NOW(3) + INTERVAL ? SECOND)`,
        [
          input.requestId,
          input.activityId,
          input.skuId,
          input.userId,
          row.price_cents,
          row.currency,
          row.payment_timeout_s,
        ],
      );
    } catch (error) {
      await connection.query("ROLLBACK");
      if ((error as { errno?: number }).errno === DUPLICATE_KEY) return resolveConflict(connection, input);
      throw error;
    }
    const [update] = await connection.query(
      "UPDATE sale_stock SET available = available - 1 WHERE activity_id = ? AND sku_id = ? AND available >= 1",
      [input.activityId, input.skuId],
    );
    if ((update as { affectedRows: number }).affectedRows !== 1) {
      await connection.query("ROLLBACK");
      return { kind: "sold_out" };
    }
    committing = true;
    await connection.query("COMMIT");
    const order = await findOrder(connection, input.requestId);
    if (!order) throw new OutcomeUnknownError("order vanished after commit");
    return { kind: "created", order };
  } catch (error) {
    if (committing || isConnectionLoss(error)) {
      connection.destroy();
      throw new OutcomeUnknownError((error as Error).message);
    }
    throw error;
  } finally {
    connection.release();
  }
}

async function resolveConflict(connection: PoolConnection, input: PurchaseInput): Promise<PurchaseDecision> {
  const existing = await findOrder(connection, input.requestId);
  if (existing) {
    const same =
      existing.userId === input.userId &&
      existing.activityId === input.activityId &&
      existing.skuId === input.skuId;
    return same ? { kind: "replayed", order: existing } : { kind: "key_reused" };
  }
  const blocking = await findBlockingOrder(connection, input.activityId, input.skuId, input.userId);
  return blocking ? { kind: "already_purchased" } : { kind: "sold_out" };
}

const isConnectionLoss = (error: unknown) => {
  const code = (error as { code?: string }).code ?? "";
  return (
    code === "PROTOCOL_CONNECTION_LOST" || code === "ECONNRESET" || code === "ETIMEDOUT" || code === "EPIPE"
  );
};
