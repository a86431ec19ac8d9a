import { type SkuDatabaseView, skuDatabaseView } from "@flashgate/db";
import type { Pool } from "mysql2/promise";

export interface SaleFixture {
  activityId: number;
  skuId: number;
  units: number;
  priceCents?: number;
  startsAt?: Date;
  endsAt?: Date;
  rebuyAfterClose?: boolean;
  paymentTimeoutS?: number;
}

/** Creates an activity and one SKU the way a DBA would: plain SQL. */
export async function createSale(pool: Pool, sale: SaleFixture): Promise<void> {
  const startsAt = sale.startsAt ?? new Date(Date.now() - 60_000);
  const endsAt = sale.endsAt ?? new Date(Date.now() + 3600_000);
  await pool.query(
    `INSERT INTO activity (id, name, starts_at, ends_at, payment_timeout_s, rebuy_after_close) VALUES (?, ?, ?, ?, ?, ?)
     ON DUPLICATE KEY UPDATE starts_at = VALUES(starts_at), ends_at = VALUES(ends_at), rebuy_after_close = VALUES(rebuy_after_close)`,
    [
      sale.activityId,
      `test sale ${sale.activityId}`,
      startsAt,
      endsAt,
      sale.paymentTimeoutS ?? 900,
      sale.rebuyAfterClose ?? false,
    ],
  );
  await pool.query(
    "INSERT INTO sale_stock (activity_id, sku_id, available, price_cents, currency) VALUES (?, ?, ?, ?, 'EUR')",
    [sale.activityId, sale.skuId, sale.units, sale.priceCents ?? 1999],
  );
}

/** The back-office's view of a SKU as the database holds it (available, pending, paid, closed, supply). */
export async function skuInDatabase(pool: Pool, activityId: number, skuId: number): Promise<SkuDatabaseView> {
  const view = await skuDatabaseView(pool, activityId, skuId);
  if (!view) throw new Error(`no SKU ${activityId}/${skuId}`);
  return view;
}

/** The ledger (docs/architecture.md): available + (PENDING + PAID) = supply. */
export const sold = (ledger: SkuDatabaseView) => ledger.pending + ledger.paid;
