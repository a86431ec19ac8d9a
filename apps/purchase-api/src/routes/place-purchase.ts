import type { IncomingMessage, ServerResponse } from "node:http";
import { isRequestId, type TokenVerifier } from "@flashgate/auth";
import type { Logger } from "@flashgate/logger";
import { type PurchaseResult, type PurchaseService, refusalCodes } from "@flashgate/sale";
import { z } from "zod";
import { authenticateUser } from "../auth.ts";
import { memo, writeReply } from "../bare-route.ts";
import { parseJson, readBody } from "../body.ts";
import type { Metrics } from "../metrics.ts";
import { keyPattern, type Operation } from "../operation.ts";
import { orderJson, orderSchema } from "../order-json.ts";
import { ApiError, errorReply, problemReply, type Reply } from "../problem.ts";
import { ticketJson, ticketSchema } from "../ticket-json.ts";
import { traceIdOf } from "../trace.ts";
import { ticketLocation } from "./tickets.ts";

const id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const purchaseBody = z.strictObject({ activityId: id, skuId: id });

export const placePurchase = {
  method: "post",
  path: "/v1/purchases",
  summary: "Buy one unit of a SKU; a retry with the same Idempotency-Key gets the same answer",
  security: "user",
  parameters: [
    {
      name: "Idempotency-Key",
      in: "header",
      pattern: keyPattern,
      description:
        "The buyer's key for this purchase (its user's: another user's same key is another purchase)",
    },
  ],
  body: purchaseBody,
  responses: {
    201: { description: "The order, created", schema: orderSchema, headers: ["Location"] },
    200: { description: "The order this key already placed", schema: orderSchema },
    202: {
      description:
        "Queued (ADR 0030): the buyer holds a place in line and a unit is held for them, which survives any one process or broker dying; nothing is sold until the ticket says CREATED. Follow it at Location",
      schema: ticketSchema,
      headers: ["Location"],
    },
  },
  problems: ["INVALID_REQUEST", "UNAUTHORIZED", "PAYLOAD_TOO_LARGE", ...refusalCodes],
} satisfies Operation;
const route = placePurchase.path;

const orderReply = (result: { order: Parameters<typeof orderJson>[0] }, status: number): Reply => {
  const order = orderJson(result.order);
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (status === 201) headers.location = `${route}/${order.requestId}`;
  return { status, headers, body: JSON.stringify(order) };
};

/** An order (201 new, 200 the key's own again), a ticket (202 queued) or the refusal's problem. */
function resultReply(result: PurchaseResult, traceId: string): Reply {
  if ("order" in result) return orderReply(result, result.kind === "CREATED" ? 201 : 200);
  if (result.kind === "QUEUED")
    return {
      status: 202,
      headers: { "content-type": "application/json", location: ticketLocation(result.requestId) },
      body: JSON.stringify(ticketJson(result.requestId, { ticket: result.ticket })),
    };
  return problemReply(result.kind, result.detail, traceId, result.retryAfterS);
}

/**
 * POST /v1/purchases straight on node:http: this one route takes the whole flood of a sale, and a
 * web Request, a Hono context and a Response per request cost twice the work of the rejection itself
 * (ADR 0007). Same contract, same helpers as the Hono routes: auth, body limit, validation, problems.
 */
export function placePurchaseHandler(deps: {
  purchases: PurchaseService;
  verifyUser: TokenVerifier;
  metrics: Metrics;
  logger: Logger;
}) {
  const { purchases, verifyUser, metrics, logger } = deps;
  const duration = memo((status: number) => metrics.requestDuration.child({ route, status }));
  const admitted = memo((outcome: string) => metrics.admissions.labels({ outcome }));
  return (incoming: IncomingMessage, outgoing: ServerResponse): void => {
    const started = performance.now();
    const traceId = traceIdOf(incoming.headers["x-request-id"]);
    const send = (reply: Reply) => {
      writeReply(outgoing, reply, traceId);
      duration(reply.status).observe((performance.now() - started) / 1000);
    };
    const fail = (error: unknown) =>
      send(
        errorReply(error, traceId, (err) => logger.error({ err, traceId, path: route }, "unhandled error")),
      );

    let userId: string | Promise<string>;
    let requestId: string;
    try {
      userId = authenticateUser(verifyUser, incoming.headers.authorization);
      const key = incoming.headers["idempotency-key"];
      if (typeof key !== "string" || !isRequestId(key))
        throw new ApiError("INVALID_REQUEST", "Idempotency-Key must be 8–64 characters of [A-Za-z0-9_-]");
      requestId = key;
    } catch (error) {
      fail(error);
      return;
    }
    const decide = (user: string, raw: string) =>
      purchases.purchase({ requestId, userId: user, ...parseJson(raw, purchaseBody) }, traceId);
    // A token known at once (the shared secret's, one seen before) costs nothing more; one whose key is
    // being fetched goes with the body, so that its refusal is never a rejection left unhandled.
    const decided =
      typeof userId === "string"
        ? readBody(incoming).then((raw) => decide(userId, raw))
        : Promise.all([userId, readBody(incoming)]).then(([user, raw]) => decide(user, raw));
    decided
      .then((result) => {
        admitted(result.kind).inc();
        send(resultReply(result, traceId));
      }, fail)
      // Only a broken socket could throw here; it must never become an unhandled rejection.
      .catch((err) => logger.error({ err, traceId, path: route }, "reply failed"));
  };
}
