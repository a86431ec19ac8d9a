import { isRequestId } from "@flashgate/auth";
import { refusals, type TicketService } from "@flashgate/sale";
import { Hono } from "hono";
import type { AppEnv } from "../env.ts";
import { type Guards, keyPattern, type Operation, serve } from "../operation.ts";
import { ApiError } from "../problem.ts";
import { ticketJson, ticketSchema } from "../ticket-json.ts";

/** The longest a caller may wait on one request for their ticket's outcome: whole seconds, 0 to 30. */
const maxWaitS = 30;
const waitPattern = "^([0-9]|[12][0-9]|30)$";

export const followTicket: Operation = {
  method: "get",
  path: "/v1/tickets/{requestId}",
  summary: "Where the caller's purchase under that Idempotency-Key stands: queued, created or refused",
  security: "user",
  parameters: [
    { name: "requestId", in: "path", pattern: keyPattern, description: "the Idempotency-Key" },
    {
      name: "wait",
      in: "query",
      pattern: waitPattern,
      description: `Seconds (at most ${maxWaitS}) to hold the answer while the purchase is still queued: it comes as soon as it is decided`,
    },
  ],
  responses: { 200: { description: "The purchase's standing", schema: ticketSchema } },
  problems: ["UNAUTHORIZED", "INVALID_REQUEST", "NOT_FOUND", "UNAVAILABLE"],
};

export const ticketLocation = (requestId: string) => `/v1/tickets/${requestId}`;

/** A buyer's own ticket, held up to `wait` seconds while it is queued (a long poll). */
export function ticketRoutes(tickets: TicketService, guards: Guards, onError: (error: unknown) => void) {
  const router = new Hono<AppEnv>();
  serve(
    router,
    followTicket,
    async (c) => {
      const requestId = c.req.param("requestId") ?? "";
      if (!isRequestId(requestId)) throw new ApiError("NOT_FOUND", "no such purchase");
      const wait = c.req.query("wait") ?? "0";
      if (!new RegExp(waitPattern).test(wait))
        throw new ApiError("INVALID_REQUEST", `wait must be whole seconds from 0 to ${maxWaitS}`);
      const standing = await tickets
        .standing(c.get("userId"), requestId, Number(wait) * 1000, c.req.raw.signal)
        .catch((error) => {
          onError(error);
          throw ApiError.of(refusals.standingUnread);
        });
      if (!standing) throw new ApiError("NOT_FOUND", "no such purchase");
      return c.json(ticketJson(requestId, standing));
    },
    guards,
  );
  return router;
}
