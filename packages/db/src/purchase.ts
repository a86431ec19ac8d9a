import type { Pool, PoolConnection, RowDataPacket } from "mysql2/promise";
import { isConnectionLoss, isDuplicateKey, isLockConflict } from "./errors.ts";
import {
  findBlockingOrder,
  findPurchase,
  type Order,
  type OrderRow,
  orderColumns,
  toOrder,
} from "./orders.ts";
import { lockWaitTimeoutS } from "./pool.ts";

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
 * The whole decision for N buyers of one activity's SKUs in one round trip, COMMIT included, so the
 * stock rows are never locked while a busy application event loop gets round to sending the next
 * statement (measured: that wait, not MySQL, dominated purchase latency under a storm; see
 * docs/adr/0006). The window is read once; the batch's stock rows are locked (one locking read, in
 * key order, so two batches sharing SKUs queue rather than deadlock). The buyers who can be new are
 * picked first (`@fg_new`, their indexes): no order under their key yet and no live order of theirs
 * for the SKU, so the insert cannot conflict with what is committed and a buyer seen before costs the
 * others nothing. Each SKU's new buyers' orders are inserted, priced from its row, only if its row
 * holds units for all of them and the sale is open, and only then is the row decremented by their
 * count. That order is the binlog's: the cache sees a purchase's orders (which free the reservations
 * that admitted them) before the stock they took, so no split of a transaction's changes ever counts a
 * sold unit twice (ADR 0005). Many SKUs in one transaction: MySQL's cost is per transaction far more
 * than per order (ADR 0015). Needs a pool with `multipleStatements` (every value is still a bound
 * parameter). Results: [5] the decrements, [7] the orders under the buyers' keys, [8] `@fg_new`.
 */
function decisionBatch(inputs: PurchaseInput[]): { sql: string; params: unknown[] } {
  const { activityId } = inputs[0];
  if (inputs.some((input) => input.activityId !== activityId))
    throw new Error("a batch holds buyers of one activity");
  const skus = [...new Set(inputs.map((input) => input.skuId))];
  // The buyers are one JSON parameter read as a table: MySQL parses and plans one table function where
  // a UNION of a SELECT per buyer cost it a plan per buyer at each of the four places that read them.
  // A user id goes as a JSON number (ids are safe integers): MariaDB would read a string that is no
  // number as user 0, where a JSON null (what anything else becomes) fails the insert.
  const buyers = `JSON_TABLE(?, '$[*]' COLUMNS (i INT PATH '$[0]',
    request_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin PATH '$[1]',
    user_id BIGINT PATH '$[2]', sku_id BIGINT PATH '$[3]'))`;
  const buyerList = JSON.stringify(
    inputs.map((input, i) => [i, input.requestId, Number(input.userId), input.skuId]),
  );
  const skuList = skus.map(() => "?").join(", ");
  const isNew = "FIND_IN_SET(b.i, @fg_new)";
  const demand = `SELECT b.sku_id, COUNT(*) AS n FROM ${buyers} b WHERE ${isNew} GROUP BY b.sku_id`;
  // The window is read apart, so that only the stock rows are locked, not the activity their SKUs share.
  const sql = `START TRANSACTION;
SET @fg_open = (SELECT NOW(3) >= starts_at AND NOW(3) < ends_at FROM activity WHERE id = ?);
SELECT COUNT(*) INTO @fg_locked FROM sale_stock WHERE activity_id = ? AND sku_id IN (${skuList}) FOR UPDATE;
SET @fg_new = (SELECT GROUP_CONCAT(b.i) FROM ${buyers} b
  WHERE NOT EXISTS (SELECT 1 FROM sale_order o WHERE o.user_id = b.user_id AND o.request_id = b.request_id)
    AND NOT EXISTS (SELECT 1 FROM sale_order o WHERE o.activity_id = ? AND o.sku_id = b.sku_id
                     AND o.user_id = b.user_id AND o.closed_seq = 0));
INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
  SELECT b.request_id, s.activity_id, s.sku_id, b.user_id, 'PENDING', s.price_cents, s.currency, NOW(3), NOW(3) + INTERVAL a.payment_timeout_s SECOND
    FROM ${buyers} b JOIN (${demand}) d ON d.sku_id = b.sku_id
    JOIN sale_stock s ON s.activity_id = ? AND s.sku_id = b.sku_id JOIN activity a ON a.id = s.activity_id
   WHERE ${isNew} AND @fg_open = 1 AND s.available >= d.n;
UPDATE sale_stock s JOIN (${demand}) d ON d.sku_id = s.sku_id SET s.available = s.available - d.n
 WHERE s.activity_id = ? AND @fg_open = 1 AND s.available >= d.n;
COMMIT;
SELECT ${orderColumns} FROM sale_order WHERE ${inputs.map(() => "(user_id = ? AND request_id = ?)").join(" OR ")};
SELECT @fg_new AS new_buyers`;
  const params = [
    activityId,
    activityId,
    ...skus,
    buyerList,
    activityId,
    buyerList,
    buyerList,
    activityId,
    buyerList,
    activityId,
    ...inputs.flatMap((input) => [input.userId, input.requestId]),
  ];
  return { sql, params };
}

/** Where the decision's statements leave their results (see decisionBatch). */
const decrementResult = 5;
const ordersResult = 7;
const newBuyersResult = 8;

type Affected = { affectedRows: number };

/** The lock wait ends first (and rolls the statement back): a timed-out decision never commits later. */
const decideTimeoutMs = (lockWaitTimeoutS + 2) * 1000;

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
 * Several buyers of one activity's SKUs decided in one transaction, one round trip: each stock row is
 * locked and the redo log flushed once for all of them (ADR 0007, ADR 0015). All or nothing per SKU:
 * a SKU's row is decremented by its new buyers only if that many units are there and the sale is open.
 * Each buyer gets what the transaction decided: created (an order this transaction inserted), or, for a
 * buyer seen before, its replay, a reused key or the order that blocks them; `undefined` for the new
 * buyers of a SKU that could not take them all, and for a second buyer of the batch with the same user
 * and key or SKU, whom the caller decides alone (that names each one's own outcome). `null` when
 * nothing was committed (a conflict with a transaction running meanwhile, a deadlock).
 */
export async function placeOrders(
  pool: Pool,
  inputs: PurchaseInput[],
): Promise<(PurchaseDecision | undefined)[] | null> {
  // One buyer per user and key, and per user and SKU: a second would conflict with the first's insert.
  const seenKeys = new Set<string>();
  const batch = inputs.filter((input) => {
    const [key, sku] = [`${input.userId}/${input.requestId}`, `${input.userId}@${input.skuId}`];
    if (seenKeys.has(key) || seenKeys.has(sku)) return false;
    seenKeys.add(key).add(sku);
    return true;
  });
  const { sql, params } = decisionBatch(batch);
  const decisions = await decideOnConnection(pool, sql, params, {
    committed(results) {
      const fresh = new Set(
        String((results[newBuyersResult] as RowDataPacket[])[0]?.new_buyers ?? "")
          .split(",")
          .filter(Boolean)
          .map(Number),
      );
      const byKey = new Map(
        (results[ordersResult] as OrderRow[]).map((row) => [`${row.user_id}/${row.request_id}`, row]),
      );
      const rowOf = (input: PurchaseInput) => byKey.get(`${input.userId}/${input.requestId}`);
      // A SKU sold to its new buyers holds each one's order for that SKU (this transaction's inserts);
      // one new buyer without it means the SKU was not sold.
      const unsold = new Set(
        batch
          .filter((input, i) => fresh.has(i) && Number(rowOf(input)?.sku_id) !== input.skuId)
          .map((input) => input.skuId),
      );
      const answer = (input: PurchaseInput, isNew: boolean): PurchaseDecision | undefined => {
        const row = rowOf(input);
        if (isNew && !unsold.has(input.skuId)) return { kind: "created", order: committedOrder(row, input) };
        if (row) return sameBuyer(toOrder(row), input);
        return isNew ? undefined : { kind: "already_purchased" };
      };
      return new Map(batch.map((input, i) => [input, answer(input, fresh.has(i))]));
    },
    duplicate: () => null,
    lockConflict: () => null,
  });
  return decisions && inputs.map((input) => decisions.get(input));
}

/**
 * Sends one decision batch on a connection of its own. A failing statement stops the batch before its
 * COMMIT and is rolled back (`duplicate` resolves a unique-key conflict, `lockConflict` a lost lock); a
 * connection lost, or a batch past the timeout (a hung database must not hold a slot forever), is an
 * unknown outcome.
 */
async function decideOnConnection<T>(
  pool: Pool,
  sql: string,
  params: unknown[],
  decide: {
    committed: (results: unknown[], connection: PoolConnection) => T | Promise<T>;
    duplicate: (connection: PoolConnection) => T | Promise<T>;
    /** A deadlock or lock wait timeout (rolled back): thrown unless handled here. */
    lockConflict?: () => T;
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
      if (decide.lockConflict && isLockConflict(error)) return decide.lockConflict();
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
