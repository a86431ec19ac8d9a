import type { Pool, PoolConnection, RowDataPacket } from "mysql2/promise";
import { findBlockingOrder, findOrder, type Order, type OrderRow, orderColumns, toOrder } from "./orders.ts";

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

const DUPLICATE_KEY = 1062;

/**
 * The whole decision in two round trips, because under a flood every round trip waits for a busy event
 * loop: (1) START, INSERT the PENDING order priced from the SKU row (a consistent, non-locking read under
 * READ COMMITTED), the conditional decrement, and the new order row; (2) COMMIT or ROLLBACK. The hot
 * stock row is locked only from the UPDATE to the COMMIT. Needs a pool with `multipleStatements`.
 */
const decideSql = `START TRANSACTION;
INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
  SELECT ?, s.activity_id, s.sku_id, ?, 'PENDING', s.price_cents, s.currency, NOW(3), NOW(3) + INTERVAL a.payment_timeout_s SECOND
    FROM sale_stock s JOIN activity a ON a.id = s.activity_id
   WHERE s.activity_id = ? AND s.sku_id = ? AND NOW(3) >= a.starts_at AND NOW(3) < a.ends_at;
UPDATE sale_stock SET available = available - 1 WHERE activity_id = ? AND sku_id = ? AND available >= 1;
SELECT ${orderColumns} FROM sale_order WHERE request_id = ?`;

type Affected = { affectedRows: number };

export async function placeOrder(pool: Pool, input: PurchaseInput): Promise<PurchaseDecision> {
  const connection = await pool.getConnection();
  let committing = false;
  try {
    let results: unknown[];
    try {
      [results] = (await connection.query(decideSql, [
        input.requestId,
        input.userId,
        input.activityId,
        input.skuId,
        input.activityId,
        input.skuId,
        input.requestId,
      ])) as unknown as [unknown[]];
    } catch (error) {
      await connection.query("ROLLBACK");
      if ((error as { errno?: number }).errno === DUPLICATE_KEY) return resolveConflict(connection, input);
      throw error;
    }
    const inserted = (results[1] as Affected).affectedRows === 1;
    const decremented = (results[2] as Affected).affectedRows === 1;
    const order = (results[3] as OrderRow[])[0];
    if (inserted && decremented && order) {
      committing = true;
      await connection.query("COMMIT");
      return { kind: "created", order: toOrder(order) };
    }
    await connection.query("ROLLBACK");
    if (inserted) return { kind: "sold_out" };
    // Nothing inserted: the SKU is unknown or its sale is not open. Rare, so one more read is fine.
    const [sale] = await connection.query<RowDataPacket[]>(
      "SELECT 1 FROM sale_stock s JOIN activity a ON a.id = s.activity_id WHERE s.activity_id = ? AND s.sku_id = ?",
      [input.activityId, input.skuId],
    );
    return sale.length ? { kind: "not_open" } : { kind: "unknown_sku" };
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
