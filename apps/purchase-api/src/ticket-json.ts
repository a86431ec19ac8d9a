import type { Order } from "@flashgate/db";
import type { TicketStanding } from "@flashgate/sale";
import { z } from "zod";
import { orderJson, orderSchema } from "./order-json.ts";
import { type ErrorCode, problems } from "./problem.ts";

const safeId = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** A purchase as its buyer follows it: queued, then created (its order) or refused (the problem's code). */
export const ticketSchema = z.strictObject({
  requestId: z.string().describe("The buyer's Idempotency-Key: the ticket's name"),
  state: z
    .enum(["QUEUED", "CREATED", "REFUSED"])
    .describe(
      "QUEUED: in line, its unit held for it, not yet sold; CREATED: the order exists; REFUSED: no order",
    ),
  activityId: safeId,
  skuId: safeId,
  queuedAt: z.iso.datetime().optional().describe("When the buyer was put in line (absent if never queued)"),
  decidedAt: z.iso.datetime().optional(),
  order: orderSchema
    .optional()
    .describe("The order as it was created, once CREATED (GET /v1/purchases/{requestId} for its state now)"),
  refusal: z
    .strictObject({
      code: z.string(),
      detail: z.string(),
      status: z.number().int().describe("The status the purchase would have been answered with at once"),
    })
    .optional()
    .describe("Why there is no order, once REFUSED: the code a purchase's problem would carry"),
});

const iso = (ms: number) => new Date(ms).toISOString();

export function ticketJson(requestId: string, standing: TicketStanding): z.output<typeof ticketSchema> {
  const { ticket } = standing;
  if (!ticket) {
    const order = standing.order as Order;
    return {
      requestId,
      state: "CREATED",
      activityId: order.activityId,
      skuId: order.skuId,
      order: orderJson(order),
    };
  }
  const base = {
    requestId,
    activityId: ticket.activityId,
    skuId: ticket.skuId,
    queuedAt: iso(ticket.queuedAtMs),
  };
  switch (ticket.state) {
    case "QUEUED":
      return { ...base, state: "QUEUED" };
    case "CREATED":
      return {
        ...base,
        state: "CREATED",
        decidedAt: iso(ticket.decidedAtMs),
        order: orderJson(ticket.order),
      };
    case "REFUSED": {
      const status = problems[ticket.code as ErrorCode]?.status ?? 409;
      const refusal = { code: ticket.code, detail: ticket.detail, status };
      return { ...base, state: "REFUSED", decidedAt: iso(ticket.decidedAtMs), refusal };
    }
  }
}
