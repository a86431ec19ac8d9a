import { z } from "zod";
import { type BinlogPosition, type ChangeEvent, EnvelopeError } from "./envelope.ts";

const id = z.number().int().positive();
const stockRow = z.object({
  activity_id: id,
  sku_id: id,
  available: z.number().int(),
  price_cents: z.number().int(),
  currency: z.string().length(3),
  updated_at: z.number().optional(),
});
const orderRow = z.object({
  activity_id: id,
  sku_id: id,
  user_id: id,
  request_id: z.string().optional(),
  state: z.enum(["PENDING", "PAID", "CLOSED"]),
  closed_seq: z.number().default(0),
  updated_at: z.number().optional(),
});
const activityRow = z.object({
  id,
  starts_at: z.number(),
  ends_at: z.number(),
  rebuy_after_close: z.union([z.boolean(), z.number()]),
  // Absent from the images written before migration 006 added it.
  admission: z.string().nullish(),
});

/** What changed in one SKU's rows, as the cache applies it (apply.lua reads these fields). */
export type SkuChange =
  | {
      kind: "stock";
      op: string;
      position: BinlogPosition;
      available: number;
      priceCents: number;
      currency: string;
    }
  | {
      kind: "order";
      op: string;
      position: BinlogPosition;
      userId: string;
      /** The order's key (Idempotency-Key): the cache tells the buyer's own retry from another purchase. */
      requestId?: string;
      live: boolean;
    }
  | { kind: "gone"; op: "d"; position: BinlogPosition };

/** One sale_stock or sale_order change: the SKU it belongs to and, for lag, when it was committed. */
export type SaleChange = SkuChange & {
  activityId: number;
  skuId: number;
  /** The row's own DATETIME(3) update time: millisecond-precise commit time for lag. */
  committedAtMs: number | undefined;
};

export type ActivityChange =
  | {
      kind: "activity";
      activityId: number;
      position: BinlogPosition;
      startsMs: number;
      endsMs: number;
      rebuy: boolean;
      /** sync, queued or auto; null: as the purchase API's PURCHASE_ADMISSION. */
      admission: string | null;
    }
  | { kind: "activity-gone"; activityId: number; position: BinlogPosition };

function parseRow<S extends z.ZodType>(schema: S, row: unknown, table: string): z.infer<S> {
  const parsed = schema.safeParse(row);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new EnvelopeError(`${table} row: ${issue?.path.join(".")} ${issue?.message}`);
  }
  return parsed.data;
}

export function toSaleChange(event: ChangeEvent): SaleChange {
  const image = event.op === "d" ? event.before : event.after;
  if (event.table === "sale_stock") {
    if (event.op === "d") {
      const row = parseRow(stockRow.pick({ activity_id: true, sku_id: true }), image, "sale_stock");
      return {
        kind: "gone",
        op: "d",
        position: event.position,
        activityId: row.activity_id,
        skuId: row.sku_id,
        committedAtMs: undefined,
      };
    }
    const row = parseRow(stockRow, image, "sale_stock");
    return {
      kind: "stock",
      op: event.op,
      position: event.position,
      activityId: row.activity_id,
      skuId: row.sku_id,
      available: row.available,
      priceCents: row.price_cents,
      currency: row.currency,
      committedAtMs: row.updated_at,
    };
  }
  if (event.table === "sale_order") {
    const row = parseRow(orderRow, image, "sale_order");
    // The same rule as the one_purchase key: an order blocks its user unless deleted or closed with rebuy.
    const live = event.op !== "d" && (row.state !== "CLOSED" || row.closed_seq === 0);
    return {
      kind: "order",
      op: event.op,
      position: event.position,
      activityId: row.activity_id,
      skuId: row.sku_id,
      userId: String(row.user_id),
      requestId: row.request_id,
      live,
      committedAtMs: event.op === "d" ? undefined : row.updated_at,
    };
  }
  throw new EnvelopeError(`unexpected table ${event.table} on the sale topic`);
}

export function toActivityChange(event: ChangeEvent): ActivityChange {
  if (event.table !== "activity")
    throw new EnvelopeError(`unexpected table ${event.table} on the activity topic`);
  if (event.op === "d") {
    const row = parseRow(activityRow.pick({ id: true }), event.before, "activity");
    return { kind: "activity-gone", activityId: row.id, position: event.position };
  }
  const row = parseRow(activityRow, event.after, "activity");
  return {
    kind: "activity",
    activityId: row.id,
    position: event.position,
    startsMs: row.starts_at,
    endsMs: row.ends_at,
    rebuy: Boolean(row.rebuy_after_close),
    admission: row.admission ?? null,
  };
}
