import type { Pool, PoolConnection, RowDataPacket } from "mysql2/promise";

export const orderStates = ["PENDING", "PAID", "CLOSED"] as const;
export type OrderState = (typeof orderStates)[number];

export interface Order {
  /** The order's own id: payments and the back-office name an order by it. */
  orderId: string;
  /** The buyer's Idempotency-Key, unique per user. */
  requestId: string;
  activityId: number;
  skuId: number;
  userId: string;
  state: OrderState;
  amountCents: number;
  currency: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface OrderRow extends RowDataPacket {
  order_id: string;
  request_id: string;
  activity_id: number;
  sku_id: number;
  user_id: number | string;
  state: OrderState;
  amount_cents: number;
  currency: string;
  created_at: Date;
  expires_at: Date;
}

export const orderColumns =
  "order_id, request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at";

export const toOrder = (row: OrderRow): Order => ({
  orderId: row.order_id,
  requestId: row.request_id,
  activityId: Number(row.activity_id),
  skuId: Number(row.sku_id),
  userId: String(row.user_id),
  state: row.state,
  amountCents: Number(row.amount_cents),
  currency: row.currency,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

export async function findOrder(db: Pool | PoolConnection, orderId: string): Promise<Order | undefined> {
  const [rows] = await db.query<OrderRow[]>(`SELECT ${orderColumns} FROM sale_order WHERE order_id = ?`, [
    orderId,
  ]);
  return rows[0] ? toOrder(rows[0]) : undefined;
}

/** The order a user's Idempotency-Key placed, if any. */
export async function findPurchase(
  db: Pool | PoolConnection,
  userId: string,
  requestId: string,
): Promise<Order | undefined> {
  const [rows] = await db.query<OrderRow[]>(
    `SELECT ${orderColumns} FROM sale_order WHERE user_id = ? AND request_id = ?`,
    [userId, requestId],
  );
  return rows[0] ? toOrder(rows[0]) : undefined;
}

/** A sold-out SKU's buyers (user id → request id) as of one version of its stock row. */
export interface SoldOutSnapshot {
  /** The stock row's version and its orders': every change of the row, or of which orders the SKU holds, moves it (migration 004). */
  version: string;
  buyers: Map<string, string>;
}

/**
 * For a SKU MySQL has sold out: who holds a blocking order, under which request id; `null` while units
 * are left. Stock is read before the buyers, so no buyer can be missing. Given the snapshot taken
 * before, and neither version has moved since, no order can have come, gone or changed
 * hands: that snapshot is returned as it is, for one primary-key read instead of every buyer of the
 * SKU (100,000 rows for a big sale's, several times a second).
 */
export async function soldOutBuyers(
  db: Pool | PoolConnection,
  activityId: number,
  skuId: number,
  known?: SoldOutSnapshot,
): Promise<SoldOutSnapshot | null> {
  const [stock] = await db.query<RowDataPacket[]>(
    `SELECT s.available, CONCAT(s.version, ':', COALESCE(v.version, 0)) AS version
       FROM sale_stock s LEFT JOIN sku_orders_version v ON v.activity_id = s.activity_id AND v.sku_id = s.sku_id
      WHERE s.activity_id = ? AND s.sku_id = ?`,
    [activityId, skuId],
  );
  if (!stock[0] || Number(stock[0].available) > 0) return null;
  const version = String(stock[0].version);
  if (known?.version === version) return known;
  const [rows] = await db.query<RowDataPacket[]>(
    "SELECT user_id, request_id FROM sale_order WHERE activity_id = ? AND sku_id = ? AND closed_seq = 0",
    [activityId, skuId],
  );
  return { version, buyers: new Map(rows.map((row) => [String(row.user_id), String(row.request_id)])) };
}
