import { type Admission, type SkuDatabaseView, skuDatabaseView } from "@flashgate/db";
import type { Pool } from "mysql2/promise";

export interface ActivityFixture {
  activityId: number;
  name?: string;
  startsAt?: Date;
  endsAt?: Date;
  rebuyAfterClose?: boolean;
  paymentTimeoutS?: number;
  /** sync, queued or auto; none: as the purchase API's PURCHASE_ADMISSION. */
  admission?: Admission;
}

export interface SkuFixture {
  skuId: number;
  units: number;
  priceCents?: number;
}

export type SaleFixture = ActivityFixture & SkuFixture;

/**
 * Creates an activity the way a DBA would, with plain SQL: open from a minute ago for an hour unless
 * told otherwise; created again, its window, rebuy rule and admission are updated.
 */
export async function createActivity(pool: Pool, activity: ActivityFixture): Promise<void> {
  await pool.query(
    `INSERT INTO activity (id, name, starts_at, ends_at, payment_timeout_s, rebuy_after_close, admission)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON DUPLICATE KEY UPDATE starts_at = VALUES(starts_at), ends_at = VALUES(ends_at),
       rebuy_after_close = VALUES(rebuy_after_close), admission = VALUES(admission)`,
    [
      activity.activityId,
      activity.name ?? `test sale ${activity.activityId}`,
      activity.startsAt ?? new Date(Date.now() - 60_000),
      activity.endsAt ?? new Date(Date.now() + 3600_000),
      activity.paymentTimeoutS ?? 900,
      activity.rebuyAfterClose ?? false,
      activity.admission ?? null,
    ],
  );
}

/** The SKUs of an activity, in one INSERT (a catalogue's thousand SKUs in one statement). */
export async function addSkus(pool: Pool, activityId: number, skus: SkuFixture[]): Promise<void> {
  await pool.query(
    `INSERT INTO sale_stock (activity_id, sku_id, available, price_cents, currency) VALUES ${skus.map(() => "(?, ?, ?, ?, 'EUR')").join(", ")}`,
    skus.flatMap((sku) => [activityId, sku.skuId, sku.units, sku.priceCents ?? 1999]),
  );
}

/** An activity and one SKU. */
export async function createSale(pool: Pool, sale: SaleFixture): Promise<void> {
  await createActivity(pool, sale);
  await addSkus(pool, sale.activityId, [sale]);
}

/** The back-office's view of a SKU as the database holds it (available, pending, paid, closed, supply). */
export async function skuInDatabase(pool: Pool, activityId: number, skuId: number): Promise<SkuDatabaseView> {
  const view = await skuDatabaseView(pool, activityId, skuId);
  if (!view) throw new Error(`no SKU ${activityId}/${skuId}`);
  return view;
}

/** The ledger (docs/architecture.md): available + (PENDING + PAID) = supply. */
export const sold = (ledger: SkuDatabaseView) => ledger.pending + ledger.paid;
