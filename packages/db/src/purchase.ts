import type { Pool, PoolConnection, RowDataPacket } from "mysql2/promise";
import { isConnectionLoss, isDuplicateKey } from "./errors.ts";
import {
  findBlockingOrder,
  findPurchase,
  type Order,
  type OrderRow,
  orderColumns,
  toOrder,
} from "./orders.ts";

export interface PurchaseInput {
  /** The buyer's Idempotency-Key: one purchase per user and key. */
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

/**
 * The whole decision for N buyers of one SKU in one round trip, COMMIT included, so the hot stock row
 * is never locked while a busy application event loop gets round to sending the next statement
 * (measured: that wait, not MySQL, dominated purchase latency under a storm; see docs/adr/0006). The
 * stock row is locked first and checked (stock and sale window); the orders are inserted, priced from
 * that row, and only then is the stock decremented by N. That order is the binlog's: the cache sees a
 * purchase's orders (which free the reservations that admitted them) before the stock they took, so no
 * split of a transaction's changes ever counts a sold unit twice (ADR 0005). Needs a pool with
 * `multipleStatements` (every value is still a bound parameter). Results: [4] the decrement, [6] the
 * orders as committed.
 */
function decisionBatch(inputs: PurchaseInput[]): { sql: string; params: unknown[] } {
  const { activityId, skuId } = inputs[0];
  if (inputs.some((input) => input.activityId !== activityId || input.skuId !== skuId))
    throw new Error("a batch holds buyers of one SKU");
  const buyers = inputs.map(() => "SELECT ? AS request_id, ? AS user_id").join(" UNION ALL ");
  // The window is read in a subquery so that only the stock row is locked, not the activity its SKUs share.
  const sql = `START TRANSACTION;
SET @fg_ok = 0;
SELECT s.available >= ? AND (SELECT NOW(3) >= a.starts_at AND NOW(3) < a.ends_at FROM activity a WHERE a.id = s.activity_id)
  INTO @fg_ok FROM sale_stock s WHERE s.activity_id = ? AND s.sku_id = ? FOR UPDATE;
INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
  SELECT b.request_id, s.activity_id, s.sku_id, b.user_id, 'PENDING', s.price_cents, s.currency, NOW(3), NOW(3) + INTERVAL a.payment_timeout_s SECOND
    FROM (${buyers}) b JOIN sale_stock s ON s.activity_id = ? AND s.sku_id = ? JOIN activity a ON a.id = s.activity_id
   WHERE @fg_ok = 1;
UPDATE sale_stock SET available = available - ? WHERE activity_id = ? AND sku_id = ? AND @fg_ok = 1;
COMMIT;
SELECT ${orderColumns} FROM sale_order WHERE ${inputs.map(() => "(user_id = ? AND request_id = ?)").join(" OR ")}`;
  const n = inputs.length;
  const params = [
    n,
    activityId,
    skuId,
    ...inputs.flatMap((input) => [input.requestId, input.userId]),
    activityId,
    skuId,
    n,
    activityId,
    skuId,
    ...inputs.flatMap((input) => [input.userId, input.requestId]),
  ];
  return { sql, params };
}

/** Where the decision's statements leave their results (see decisionBatch). */
const decrementResult = 4;
const ordersResult = 6;

type Affected = { affectedRows: number };

const decideTimeoutMs = 5000;

export function placeOrder(pool: Pool, input: PurchaseInput): Promise<PurchaseDecision> {
  const { sql, params } = decisionBatch([input]);
  return decideOnConnection(pool, sql, params, {
    async committed(results, connection) {
      const decremented = (results[decrementResult] as Affected).affectedRows === 1;
      const order = (results[ordersResult] as OrderRow[])[0];
      if (decremented) return { kind: "created", order: committedOrder(order, input) };
      // Nothing was committed. The key may already hold an order (a retry of a purchase that took the
      // last unit) or the user another one: those answers come before "sold out" or "not open".
      if (order) return sameBuyer(toOrder(order), input);
      if (await findBlockingOrder(connection, input.activityId, input.skuId, input.userId))
        return { kind: "already_purchased" };
      const [sale] = await connection.query<RowDataPacket[]>(
        `SELECT s.available, (NOW(3) >= a.starts_at AND NOW(3) < a.ends_at) AS open
           FROM sale_stock s JOIN activity a ON a.id = s.activity_id WHERE s.activity_id = ? AND s.sku_id = ?`,
        [input.activityId, input.skuId],
      );
      if (!sale[0]) return { kind: "unknown_sku" };
      return Number(sale[0].open) ? { kind: "sold_out" } : { kind: "not_open" };
    },
    duplicate: (connection) => resolveConflict(connection, input),
  });
}

/**
 * Several buyers of one SKU decided in one transaction, one round trip: the hot stock row is locked
 * and flushed once for all of them (ADR 0007). All or nothing: the decrement by N hits the row only if
 * N units are there and the sale is open, and one duplicate (a key or user seen before) fails the
 * insert, which rolls the whole batch back. `null` then: nothing was committed, and the caller decides
 * each buyer alone, which names each one's own outcome.
 */
export async function placeOrders(pool: Pool, inputs: PurchaseInput[]): Promise<Order[] | null> {
  const { sql, params } = decisionBatch(inputs);
  return decideOnConnection(pool, sql, params, {
    committed(results) {
      if ((results[decrementResult] as Affected).affectedRows !== 1) return null;
      const byBuyer = new Map(
        (results[ordersResult] as OrderRow[]).map((row) => [`${row.user_id}/${row.request_id}`, row]),
      );
      return inputs.map((input) => committedOrder(byBuyer.get(`${input.userId}/${input.requestId}`), input));
    },
    duplicate: () => null,
  });
}

/**
 * Sends one decision batch on a connection of its own. A failing statement stops the batch before its
 * COMMIT and is rolled back (`duplicate` resolves a unique-key conflict); a connection lost, or a batch
 * past the timeout (a hung database must not hold a slot forever), is an unknown outcome.
 */
async function decideOnConnection<T>(
  pool: Pool,
  sql: string,
  params: unknown[],
  decide: {
    committed: (results: unknown[], connection: PoolConnection) => T | Promise<T>;
    duplicate: (connection: PoolConnection) => T | Promise<T>;
  },
): Promise<T> {
  const connection = await pool.getConnection();
  try {
    let results: unknown[];
    try {
      [results] = (await connection.query({ sql, timeout: decideTimeoutMs }, params)) as unknown as [
        unknown[],
      ];
    } catch (error) {
      if (isConnectionLoss(error)) throw error;
      await connection.query("ROLLBACK");
      if (isDuplicateKey(error)) return await decide.duplicate(connection);
      throw error;
    }
    return await decide.committed(results, connection);
  } catch (error) {
    if (isConnectionLoss(error)) {
      // The COMMIT may or may not have run.
      connection.destroy();
      throw new OutcomeUnknownError((error as Error).message);
    }
    throw error;
  } finally {
    connection.release();
  }
}

/**
 * The order a committed decrement sold. Its absence cannot happen (we read our own commit), but if it
 * did, the unit is sold all the same: an unknown outcome, so that nobody releases the reservation.
 */
function committedOrder(row: OrderRow | undefined, input: PurchaseInput): Order {
  if (!row) throw new OutcomeUnknownError(`committed without the order of key ${input.requestId}`);
  return toOrder(row);
}

/** A user's key that already holds an order: the same purchase again gets it, another SKU is a reuse. */
const sameBuyer = (existing: Order, input: PurchaseInput): PurchaseDecision =>
  existing.activityId === input.activityId && existing.skuId === input.skuId
    ? { kind: "replayed", order: existing }
    : { kind: "key_reused" };

/** What this user's key already decided, if it has an order: the order again, or a refused reuse. */
export async function findReplay(
  db: Pool | PoolConnection,
  input: PurchaseInput,
): Promise<PurchaseDecision | undefined> {
  const existing = await findPurchase(db, input.userId, input.requestId);
  return existing && sameBuyer(existing, input);
}

async function resolveConflict(connection: PoolConnection, input: PurchaseInput): Promise<PurchaseDecision> {
  const replay = await findReplay(connection, input);
  if (replay) return replay;
  const blocking = await findBlockingOrder(connection, input.activityId, input.skuId, input.userId);
  return blocking ? { kind: "already_purchased" } : { kind: "sold_out" };
}
