import { isRequestId } from "@flashgate/auth";
import { type BackOffice, driftVerdicts } from "@flashgate/sale";
import { Hono } from "hono";
import { z } from "zod";
import { jsonBody, pathId } from "../body.ts";
import type { AppEnv } from "../env.ts";
import { currencySchema, orderJson } from "../order-json.ts";
import { ApiError } from "../problem.ts";

export const activityBody = z
  .strictObject({
    name: z.string().min(1).max(200),
    startsAt: z.iso.datetime({ offset: true }),
    endsAt: z.iso.datetime({ offset: true }),
    paymentTimeoutS: z.number().int().min(10).max(86_400).default(900),
    rebuyAfterClose: z.boolean().default(false),
  })
  .refine((a) => Date.parse(a.endsAt) > Date.parse(a.startsAt), {
    message: "endsAt must be after startsAt",
    path: ["endsAt"],
  });

export const skuBody = z.strictObject({
  initialStock: z.number().int().min(0).max(10_000_000),
  priceCents: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  currency: currencySchema,
});

export const restockBody = z.strictObject({
  delta: z
    .number()
    .int()
    .min(-10_000_000)
    .max(10_000_000)
    .refine((d) => d !== 0, "must not be zero"),
  reason: z.string().min(1).max(500),
});

const saved = z.enum(["created", "updated"]);

export const activitySavedSchema = z.strictObject({
  id: z.number().int().positive(),
  name: z.string(),
  startsAt: z.string(),
  endsAt: z.string(),
  paymentTimeoutS: z.number().int(),
  rebuyAfterClose: z.boolean(),
  result: saved,
});

export const skuSavedSchema = z.strictObject({
  activityId: z.number().int().positive(),
  skuId: z.number().int().positive(),
  initialStock: z.number().int(),
  priceCents: z.number().int(),
  currency: z.string(),
  result: saved,
});

export const restockedSchema = z.strictObject({
  activityId: z.number().int().positive(),
  skuId: z.number().int().positive(),
  delta: z.number().int(),
  available: z.number().int().nonnegative(),
});

const count = z.number().int().nonnegative();
export const adminSkuViewSchema = z.strictObject({
  database: z.strictObject({
    available: count,
    pending: count,
    paid: count,
    closed: count,
    supply: count,
    priceCents: count,
    currency: z.string(),
  }),
  cache: z
    .strictObject({
      stock: z.number().int(),
      reservations: count,
      buyers: count,
      appliedPosition: z.string().nullable(),
    })
    .nullable(),
  drift: z.enum(driftVerdicts),
});

/** The back-office's HTTP face: validation and answers; the work is the service's. */
export function adminRoutes(backOffice: BackOffice) {
  return new Hono<AppEnv>()
    .put("/activities/:id", async (c) => {
      const id = pathId(c, "id");
      const { value } = await jsonBody(c, activityBody);
      const result = await backOffice.saveActivity({
        id,
        name: value.name,
        startsAt: new Date(value.startsAt),
        endsAt: new Date(value.endsAt),
        paymentTimeoutS: value.paymentTimeoutS,
        rebuyAfterClose: value.rebuyAfterClose,
      });
      const body: z.output<typeof activitySavedSchema> = { id, ...value, result };
      return c.json(body, result === "created" ? 201 : 200);
    })
    .put("/activities/:id/skus/:skuId", async (c) => {
      const activityId = pathId(c, "id");
      const skuId = pathId(c, "skuId");
      const { value } = await jsonBody(c, skuBody);
      const result = await backOffice.saveSku({ activityId, skuId, ...value, operator: c.get("operator") });
      if (result === "no_activity") throw new ApiError("NOT_FOUND", "no such activity");
      const body: z.output<typeof skuSavedSchema> = { activityId, skuId, ...value, result };
      return c.json(body, result === "created" ? 201 : 200);
    })
    .post("/activities/:id/skus/:skuId/restock", async (c) => {
      const activityId = pathId(c, "id");
      const skuId = pathId(c, "skuId");
      const { value } = await jsonBody(c, restockBody);
      const result = await backOffice.restock({ activityId, skuId, ...value, operator: c.get("operator") });
      if (result.kind === "not_found") throw new ApiError("NOT_FOUND", "no such SKU");
      if (result.kind === "below_zero")
        throw new ApiError(
          "INVALID_STATE",
          `a correction of ${value.delta} would take available (${result.available}) below zero`,
        );
      return c.json<z.output<typeof restockedSchema>>({
        activityId,
        skuId,
        delta: value.delta,
        available: result.available,
      });
    })
    .get("/activities/:id/skus/:skuId", async (c) => {
      const activityId = pathId(c, "id");
      const skuId = pathId(c, "skuId");
      const view = await backOffice.skuView(activityId, skuId);
      if (!view) throw new ApiError("NOT_FOUND", "no such SKU");
      return c.json<z.output<typeof adminSkuViewSchema>>(view);
    })
    .post("/orders/:orderId/close", async (c) => {
      const orderId = c.req.param("orderId");
      if (!isRequestId(orderId)) throw new ApiError("NOT_FOUND", "no such order");
      const result = await backOffice.closeOrder(orderId);
      if (result.kind === "not_found") throw new ApiError("NOT_FOUND", "no such order");
      if (result.kind === "not_pending")
        throw new ApiError("INVALID_STATE", `the order is ${result.order.state}, only PENDING orders close`);
      return c.json(orderJson(result.order));
    });
}
