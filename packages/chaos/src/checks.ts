import type { Pool, RowDataPacket } from "mysql2/promise";
import type { KeyRecord } from "./buyers.ts";

export interface SaleSupply {
  activityId: number;
  skuId: number;
  /** Units created plus every restock: what available + live orders must equal. */
  supply: number;
}

export interface CheckResult {
  oversold: number;
  lostUnits: number;
  lostOrders: number;
  phantomOrders: number;
  wrongAnswers: number;
  paidNotPaid: number;
  serverErrors: number;
  unavailableLeft: number;
  /** Keys answered 201 by more than one request: a client counting 201s counts purchases that are not. */
  createdTwice: number;
  violations: string[];
}

const retryable = (status: number | "network") => status === 503 || status === 429 || status === "network";

/**
 * The properties a sale must keep whatever happened during it, read from MySQL (the truth) beside
 * every answer the clients got.
 */
export async function checkSale(
  pool: Pool,
  sales: SaleSupply[],
  keys: Map<string, KeyRecord>,
): Promise<CheckResult> {
  const result: CheckResult = {
    oversold: 0,
    lostUnits: 0,
    lostOrders: 0,
    phantomOrders: 0,
    wrongAnswers: 0,
    paidNotPaid: 0,
    serverErrors: 0,
    unavailableLeft: 0,
    createdTwice: 0,
    violations: [],
  };
  const violation = (text: string) => {
    if (result.violations.length < 50) result.violations.push(text);
  };

  const orders = new Map<
    string,
    { userId: number; activityId: number; skuId: number; state: string; createdAt: number }
  >();
  for (const sale of sales) {
    const [stock] = await pool.query<RowDataPacket[]>(
      "SELECT available FROM sale_stock WHERE activity_id = ? AND sku_id = ?",
      [sale.activityId, sale.skuId],
    );
    const [rows] = await pool.query<RowDataPacket[]>(
      "SELECT request_id, user_id, activity_id, sku_id, state, created_at FROM sale_order WHERE activity_id = ? AND sku_id = ?",
      [sale.activityId, sale.skuId],
    );
    for (const row of rows)
      orders.set(row.request_id, {
        userId: Number(row.user_id),
        activityId: Number(row.activity_id),
        skuId: Number(row.sku_id),
        state: row.state,
        createdAt: (row.created_at as Date).getTime(),
      });
    const live = rows.filter((row) => row.state !== "CLOSED").length;
    const balance = Number(stock[0].available) + live - sale.supply;
    if (balance > 0) {
      result.oversold += balance;
      violation(`SKU ${sale.skuId}: ${balance} units sold beyond supply ${sale.supply}`);
    } else if (balance < 0) {
      result.lostUnits -= balance;
      violation(`SKU ${sale.skuId}: ${-balance} units of supply ${sale.supply} neither available nor sold`);
    }
  }

  for (const record of keys.values()) {
    const order = orders.get(record.key);
    for (const answer of record.answers) if (answer.status === 500) result.serverErrors += 1;
    const last = record.answers.at(-1);
    if (last && retryable(last.status)) result.unavailableLeft += 1;
    const created = record.answers.filter((answer) => answer.status === 201).length;
    if (created > 1) {
      result.createdTwice += 1;
      violation(
        `key ${record.key} was answered 201 ${created} times: only the request that created its order is`,
      );
    }
    const promised = record.answers.some((answer) => answer.status === 201 || answer.status === 200);
    if (promised && (!order || order.userId !== record.userId || order.skuId !== record.skuId)) {
      result.lostOrders += 1;
      violation(`key ${record.key} was answered with an order that MySQL does not hold`);
    }
    if (order) {
      // Once the order exists, every request with its key must get it. A duplicate sent while the
      // order was still being decided may have been told the truth of that earlier moment.
      const wrong = record.answers.filter(
        (answer) =>
          answer.sentAt > order.createdAt &&
          !retryable(answer.status) &&
          answer.status !== 201 &&
          answer.status !== 200,
      );
      if (wrong.length) {
        result.wrongAnswers += wrong.length;
        const history = record.answers.map(
          (a) => `${a.status}${a.code ? ` ${a.code}` : ""} @${a.at % 100_000}`,
        );
        violation(
          `key ${record.key} holds an order (created @${order.createdAt % 100_000}) but was answered ${history.join(", ")}`,
        );
      }
      if (record.paid && order.state !== "PAID") {
        result.paidNotPaid += 1;
        violation(`key ${record.key} was paid but its order is ${order.state}`);
      }
    }
  }
  for (const [key, order] of orders) {
    if (!keys.has(key)) {
      result.phantomOrders += 1;
      violation(`order ${key} (user ${order.userId}) was never asked for by a client`);
    }
  }
  return result;
}
