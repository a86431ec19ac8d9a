import { setTimeout } from "node:timers/promises";
import type { Pool, PoolConnection, RowDataPacket } from "mysql2/promise";
import { isConnectionLoss, isDuplicateKey, isLockConflict } from "./errors.ts";
import { findPurchase, type Order, type OrderRow, orderColumns, toOrder } from "./orders.ts";
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
 * docs/adr/0006). It locks the batch's stock rows and nothing else: they are locked first, by primary
 * key, in key order (two batches sharing SKUs queue rather than deadlock), and every other read is a
 * plain consistent read (READ COMMITTED: `SELECT … INTO`, `INSERT … SELECT`), never a locking one — so
 * the activity row, other SKUs' rows and existing orders stay free for everyone else (a `SET @x =
 * (SELECT …)` would be a locking read, and a multi-table UPDATE locks whatever rows its plan visits).
 * The buyers who can be new are picked (`@fg_new`, their indexes; `@fg_demand`, how many per SKU): no
 * order under their key yet and no live order of theirs for the SKU, so the insert cannot conflict
 * with what is committed and a buyer seen before costs the others nothing. Each SKU's new buyers'
 * orders are inserted, priced from its row, only if its row holds units for all of them and the sale
 * is open, and only then is the row decremented by their count. That order is the binlog's: the cache
 * sees a purchase's orders (which free the reservations that admitted them) before the stock they
 * took, so no split of a transaction's changes ever counts a sold unit twice (ADR 0005). Many SKUs in
 * one transaction: MySQL's cost is per transaction far more than per order (ADR 0015). Needs a pool
 * with `multipleStatements` (every value is still a bound parameter). Results: [1] the stock rows as
 * locked, [7] the orders under the buyers' keys, [8] `@fg_new` and `@fg_open`.
 */
function decisionBatch(inputs: PurchaseInput[]): { sql: string; params: unknown[] } {
  const { activityId } = inputs[0];
  if (inputs.some((input) => input.activityId !== activityId))
    throw new Error("a batch holds buyers of one activity");
  const skus = [...new Set(inputs.map((input) => input.skuId))];
  // The buyers are one JSON parameter read as a table: MySQL parses and plans one table function where
  // a UNION of a SELECT per buyer cost it a plan per buyer at each place that reads them.
  // A user id goes as a JSON number (ids are safe integers): MariaDB would read a string that is no
  // number as user 0, where a JSON null (what anything else becomes) fails the insert.
  const buyers = `JSON_TABLE(?, '$[*]' COLUMNS (i INT PATH '$[0]',
    request_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin PATH '$[1]',
    user_id BIGINT PATH '$[2]', sku_id BIGINT PATH '$[3]'))`;
  const buyerList = JSON.stringify(
    inputs.map((input, i) => [i, input.requestId, Number(input.userId), input.skuId]),
  );
  // The batch's stock rows, by primary key alone: the lock set is the batch's SKUs whatever the plan.
  const stock = "sale_stock FORCE INDEX (PRIMARY)";
  const batchSkus = `activity_id = ? AND sku_id IN (${skus.map(() => "?").join(", ")})`;
  /** A SKU's count of new buyers (NULL: none). */
  const demandOf = (sku: string) => `CAST(JSON_EXTRACT(@fg_demand, CONCAT('$."', ${sku}, '"')) AS SIGNED)`;
  const sql = `START TRANSACTION;
SELECT sku_id, available FROM ${stock} WHERE ${batchSkus} ORDER BY sku_id FOR UPDATE;
SELECT MAX(NOW(3) >= starts_at AND NOW(3) < ends_at), MAX(payment_timeout_s) INTO @fg_open, @fg_timeout
  FROM activity WHERE id = ?;
SELECT GROUP_CONCAT(n.buyers), JSON_OBJECTAGG(n.sku_id, n.buyer_count) INTO @fg_new, @fg_demand
  FROM (SELECT b.sku_id, GROUP_CONCAT(b.i) AS buyers, COUNT(*) AS buyer_count FROM ${buyers} b
         WHERE NOT EXISTS (SELECT 1 FROM sale_order o WHERE o.user_id = b.user_id AND o.request_id = b.request_id)
           AND NOT EXISTS (SELECT 1 FROM sale_order o WHERE o.activity_id = ? AND o.sku_id = b.sku_id
                            AND o.user_id = b.user_id AND o.closed_seq = 0)
         GROUP BY b.sku_id) n;
INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
  SELECT b.request_id, s.activity_id, s.sku_id, b.user_id, 'PENDING', s.price_cents, s.currency, NOW(3), NOW(3) + INTERVAL @fg_timeout SECOND
    FROM ${buyers} b JOIN sale_stock s FORCE INDEX (PRIMARY) ON s.activity_id = ? AND s.sku_id = b.sku_id
   WHERE FIND_IN_SET(b.i, @fg_new) AND @fg_open = 1 AND s.available >= ${demandOf("b.sku_id")};
UPDATE ${stock} SET available = available - ${demandOf("sku_id")}
 WHERE ${batchSkus} AND @fg_open = 1 AND available >= ${demandOf("sku_id")};
COMMIT;
SELECT ${orderColumns} FROM sale_order WHERE ${inputs.map(() => "(user_id = ? AND request_id = ?)").join(" OR ")};
SELECT @fg_new AS new_buyers, @fg_open AS open`;
  const params = [
    activityId,
    ...skus,
    activityId,
    buyerList,
    activityId,
    buyerList,
    activityId,
    activityId,
    ...skus,
    ...inputs.flatMap((input) => [input.userId, input.requestId]),
  ];
  return { sql, params };
}

/** The lock wait ends first (and rolls the statement back): a timed-out decision never commits later. */
const decideTimeoutMs = (lockWaitTimeoutS + 2) * 1000;

/**
 * A batch that lost a lock conflict (a deadlock, a lock wait timeout) or met a key committed since it
 * read who is new is rolled back whole and run again — the re-run sees that key's order and answers its
 * buyer from it — up to `attempts` times, while the first attempt is younger than `budgetMs`, after a
 * jittered pause (so that two victims do not meet again in step).
 */
const conflictRetry = { attempts: 4, budgetMs: 2 * lockWaitTimeoutS * 1000, pauseMs: 5 };

/** The batch's rows stayed contended through every attempt: nothing was committed; retry later. */
export class DecisionConflictError extends Error {
  override name = "DecisionConflictError";
  constructor(attempts: number, cause: unknown) {
    super(`the decision lost a lock conflict ${attempts} times: ${(cause as Error).message}`, { cause });
  }
}

const isConflict = (error: unknown) => isLockConflict(error) || isDuplicateKey(error);

/** One buyer decided alone: always a definite answer (or a thrown error). */
export async function placeOrder(pool: Pool, input: PurchaseInput): Promise<PurchaseDecision> {
  const [decision] = await placeOrders(pool, [input]);
  if (!decision) throw new Error(`no decision for the lone buyer of key ${input.requestId}`);
  return decision;
}

/**
 * Several buyers of one activity's SKUs decided in one transaction, one round trip: each stock row is
 * locked and the redo log flushed once for all of them (ADR 0007, ADR 0015). All or nothing per SKU:
 * a SKU's row is decremented by its new buyers only if that many units are there and the sale is open.
 * Each buyer gets what the transaction decided: created (an order this transaction inserted), a refusal
 * that holds for the whole SKU (not open, unknown, no unit left), or, for a buyer seen before, its
 * replay, a reused key or the order that blocks them. `undefined` for the new buyers of a SKU that had
 * units but fewer than them, and for a second buyer of the batch with the same user and key or SKU,
 * whom the caller decides alone (that names each one's own outcome). A lone buyer always gets an answer.
 */
export async function placeOrders(
  pool: Pool,
  inputs: PurchaseInput[],
): Promise<(PurchaseDecision | undefined)[]> {
  // One buyer per user and key, and per user and SKU: a second would conflict with the first's insert.
  const seenKeys = new Set<string>();
  const batch = inputs.filter((input) => {
    const [key, sku] = [`${input.userId}/${input.requestId}`, `${input.userId}@${input.skuId}`];
    if (seenKeys.has(key) || seenKeys.has(sku)) return false;
    seenKeys.add(key).add(sku);
    return true;
  });
  const { sql, params } = decisionBatch(batch);
  const started = performance.now();
  for (let attempt = 1; ; attempt += 1) {
    try {
      const decisions = await decideOnConnection(pool, sql, params, (results) => answers(batch, results));
      return inputs.map((input) => decisions.get(input));
    } catch (error) {
      if (!isConflict(error)) throw error;
      if (attempt >= conflictRetry.attempts || performance.now() - started >= conflictRetry.budgetMs)
        throw new DecisionConflictError(attempt, error);
      await setTimeout(Math.random() * conflictRetry.pauseMs * 2 ** attempt);
    }
  }
}

/** Each buyer's answer from what the committed transaction saw (see decisionBatch). */
function answers(
  batch: PurchaseInput[],
  results: unknown[],
): Map<PurchaseInput, PurchaseDecision | undefined> {
  const available = new Map(
    (results[lockedResult] as RowDataPacket[]).map((row) => [Number(row.sku_id), Number(row.available)]),
  );
  const outcome = (results[outcomeResult] as RowDataPacket[])[0];
  const open = Number(outcome?.open) === 1;
  const fresh = new Set(
    String(outcome?.new_buyers ?? "")
      .split(",")
      .filter(Boolean)
      .map(Number),
  );
  const demand = new Map<number, number>();
  for (const [i, input] of batch.entries())
    if (fresh.has(i)) demand.set(input.skuId, (demand.get(input.skuId) ?? 0) + 1);
  // The condition the INSERT and the UPDATE applied, from the rows as locked.
  const sold = (sku: number) => open && (available.get(sku) ?? 0) >= (demand.get(sku) ?? 0);
  const byKey = new Map(
    (results[ordersResult] as OrderRow[]).map((row) => [`${row.user_id}/${row.request_id}`, row]),
  );
  const answer = (input: PurchaseInput, isNew: boolean): PurchaseDecision | undefined => {
    const row = byKey.get(`${input.userId}/${input.requestId}`);
    if (!isNew) return row ? sameBuyer(toOrder(row), input) : { kind: "already_purchased" };
    if (sold(input.skuId)) return { kind: "created", order: committedOrder(row, input) };
    if (!available.has(input.skuId)) return { kind: "unknown_sku" };
    if (!open) return { kind: "not_open" };
    // No unit left: a refusal for all; some, but fewer than its buyers: each is decided alone.
    return available.get(input.skuId) === 0 ? { kind: "sold_out" } : undefined;
  };
  return new Map(batch.map((input, i) => [input, answer(input, fresh.has(i))]));
}

/** Where the decision's statements leave their results (see decisionBatch). */
const lockedResult = 1;
const ordersResult = 7;
const outcomeResult = 8;

/**
 * Sends one decision batch on a connection of its own. A failing statement stops the batch before its
 * COMMIT and is rolled back, and its error thrown; a connection lost, or a batch past the timeout (a
 * hung database must not hold a slot forever), is an unknown outcome.
 */
async function decideOnConnection<T>(
  pool: Pool,
  sql: string,
  params: unknown[],
  committed: (results: unknown[]) => T,
): Promise<T> {
  const connection = await pool.getConnection();
  try {
    let results: unknown[];
    try {
      [results] = (await connection.query({ sql, timeout: decideTimeoutMs }, params)) as unknown as [
        unknown[],
      ];
    } catch (error) {
      if (!isConnectionLoss(error)) await connection.query("ROLLBACK");
      throw error;
    }
    return committed(results);
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
