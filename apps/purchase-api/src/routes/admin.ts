import { isRequestId } from "@flashgate/auth";
import type { BackOffice } from "@flashgate/sale";
import { Hono } from "hono";
import { z } from "zod";
import { jsonBody, pathId } from "../body.ts";
import type { AppEnv } from "../env.ts";
import { orderJson } from "../order-json.ts";
import { ApiError } from "../problem.ts";

const activityBody = z
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

const skuBody = z.strictObject({
  initialStock: z.number().int().min(0).max(10_000_000),
  priceCents: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  currency: z.string().regex(/^[A-Z]{3}$/),
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
      return c.json({ id, ...value, result }, result === "created" ? 201 : 200);
    })
    .put("/activities/:id/skus/:skuId", async (c) => {
      const activityId = pathId(c, "id");
      const skuId = pathId(c, "skuId");
      const { value } = await jsonBody(c, skuBody);
      const result = await backOffice.saveSku({ activityId, skuId, ...value, operator: c.get("operator") });
      if (result === "no_activity") throw new ApiError("NOT_FOUND", "no such activity");
      return c.json({ activityId, skuId, ...value, result }, result === "created" ? 201 : 200);
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
      return c.json({ activityId, skuId, delta: value.delta, available: result.available });
    })
    .get("/activities/:id/skus/:skuId", async (c) => {
      const activityId = pathId(c, "id");
      const skuId = pathId(c, "skuId");
      const view = await backOffice.skuView(activityId, skuId);
      if (!view) throw new ApiError("NOT_FOUND", "no such SKU");
      return c.json(view);
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
