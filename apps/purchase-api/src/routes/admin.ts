import { isRequestId } from "@flashgate/auth";
import { admissions } from "@flashgate/db";
import { type BackOffice, driftVerdicts } from "@flashgate/sale";
import { type Handler, Hono } from "hono";
import { z } from "zod";
import { jsonBody, pathId } from "../body.ts";
import type { AppEnv } from "../env.ts";
import { type Guards, keyPattern, type Operation, pathIds, serve } from "../operation.ts";
import { currencySchema, orderJson, orderSchema } from "../order-json.ts";
import { ApiError } from "../problem.ts";

const admissionSchema = z
  .enum(admissions)
  .nullable()
  .describe(
    "How its admitted buyers are answered: sync (the order, once the database decided), queued (202 and a ticket), auto (queued while decisions wait); null: as the purchase API's PURCHASE_ADMISSION",
  );

const activityBody = z
  .strictObject({
    name: z.string().min(1).max(200),
    startsAt: z.iso.datetime({ offset: true }),
    endsAt: z.iso.datetime({ offset: true }),
    paymentTimeoutS: z.number().int().min(10).max(86_400).default(900),
    rebuyAfterClose: z.boolean().default(false),
    admission: admissionSchema.default(null),
  })
  .refine((a) => Date.parse(a.endsAt) > Date.parse(a.startsAt), {
    message: "endsAt must be after startsAt",
    path: ["endsAt"],
  });

const skuBody = z.strictObject({
  initialStock: z.number().int().min(0).max(10_000_000),
  priceCents: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  currency: currencySchema,
});

const restockBody = z.strictObject({
  delta: z
    .number()
    .int()
    .min(-10_000_000)
    .max(10_000_000)
    .refine((d) => d !== 0, "must not be zero"),
  reason: z.string().min(1).max(500),
});

const saved = z.enum(["created", "updated"]);

const activitySavedSchema = z.strictObject({
  id: z.number().int().positive(),
  name: z.string(),
  startsAt: z.string(),
  endsAt: z.string(),
  paymentTimeoutS: z.number().int(),
  rebuyAfterClose: z.boolean(),
  admission: admissionSchema,
  result: saved,
});

const skuSavedSchema = z.strictObject({
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

const savedResponses = (schema: z.ZodType) => ({
  201: { description: "Created", schema },
  200: { description: "Updated", schema },
});

export const adminOperations = {
  saveActivity: {
    method: "put",
    path: "/admin/v1/activities/{activityId}",
    summary: "Create or update an activity (its sale window)",
    security: "admin",
    parameters: pathIds("activityId"),
    body: activityBody,
    responses: savedResponses(activitySavedSchema),
    problems: ["INVALID_REQUEST", "UNAUTHORIZED", "FORBIDDEN", "PAYLOAD_TOO_LARGE"],
  },
  saveSku: {
    method: "put",
    path: "/admin/v1/activities/{activityId}/skus/{skuId}",
    summary: "Create or update a SKU of an activity",
    security: "admin",
    parameters: pathIds("activityId", "skuId"),
    body: skuBody,
    responses: savedResponses(skuSavedSchema),
    problems: ["INVALID_REQUEST", "UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "PAYLOAD_TOO_LARGE"],
  },
  restock: {
    method: "post",
    path: "/admin/v1/activities/{activityId}/skus/{skuId}/restock",
    summary: "Correct a SKU's stock by a delta, recorded in the stock ledger",
    security: "admin",
    parameters: pathIds("activityId", "skuId"),
    body: restockBody,
    responses: { 200: { description: "Units available after the correction", schema: restockedSchema } },
    problems: [
      "INVALID_REQUEST",
      "UNAUTHORIZED",
      "FORBIDDEN",
      "NOT_FOUND",
      "INVALID_STATE",
      "PAYLOAD_TOO_LARGE",
    ],
  },
  skuView: {
    method: "get",
    path: "/admin/v1/activities/{activityId}/skus/{skuId}",
    summary: "A SKU as MySQL and Redis hold it, with the drift check's verdict",
    security: "admin",
    parameters: pathIds("activityId", "skuId"),
    responses: { 200: { description: "Both views and the verdict", schema: adminSkuViewSchema } },
    problems: ["INVALID_REQUEST", "UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND"],
  },
  closeOrder: {
    method: "post",
    path: "/admin/v1/orders/{orderId}/close",
    summary: "Close a PENDING order; its unit goes back to stock",
    security: "admin",
    parameters: [{ name: "orderId", in: "path", pattern: keyPattern, description: "the order's id" }],
    responses: { 200: { description: "The closed order", schema: orderSchema } },
    problems: ["UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "INVALID_STATE"],
  },
} satisfies Record<string, Operation>;

/** The back-office's HTTP face: validation and answers; the work is the service's. */
export function adminRoutes(backOffice: BackOffice, guards: Guards) {
  const router = new Hono<AppEnv>();
  const on = (operation: Operation, handler: Handler<AppEnv>) => serve(router, operation, handler, guards);
  on(adminOperations.saveActivity, async (c) => {
    const id = pathId(c, "activityId");
    const { value } = await jsonBody(c, activityBody);
    const result = await backOffice.saveActivity({
      id,
      name: value.name,
      startsAt: new Date(value.startsAt),
      endsAt: new Date(value.endsAt),
      paymentTimeoutS: value.paymentTimeoutS,
      rebuyAfterClose: value.rebuyAfterClose,
      admission: value.admission,
    });
    const body: z.output<typeof activitySavedSchema> = { id, ...value, result };
    return c.json(body, result === "created" ? 201 : 200);
  });
  on(adminOperations.saveSku, async (c) => {
    const activityId = pathId(c, "activityId");
    const skuId = pathId(c, "skuId");
    const { value } = await jsonBody(c, skuBody);
    const result = await backOffice.saveSku({ activityId, skuId, ...value, operator: c.get("operator") });
    if (result === "no_activity") throw new ApiError("NOT_FOUND", "no such activity");
    const body: z.output<typeof skuSavedSchema> = { activityId, skuId, ...value, result };
    return c.json(body, result === "created" ? 201 : 200);
  });
  on(adminOperations.restock, async (c) => {
    const activityId = pathId(c, "activityId");
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
  });
  on(adminOperations.skuView, async (c) => {
    const activityId = pathId(c, "activityId");
    const skuId = pathId(c, "skuId");
    const view = await backOffice.skuView(activityId, skuId);
    if (!view) throw new ApiError("NOT_FOUND", "no such SKU");
    return c.json<z.output<typeof adminSkuViewSchema>>(view);
  });
  on(adminOperations.closeOrder, async (c) => {
    const orderId = c.req.param("orderId") ?? "";
    if (!isRequestId(orderId)) throw new ApiError("NOT_FOUND", "no such order");
    const result = await backOffice.closeOrder(orderId);
    if (result.kind === "not_found") throw new ApiError("NOT_FOUND", "no such order");
    if (result.kind === "not_pending")
      throw new ApiError("INVALID_STATE", `the order is ${result.order.state}, only PENDING orders close`);
    return c.json(orderJson(result.order));
  });
  return router;
}
