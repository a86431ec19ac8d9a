import type { Pool, RowDataPacket } from "mysql2/promise";
import { inserted } from "./errors.ts";

/** How an activity's admitted buyers are answered (ADR 0030); an activity without one follows the API's. */
export const admissions = ["sync", "queued", "auto"] as const;
export type Admission = (typeof admissions)[number];

export interface ActivityInput {
  id: number;
  name: string;
  startsAt: Date;
  endsAt: Date;
  paymentTimeoutS: number;
  rebuyAfterClose: boolean;
  /** None or null: as the purchase API's PURCHASE_ADMISSION. */
  admission?: Admission | null;
}

/**
 * Creates the activity, or updates it when its id exists. Creation is told by the INSERT succeeding, not by
 * affected rows: with the client's FOUND_ROWS flag an update to the same values counts 1, like an insert.
 */
export async function upsertActivity(pool: Pool, activity: ActivityInput): Promise<"created" | "updated"> {
  const values = [
    activity.name,
    activity.startsAt,
    activity.endsAt,
    activity.paymentTimeoutS,
    activity.rebuyAfterClose,
    activity.admission ?? null,
  ];
  const created = await inserted(
    pool.query(
      "INSERT INTO activity (id, name, starts_at, ends_at, payment_timeout_s, rebuy_after_close, admission) VALUES (?, ?, ?, ?, ?, ?, ?)",
      [activity.id, ...values],
    ),
  );
  if (created) return "created";
  await pool.query(
    "UPDATE activity SET name = ?, starts_at = ?, ends_at = ?, payment_timeout_s = ?, rebuy_after_close = ?, admission = ? WHERE id = ?",
    [...values, activity.id],
  );
  return "updated";
}

export interface SkuInput {
  activityId: number;
  skuId: number;
  initialStock: number;
  priceCents: number;
  currency: string;
  operator: string;
}

export type SkuUpsert = "created" | "updated" | "no_activity";

/** Creates a SKU with its initial stock (ledgered), or updates its price; stock then moves only by restock. */
export async function upsertSku(pool: Pool, sku: SkuInput): Promise<SkuUpsert> {
  const connection = await pool.getConnection();
  try {
    await connection.query("START TRANSACTION");
    const [activity] = await connection.query<RowDataPacket[]>("SELECT 1 FROM activity WHERE id = ?", [
      sku.activityId,
    ]);
    if (!activity.length) {
      await connection.query("ROLLBACK");
      return "no_activity";
    }
    // A failed INSERT undoes only itself, not the transaction: the row exists, and its price is updated.
    const created = await inserted(
      connection.query(
        "INSERT INTO sale_stock (activity_id, sku_id, available, price_cents, currency) VALUES (?, ?, ?, ?, ?)",
        [sku.activityId, sku.skuId, sku.initialStock, sku.priceCents, sku.currency],
      ),
    );
    if (created)
      await connection.query(
        "INSERT INTO stock_ledger (activity_id, sku_id, delta, available_after, reason, operator) VALUES (?, ?, ?, ?, 'initial stock', ?)",
        [sku.activityId, sku.skuId, sku.initialStock, sku.initialStock, sku.operator],
      );
    else
      await connection.query(
        "UPDATE sale_stock SET price_cents = ?, currency = ? WHERE activity_id = ? AND sku_id = ?",
        [sku.priceCents, sku.currency, sku.activityId, sku.skuId],
      );
    await connection.query("COMMIT");
    return created ? "created" : "updated";
  } catch (error) {
    await connection.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    connection.release();
  }
}

export type RestockResult =
  | { kind: "restocked"; available: number }
  | { kind: "below_zero"; available: number }
  | { kind: "not_found" };

/** Adds (or, with a negative delta, corrects) stock and writes the ledger row in the same transaction. */
export async function restock(
  pool: Pool,
  input: { activityId: number; skuId: number; delta: number; reason: string; operator: string },
): Promise<RestockResult> {
  const connection = await pool.getConnection();
  try {
    await connection.query("START TRANSACTION");
    const [update] = await connection.query(
      "UPDATE sale_stock SET available = available + ? WHERE activity_id = ? AND sku_id = ? AND available + ? >= 0",
      [input.delta, input.activityId, input.skuId, input.delta],
    );
    const [rows] = await connection.query<RowDataPacket[]>(
      "SELECT available FROM sale_stock WHERE activity_id = ? AND sku_id = ?",
      [input.activityId, input.skuId],
    );
    if ((update as { affectedRows: number }).affectedRows !== 1) {
      await connection.query("ROLLBACK");
      return rows.length
        ? { kind: "below_zero", available: Number(rows[0].available) }
        : { kind: "not_found" };
    }
    const available = Number(rows[0].available);
    await connection.query(
      "INSERT INTO stock_ledger (activity_id, sku_id, delta, available_after, reason, operator) VALUES (?, ?, ?, ?, ?, ?)",
      [input.activityId, input.skuId, input.delta, available, input.reason, input.operator],
    );
    await connection.query("COMMIT");
    return { kind: "restocked", available };
  } catch (error) {
    await connection.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    connection.release();
  }
}

/** When the sale of a SKU ends, or undefined when MySQL has no such SKU. */
export async function skuSaleEnd(pool: Pool, activityId: number, skuId: number): Promise<Date | undefined> {
  const [rows] = await pool.query<RowDataPacket[]>(
    `SELECT a.ends_at FROM sale_stock s JOIN activity a ON a.id = s.activity_id
      WHERE s.activity_id = ? AND s.sku_id = ?`,
    [activityId, skuId],
  );
  return rows[0]?.ends_at as Date | undefined;
}

export interface SkuDatabaseView {
  available: number;
  pending: number;
  paid: number;
  closed: number;
  supply: number;
  priceCents: number;
  currency: string;
}

export async function skuDatabaseView(
  pool: Pool,
  activityId: number,
  skuId: number,
): Promise<SkuDatabaseView | undefined> {
  const [stock] = await pool.query<RowDataPacket[]>(
    "SELECT available, price_cents, currency FROM sale_stock WHERE activity_id = ? AND sku_id = ?",
    [activityId, skuId],
  );
  if (!stock[0]) return undefined;
  const [orders] = await pool.query<RowDataPacket[]>(
    "SELECT state, COUNT(*) AS n FROM sale_order WHERE activity_id = ? AND sku_id = ? GROUP BY state",
    [activityId, skuId],
  );
  const count = (state: string) => Number(orders.find((row) => row.state === state)?.n ?? 0);
  const available = Number(stock[0].available);
  return {
    available,
    pending: count("PENDING"),
    paid: count("PAID"),
    closed: count("CLOSED"),
    supply: available + count("PENDING") + count("PAID"),
    priceCents: Number(stock[0].price_cents),
    currency: stock[0].currency,
  };
}
