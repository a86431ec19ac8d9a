import { readSignatureHeader, requestIdPattern, verifyPayloadSignature } from "@flashgate/auth";
import { type PaymentService, paymentOutcomes } from "@flashgate/sale";
import { Hono } from "hono";
import { z } from "zod";
import { parseJson, rawBody } from "../body.ts";
import type { AppEnv } from "../env.ts";
import { type Operation, serve } from "../operation.ts";
import { currencySchema, orderStateSchema } from "../order-json.ts";
import { ApiError } from "../problem.ts";

const paymentEvent = z.strictObject({
  eventId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  orderId: z.string().regex(requestIdPattern),
  status: z.enum(["SUCCEEDED", "FAILED"]),
  amountCents: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  currency: currencySchema,
});

const outcome = z.enum(paymentOutcomes);

export const paymentResultSchema = z.union([
  z.strictObject({
    eventId: z.string(),
    status: z.literal("processed"),
    outcome,
    orderState: orderStateSchema,
  }),
  z
    .strictObject({ eventId: z.string(), status: z.literal("already_processed"), outcome })
    .describe("The event was seen before: its first outcome, nothing applied again"),
]);

export const paymentCallback: Operation = {
  method: "post",
  path: "/v1/payments/callback",
  summary: "The payment provider's signed event, applied once per eventId",
  security: "signature",
  body: paymentEvent,
  responses: { 200: { description: "Applied now, or already before", schema: paymentResultSchema } },
  problems: ["INVALID_REQUEST", "UNAUTHORIZED", "NOT_FOUND", "PAYLOAD_TOO_LARGE"],
};

/** A payment event is a few hundred bytes; nothing bigger is read. */
const maxCallbackBytes = 4 * 1024;

/**
 * The payment provider's callback: signed, de-duplicated by eventId, applied to MySQL only. The
 * signature header's shape and age are checked before the body is read, the body's MAC after.
 */
export function paymentRoutes(deps: { payments: PaymentService; secret: string }) {
  const router = new Hono<AppEnv>();
  serve(router, paymentCallback, async (c) => {
    const signature = readSignatureHeader(c.req.header("flashgate-signature"));
    if (typeof signature === "string") throw new ApiError("UNAUTHORIZED", `signature ${signature}`);
    const raw = await rawBody(c, maxCallbackBytes);
    const failure = verifyPayloadSignature(deps.secret, signature, raw);
    if (failure) throw new ApiError("UNAUTHORIZED", `signature ${failure}`);
    const event = parseJson(raw, paymentEvent);
    const result = await deps.payments.apply(event);
    switch (result.kind) {
      case "unknown_order":
        throw new ApiError("NOT_FOUND", "no such order");
      case "duplicate":
        return c.json<z.output<typeof paymentResultSchema>>({
          eventId: event.eventId,
          status: "already_processed",
          outcome: result.outcome,
        });
      case "processed":
        return c.json<z.output<typeof paymentResultSchema>>({
          eventId: event.eventId,
          status: "processed",
          outcome: result.outcome,
          orderState: result.order.state,
        });
    }
  });
  return router;
}
