import { randomUUID } from "node:crypto";
import { setTimeout } from "node:timers/promises";
import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import { isConnectionLoss, isDuplicateKey, isLockConflict, isRowRefused } from "./errors.ts";
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

/** The last order id's time and its sequence within that millisecond. */
const lastOrderId = { ms: 0, seq: 0 };

/**
 * A new order's id: a UUID (the form every order id has had) of version 7, the time in milliseconds
 * and then a sequence within it, so that one process's orders land in order at the end of the table's
 * clustered index: ids in random order within a page split it in the middle (measured: a 50-order
 * insert cost more than with MySQL's `UUID()` default, whose leading field counts up for minutes).
 */
export function newOrderId(now = Date.now()): string {
  if (now > lastOrderId.ms) Object.assign(lastOrderId, { ms: now, seq: 0 });
  else if (lastOrderId.seq < 0xfff) lastOrderId.seq += 1;
  else Object.assign(lastOrderId, { ms: lastOrderId.ms + 1, seq: 0 });
  const time = lastOrderId.ms.toString(16).padStart(12, "0");
  const seq = lastOrderId.seq.toString(16).padStart(3, "0");
  return `${time.slice(0, 8)}-${time.slice(8)}-7${seq}-${randomUUID().slice(19)}`;
}

interface Price {
  priceCents: number;
  currency: string;
}

/** A SKU's row as the decision locked it. */
interface LockedSku extends Price {
  available: number;
}

/** What a decision's transaction saw, read from its results (a SKU absent: none in the activity). */
interface Locked {
  skus: Map<number, LockedSku>;
  open: boolean;
}

/** The batch's stock rows, by primary key alone: the lock set is the batch's SKUs whatever the plan. */
const stock = "sale_stock FORCE INDEX (PRIMARY)";
const lockStock = (where: string) =>
  `SELECT sku_id, available, price_cents, currency FROM ${stock} WHERE ${where} ORDER BY sku_id FOR UPDATE`;
const lockedSkus = (rows: RowDataPacket[]) =>
  new Map(
    rows.map((row) => [
      Number(row.sku_id),
      {
        available: Number(row.available),
        priceCents: Number(row.price_cents),
        currency: String(row.currency),
      },
    ]),
  );

/** The batch's SKUs in key order, and the condition that names their rows among the activity's. */
function batchSkus(inputs: PurchaseInput[]) {
  const { activityId } = inputs[0];
  if (inputs.some((input) => input.activityId !== activityId))
    throw new Error("a batch holds buyers of one activity");
  const skus = [...new Set(inputs.map((input) => input.skuId))].sort((a, b) => a - b);
  return { activityId, skus, where: `activity_id = ? AND sku_id IN (${skus.map(() => "?").join(", ")})` };
}

/** An activity row's window is open now. */
const openNow = "NOW(3) >= starts_at AND NOW(3) < ends_at";

/**
 * The window as committed, by a plain consistent read (READ COMMITTED: `SELECT … INTO` locks nothing,
 * where `SET @x = (SELECT …)` would be a locking read); MAX, so that an unknown activity still sets them.
 */
const windowRead = `SELECT MAX(${openNow}), MAX(payment_timeout_s), NOW(3)
  INTO @fg_open, @fg_timeout, @fg_now FROM activity WHERE id = ?`;

/**
 * The priced form's lock and window read in one statement: the batch's stock rows locked by primary key
 * (one range scan, so in key order) and counted, and the window read by subqueries, which the statement's
 * locking clause does not reach (a consistent read of the activity, as windowRead's). `@fg_open` is false
 * too when one of the batch's stock rows is gone.
 */
const lockWithWindow = (where: string) =>
  `SELECT COUNT(*) = ? AND (SELECT ${openNow} FROM activity WHERE id = ?),
       (SELECT payment_timeout_s FROM activity WHERE id = ?), NOW(3)
  INTO @fg_open, @fg_timeout, @fg_now FROM ${stock} WHERE ${where} FOR UPDATE`;

/** When an order was made and when it falls due, as the database stamped them. */
interface OrderTimes {
  created_at: Date;
  expires_at: Date;
}

/** The order a decision inserted for a buyer, as stored. */
const newOrder = (orderId: string, input: PurchaseInput, price: Price, times: OrderTimes): Order => ({
  orderId,
  requestId: input.requestId,
  activityId: input.activityId,
  skuId: input.skuId,
  userId: String(Number(input.userId)),
  state: "PENDING",
  amountCents: price.priceCents,
  currency: price.currency,
  createdAt: times.created_at,
  expiresAt: times.expires_at,
});

/**
 * The buyers are one JSON parameter read as a table: MySQL parses and plans one table function where a
 * UNION of a SELECT per buyer cost it a plan per buyer at each place that reads them. A user id goes as
 * a JSON number (ids are safe integers): MariaDB would read a string that is no number as user 0, where
 * a JSON null (what anything else becomes) fails the insert.
 */
const buyersTable = (columns: string) => `JSON_TABLE(?, '$[*]' COLUMNS (${columns}))`;
const orderInsert = (columns: string) =>
  `INSERT INTO sale_order (${columns}request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)`;

/**
 * The decision for N buyers of one activity's SKUs in one round trip, COMMIT included, so the stock rows
 * are never locked while a busy application event loop gets round to sending the next statement
 * (measured: that wait, not MySQL, dominated purchase latency under a storm; see docs/adr/0006). It
 * locks the batch's stock rows and nothing else: they are locked first, by primary key, in key order
 * (two batches sharing SKUs queue rather than deadlock), and every other read is a plain consistent read
 * (`SELECT … INTO`, `INSERT … SELECT` under READ COMMITTED), never a locking one — so the activity row,
 * other SKUs' rows and existing orders stay free for everyone else (a multi-table UPDATE would lock
 * whatever rows its plan visits). Each SKU's orders are inserted, priced from its row, only if its row
 * holds units for all its buyers and the sale is open, and only then is the row decremented by their
 * count. That order is the binlog's: the cache sees a purchase's orders (which free the reservations
 * that admitted them) before the stock they took, so no split of a transaction's changes ever counts a
 * sold unit twice (ADR 0005). Many SKUs in one transaction: MySQL's cost is per transaction far more
 * than per order (ADR 0015). Needs a pool with `multipleStatements` (every value is a bound parameter).
 *
 * This lean form takes every buyer to be new — the cache let through only buyers with no purchase it
 * knows of — so it reads no existing order, and it carries no session variable between statements: the
 * window is read where the orders are inserted (a consistent read of the activity, joined), a SKU's row
 * is decremented only if its first order of the batch is there (inserted by this transaction, all of its
 * orders or none), and the orders' ids are made here (newOrderId). A buyer seen before meets a unique key
 * (one purchase per user and key, one live purchase per user and SKU), the whole transaction rolls back,
 * and the batch runs again in its careful form, which reads who is new (ADR 0025). Results: [1] the stock
 * rows as locked, [2] the orders inserted, [3] the rows decremented, [5] the orders' times.
 */
function leanBatch(inputs: PurchaseInput[]) {
  const { activityId, skus, where } = batchSkus(inputs);
  const demand = buyersPerSku(inputs);
  const orderIds = inputs.map(() => newOrderId());
  /** Each SKU's first order of this batch: inserted exactly when all of the SKU's are. */
  const firstOrder = new Map<number, string>();
  for (const [i, input] of inputs.entries())
    if (!firstOrder.has(input.skuId)) firstOrder.set(input.skuId, orderIds[i]);
  const buyers = buyersTable(`order_id CHAR(36) CHARACTER SET ascii COLLATE ascii_bin PATH '$[0]',
    request_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin PATH '$[1]',
    user_id BIGINT PATH '$[2]', sku_id BIGINT PATH '$[3]', demand INT PATH '$[4]'`);
  // Named by its table: inside the subquery a bare sku_id would be the order's.
  const caseOf = (values: Map<number, unknown>) => ({
    sql: `CASE sale_stock.sku_id ${skus.map(() => "WHEN ? THEN ?").join(" ")} END`,
    params: skus.flatMap((sku) => [sku, values.get(sku)]),
  });
  const [byDemand, byFirstOrder] = [caseOf(demand), caseOf(firstOrder)];
  const sql = `START TRANSACTION;
${lockStock(where)};
${orderInsert("order_id, ")}
  SELECT b.order_id, b.request_id, s.activity_id, s.sku_id, b.user_id, 'PENDING', s.price_cents, s.currency, NOW(3), NOW(3) + INTERVAL a.payment_timeout_s SECOND
    FROM ${buyers} b JOIN sale_stock s FORCE INDEX (PRIMARY) ON s.activity_id = ? AND s.sku_id = b.sku_id
    JOIN activity a ON a.id = s.activity_id
   WHERE NOW(3) >= a.starts_at AND NOW(3) < a.ends_at AND s.available >= b.demand;
UPDATE ${stock} SET available = available - ${byDemand.sql}
 WHERE ${where} AND EXISTS (SELECT 1 FROM sale_order o WHERE o.order_id = ${byFirstOrder.sql});
COMMIT;
SELECT created_at, expires_at FROM sale_order WHERE order_id IN (${skus.map(() => "?").join(", ")}) LIMIT 1`;
  const buyerList = JSON.stringify(
    inputs.map((input, i) => [
      orderIds[i],
      input.requestId,
      Number(input.userId),
      input.skuId,
      demand.get(input.skuId),
    ]),
  );
  const params = [
    activityId,
    ...skus,
    buyerList,
    activityId,
    ...byDemand.params,
    activityId,
    ...skus,
    ...byFirstOrder.params,
    ...firstOrder.values(),
  ];
  const read = (results: unknown[]) => {
    const times = (results[5] as RowDataPacket[])[0] as OrderTimes | undefined;
    return {
      skus: lockedSkus(results[1] as RowDataPacket[]),
      inserted: (results[2] as ResultSetHeader).affectedRows,
      decremented: (results[3] as ResultSetHeader).affectedRows,
      /** The order this transaction inserted for the i-th buyer. */
      order: (i: number, sku: LockedSku): Order => {
        if (!times)
          throw new OutcomeUnknownError(`committed without the order of key ${inputs[i].requestId}`);
        return newOrder(orderIds[i], inputs[i], sku, times);
      },
    };
  };
  return { sql, params, read, demand };
}

/** Each SKU's price as a decision of this pool last locked and sold it: the priced form's guess, which it checks. */
const knownPrices = new WeakMap<Pool, Map<string, Price>>();
/** Bounds the memory of prices: SKUs that exist, each learned from its locked row, but many sales over time. */
const knownPricesMax = 100_000;
const priceKey = (activityId: number, skuId: number) => `${activityId}/${skuId}`;

/**
 * The prices of a decision's locked rows, kept for the SKUs it sold: one it did not (no unit left, the
 * window closed) goes back to the lean form, which answers it in one round trip where the priced form
 * would be refused first.
 */
function learnPrices(
  pool: Pool,
  activityId: number,
  skus: Map<number, LockedSku>,
  sold: (skuId: number) => boolean,
) {
  let prices = knownPrices.get(pool);
  if (!prices || prices.size >= knownPricesMax) {
    prices = new Map();
    knownPrices.set(pool, prices);
  }
  for (const [skuId, { priceCents, currency }] of skus)
    if (sold(skuId)) prices.set(priceKey(activityId, skuId), { priceCents, currency });
    else prices.delete(priceKey(activityId, skuId));
}

/**
 * The decision's first form, for a batch whose every SKU has a known price: the statements the floor
 * itself runs — a multi-row `INSERT … VALUES` of the orders, priced by the client, and each stock row
 * decremented by primary key — in one round trip, with every condition turned into a refused row: the
 * window, read as the rows are locked (`@fg_open`, false too when a batch's stock row is gone), makes the orders' expiry
 * NULL, which their NOT NULL column refuses; a price that changed or too few units make the SKU's row
 * negative, which its CHECK refuses. Either error stops the round trip before its COMMIT, the transaction
 * is rolled back, and the batch runs again in the lean form, which decides each SKU apart (ADR 0029).
 * Results: [2] the orders inserted, [3] the rows decremented, [5] the orders' times.
 */
function pricedBatch(inputs: PurchaseInput[], prices: Map<string, Price>) {
  const { activityId, skus, where } = batchSkus(inputs);
  const demand = buyersPerSku(inputs);
  const priceOf = (skuId: number) => prices.get(priceKey(activityId, skuId)) as Price;
  const orderIds = inputs.map(() => newOrderId());
  const sql = `START TRANSACTION;
${lockWithWindow(where)};
${orderInsert("order_id, ")} VALUES ${inputs
    .map(
      () =>
        "(?, ?, ?, ?, ?, 'PENDING', ?, ?, @fg_now, @fg_now + INTERVAL IF(@fg_open, @fg_timeout, NULL) SECOND)",
    )
    .join(", ")};
UPDATE ${stock} SET available = IF((sku_id, price_cents, currency) IN (${skus.map(() => "(?, ?, ?)").join(", ")}),
       available - CASE sku_id ${skus.map(() => "WHEN ? THEN ?").join(" ")} END, -1)
 WHERE ${where};
COMMIT;
SELECT CAST(@fg_now AS DATETIME(3)) AS created_at, CAST(@fg_now + INTERVAL @fg_timeout SECOND AS DATETIME(3)) AS expires_at`;
  const params = [
    skus.length,
    activityId,
    activityId,
    activityId,
    ...skus,
    ...inputs.flatMap((input, i) => {
      const { priceCents, currency } = priceOf(input.skuId);
      return [
        orderIds[i],
        input.requestId,
        activityId,
        input.skuId,
        Number(input.userId),
        priceCents,
        currency,
      ];
    }),
    ...skus.flatMap((skuId) => [skuId, priceOf(skuId).priceCents, priceOf(skuId).currency]),
    ...skus.flatMap((skuId) => [skuId, demand.get(skuId)]),
    activityId,
    ...skus,
  ];
  const read = (results: unknown[]) => {
    const inserted = (results[2] as ResultSetHeader).affectedRows;
    const decremented = (results[3] as ResultSetHeader).affectedRows;
    if (inserted !== inputs.length || decremented !== skus.length)
      throw new OutcomeUnknownError(
        `the decision inserted ${inserted} orders and took units of ${decremented} SKUs, where it sold ${inputs.length} and ${skus.length}`,
      );
    const times = (results[5] as RowDataPacket[])[0] as OrderTimes;
    return new Map<PurchaseInput, PurchaseDecision>(
      inputs.map((input, i) => [
        input,
        { kind: "created", order: newOrder(orderIds[i], input, priceOf(input.skuId), times) },
      ]),
    );
  };
  return { sql, params, read };
}

/**
 * The careful form of the decision, for a batch in which the lean form met a buyer seen before: the same
 * locks and the same writes, but the buyers who can be new are picked first (`@fg_new`, their indexes;
 * `@fg_demand`, how many per SKU) — no order under their key yet and no live order of theirs for the SKU
 * — so the insert cannot conflict with what is committed and a buyer seen before costs the others
 * nothing. Results: [1] the stock rows as locked, [7] the orders under the buyers' keys, [8] `@fg_new`
 * and `@fg_open`.
 */
function carefulBatch(inputs: PurchaseInput[]) {
  const { activityId, skus, where } = batchSkus(inputs);
  const buyers = buyersTable(`i INT PATH '$[0]',
    request_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin PATH '$[1]',
    user_id BIGINT PATH '$[2]', sku_id BIGINT PATH '$[3]'`);
  const buyerList = JSON.stringify(
    inputs.map((input, i) => [i, input.requestId, Number(input.userId), input.skuId]),
  );
  /** A SKU's count of new buyers (NULL: none). */
  const demandOf = (sku: string) => `CAST(JSON_EXTRACT(@fg_demand, CONCAT('$."', ${sku}, '"')) AS SIGNED)`;
  const keys = ordersUnderKeys(inputs);
  const sql = `START TRANSACTION;
${lockStock(where)};
${windowRead};
SELECT GROUP_CONCAT(n.buyers), JSON_OBJECTAGG(n.sku_id, n.buyer_count) INTO @fg_new, @fg_demand
  FROM (SELECT b.sku_id, GROUP_CONCAT(b.i) AS buyers, COUNT(*) AS buyer_count FROM ${buyers} b
         WHERE NOT EXISTS (SELECT 1 FROM sale_order o WHERE o.user_id = b.user_id AND o.request_id = b.request_id)
           AND NOT EXISTS (SELECT 1 FROM sale_order o WHERE o.activity_id = ? AND o.sku_id = b.sku_id
                            AND o.user_id = b.user_id AND o.closed_seq = 0)
         GROUP BY b.sku_id) n;
${orderInsert("")}
  SELECT b.request_id, s.activity_id, s.sku_id, b.user_id, 'PENDING', s.price_cents, s.currency, @fg_now, @fg_now + INTERVAL @fg_timeout SECOND
    FROM ${buyers} b JOIN sale_stock s FORCE INDEX (PRIMARY) ON s.activity_id = ? AND s.sku_id = b.sku_id
   WHERE FIND_IN_SET(b.i, @fg_new) AND @fg_open = 1 AND s.available >= ${demandOf("b.sku_id")};
UPDATE ${stock} SET available = available - ${demandOf("sku_id")}
 WHERE ${where} AND @fg_open = 1 AND available >= ${demandOf("sku_id")};
COMMIT;
${keys.sql};
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
    ...keys.params,
  ];
  const read = (results: unknown[]) => {
    const outcome = (results[8] as RowDataPacket[])[0];
    return {
      skus: lockedSkus(results[1] as RowDataPacket[]),
      open: Number(outcome?.open) === 1,
      fresh: new Set(
        String(outcome?.new_buyers ?? "")
          .split(",")
          .filter(Boolean)
          .map(Number),
      ),
      orders: results[7] as OrderRow[],
    };
  };
  return { sql, params, read };
}

/** The orders under the buyers' keys. */
const ordersUnderKeys = (inputs: PurchaseInput[]) => ({
  sql: `SELECT ${orderColumns} FROM sale_order WHERE ${inputs.map(() => "(user_id = ? AND request_id = ?)").join(" OR ")}`,
  params: inputs.flatMap((input) => [input.userId, input.requestId]),
});

/**
 * How long a decision's round trip may take. One round trip can wait for a lock more than once (the stock
 * rows, then a key another transaction is inserting) or for a table's metadata lock, so the server can
 * still be running it when this ends: the client then kills it (endOnServer) before answering.
 */
const decideTimeoutMs = (lockWaitTimeoutS + 2) * 1000;
/** How long the killed decision's connection may take to go; past it, the outcome stays open. */
const killedGoneMs = 5_000;

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
    const [key, sku] = [purchaseKey(input.userId, input.requestId), `${input.userId}@${input.skuId}`];
    if (seenKeys.has(key) || seenKeys.has(sku)) return false;
    seenKeys.add(key).add(sku);
    return true;
  });
  const started = performance.now();
  // Priced when every SKU's price is known, lean when a SKU may not sell to all its buyers; once a buyer
  // seen before turned up, careful until the batch is decided.
  const prices = knownPrices.get(pool);
  const { activityId } = batch[0];
  let form: "priced" | "lean" | "careful" = batch.every((input) =>
    prices?.has(priceKey(activityId, input.skuId)),
  )
    ? "priced"
    : "lean";
  for (let attempt = 1; ; attempt += 1) {
    try {
      const decisions =
        form === "priced"
          ? await decidePriced(pool, batch, prices as Map<string, Price>)
          : form === "lean"
            ? await decideLean(pool, batch)
            : await decideCarefully(pool, batch);
      return inputs.map((input) => decisions.get(input));
    } catch (error) {
      if (form === "priced" && isRowRefused(error)) {
        form = "lean";
        attempt -= 1;
        continue;
      }
      if (!isConflict(error)) throw error;
      if (form !== "careful" && isDuplicateKey(error)) {
        form = "careful";
        attempt -= 1;
        continue;
      }
      if (attempt >= conflictRetry.attempts || performance.now() - started >= conflictRetry.budgetMs)
        throw new DecisionConflictError(attempt, error);
      await setTimeout(Math.random() * conflictRetry.pauseMs * 2 ** attempt);
    }
  }
}

type Decisions = Map<PurchaseInput, PurchaseDecision | undefined>;

/** How many of the buyers want each SKU. */
function buyersPerSku(inputs: PurchaseInput[]): Map<number, number> {
  const demand = new Map<number, number>();
  for (const input of inputs) demand.set(input.skuId, (demand.get(input.skuId) ?? 0) + 1);
  return demand;
}

/** The condition the INSERT and the UPDATE applied: the window open, the SKU's row holding all its buyers. */
function sells({ skus, open }: Locked, demand: Map<number, number>, skuId: number): LockedSku | undefined {
  const sku = skus.get(skuId);
  return open && sku !== undefined && sku.available >= (demand.get(skuId) ?? 0) ? sku : undefined;
}

/** A user's purchase under a key: what the idempotency key makes unique. */
const purchaseKey = (userId: unknown, requestId: unknown) => `${userId}/${requestId}`;

/**
 * A refusal that holds for a SKU's every new buyer: unknown, not open, no unit left — or `undefined`
 * for some units but fewer than its buyers, whom the caller decides one by one.
 */
function refusal({ skus, open }: Locked, skuId: number) {
  const sku = skus.get(skuId);
  if (!sku) return { kind: "unknown_sku" } as const;
  if (!open) return { kind: "not_open" } as const;
  return sku.available === 0 ? ({ kind: "sold_out" } as const) : undefined;
}

/**
 * The lean form, then for any buyer it did not sell to, what they already hold — read after the commit,
 * as plain reads (rare: the cache answers buyers seen before without the database): an order under their
 * key is theirs again (or a reused key), a live purchase of the SKU under another key is
 * already_purchased, as the careful form would have told them.
 */
async function decideLean(pool: Pool, batch: PurchaseInput[]): Promise<Decisions> {
  const { activityId } = batch[0];
  const { sql, params, read, demand } = leanBatch(batch);
  const done = await decideOnConnection(pool, sql, params, read);
  // Something inserted: the window was open, and every SKU whose row held its buyers sold to all of them.
  const sold = (skuId: number) => sells({ skus: done.skus, open: done.inserted > 0 }, demand, skuId);
  learnPrices(pool, activityId, done.skus, (skuId) => sold(skuId) !== undefined);
  const decisions: Decisions = new Map();
  const unsold: PurchaseInput[] = [];
  for (const [i, input] of batch.entries()) {
    const sku = sold(input.skuId);
    if (sku) decisions.set(input, { kind: "created", order: done.order(i, sku) });
    else unsold.push(input);
  }
  const soldSkus = [...demand.keys()].filter((skuId) => sold(skuId));
  if (done.inserted !== batch.length - unsold.length || done.decremented !== soldSkus.length)
    throw new OutcomeUnknownError(
      `the decision inserted ${done.inserted} orders and took units of ${done.decremented} SKUs, where its rows gave ${batch.length - unsold.length} and ${soldSkus.length}`,
    );
  if (unsold.length === 0) return decisions;
  const keys = ordersUnderKeys(unsold);
  // After the commit: a failure here leaves what was sold unanswered, as a connection lost around
  // COMMIT would — an unknown outcome, the reservations kept, the same key retried gets the truth.
  const [[orders, holders, window]] = (await pool
    .query(
      `${keys.sql};
SELECT user_id, sku_id FROM sale_order WHERE activity_id = ? AND closed_seq = 0 AND (${unsold.map(() => "(sku_id = ? AND user_id = ?)").join(" OR ")});
SELECT MAX(NOW(3) >= starts_at AND NOW(3) < ends_at) AS open FROM activity WHERE id = ?`,
      [...keys.params, activityId, ...unsold.flatMap((input) => [input.skuId, input.userId]), activityId],
    )
    .catch((error: unknown) => {
      throw new OutcomeUnknownError(`decided, then not read back: ${(error as Error).message}`);
    })) as unknown as [[OrderRow[], RowDataPacket[], RowDataPacket[]]];
  const open = done.inserted > 0 || Number(window[0]?.open) === 1;
  const byKey = new Map(orders.map((row) => [purchaseKey(row.user_id, row.request_id), row]));
  const holding = new Set(holders.map((row) => `${row.user_id}@${row.sku_id}`));
  for (const input of unsold) {
    const row = byKey.get(purchaseKey(input.userId, input.requestId));
    if (row) decisions.set(input, sameBuyer(toOrder(row), input));
    else if (holding.has(`${Number(input.userId)}@${input.skuId}`))
      decisions.set(input, { kind: "already_purchased" });
    else decisions.set(input, refusal({ skus: done.skus, open }, input.skuId));
  }
  return decisions;
}

async function decidePriced(
  pool: Pool,
  batch: PurchaseInput[],
  prices: Map<string, Price>,
): Promise<Decisions> {
  const { sql, params, read } = pricedBatch(batch, prices);
  return decideOnConnection(pool, sql, params, read);
}

/** The careful form: each buyer's answer from what the committed transaction saw (see carefulBatch). */
async function decideCarefully(pool: Pool, batch: PurchaseInput[]): Promise<Decisions> {
  const { sql, params, read } = carefulBatch(batch);
  const { skus, open, fresh, orders } = await decideOnConnection(pool, sql, params, read);
  const demand = buyersPerSku(batch.filter((_, i) => fresh.has(i)));
  learnPrices(pool, batch[0].activityId, skus, (skuId) => sells({ skus, open }, demand, skuId) !== undefined);
  const byKey = new Map(orders.map((row) => [purchaseKey(row.user_id, row.request_id), row]));
  const answer = (input: PurchaseInput, isNew: boolean): PurchaseDecision | undefined => {
    const row = byKey.get(purchaseKey(input.userId, input.requestId));
    if (!isNew) return row ? sameBuyer(toOrder(row), input) : { kind: "already_purchased" };
    if (sells({ skus, open }, demand, input.skuId))
      return { kind: "created", order: committedOrder(row, input) };
    return refusal({ skus, open }, input.skuId);
  };
  return new Map(batch.map((input, i) => [input, answer(input, fresh.has(i))]));
}

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
      if (isTimeout(error)) await endOnServer(pool, connection.threadId);
      else if (!isConnectionLoss(error)) await connection.query("ROLLBACK");
      throw error;
    }
    return committed(results);
  } catch (error) {
    if (isConnectionLoss(error)) {
      // The COMMIT may or may not have run (but after a timeout, it will not run later).
      connection.destroy();
      throw new OutcomeUnknownError((error as Error).message);
    }
    throw error;
  } finally {
    connection.release();
  }
}

const isTimeout = (error: unknown) => (error as { code?: string }).code === "PROTOCOL_SEQUENCE_TIMEOUT";

/**
 * Ends on the server a decision its client stopped waiting for: the client's timeout only drops the
 * connection, and the server would go on — past a lock wait, to its COMMIT — after the buyers were told
 * the outcome is unknown. Killed, its transaction rolls back unless its COMMIT already ran; once its
 * connection is gone the outcome is settled either way. An account sees and kills its own connections.
 */
async function endOnServer(pool: Pool, threadId: number): Promise<void> {
  try {
    await pool.query("KILL ?", [threadId]).catch(() => {});
    for (const deadline = Date.now() + killedGoneMs; Date.now() < deadline; await setTimeout(20)) {
      const [rows] = await pool.query<RowDataPacket[]>(
        "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID = ?",
        [threadId],
      );
      if (Number(rows[0].n) === 0) return;
    }
  } catch {
    // The database went away too: the outcome stays unknown, as for any connection lost.
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
