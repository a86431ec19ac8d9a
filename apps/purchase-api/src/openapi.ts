import { idPattern, requestIdPattern } from "@flashgate/auth";
import { z } from "zod";
import { orderSchema } from "./order-json.ts";
import { type ErrorCode, errorStatus, problemSchema, wireCode } from "./problem.ts";
import {
  activityBody,
  activitySavedSchema,
  adminSkuViewSchema,
  restockBody,
  restockedSchema,
  skuBody,
  skuSavedSchema,
} from "./routes/admin.ts";
import { paymentEvent, paymentResultSchema } from "./routes/payments.ts";
import { purchaseBody } from "./routes/place-purchase.ts";
import { skuViewSchema } from "./routes/sku-view.ts";

type Security = "user" | "admin" | "signature" | "none";

/** One route as the document describes it: built from the schemas the route itself validates and answers with. */
export interface Operation {
  method: "get" | "post" | "put";
  path: string;
  summary: string;
  security: Security;
  parameters?: { name: string; in: "path" | "header"; pattern: string; description: string }[];
  body?: z.ZodType;
  responses: Record<
    number,
    { description: string; schema?: z.ZodType; contentType?: string; headers?: string[] }
  >;
  problems: ErrorCode[];
}

const positiveId = idPattern.source;
const pathIds = (...names: string[]) =>
  names.map((name) => ({
    name,
    in: "path" as const,
    pattern: positiveId,
    description: "a positive integer (≤ 2^53 − 1)",
  }));
const keyPattern = requestIdPattern.source;

export const operations: Operation[] = [
  {
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
    },
    problems: [
      "INVALID_REQUEST",
      "UNAUTHORIZED",
      "NOT_FOUND",
      "SOLD_OUT",
      "ALREADY_PURCHASED",
      "IDEMPOTENCY_KEY_REUSED",
      "ACTIVITY_NOT_OPEN",
      "PAYLOAD_TOO_LARGE",
      "RATE_LIMITED",
      "UNAVAILABLE",
    ],
  },
  {
    method: "get",
    path: "/v1/purchases/{requestId}",
    summary: "The caller's own purchase under that Idempotency-Key",
    security: "user",
    parameters: [{ name: "requestId", in: "path", pattern: keyPattern, description: "the Idempotency-Key" }],
    responses: { 200: { description: "The order", schema: orderSchema } },
    problems: ["UNAUTHORIZED", "NOT_FOUND", "UNAVAILABLE"],
  },
  {
    method: "get",
    path: "/v1/activities/{activityId}/skus/{skuId}",
    summary: "A SKU's public view, from the cache (anyone)",
    security: "none",
    parameters: pathIds("activityId", "skuId"),
    responses: { 200: { description: "The SKU's state and units left", schema: skuViewSchema } },
    problems: ["INVALID_REQUEST", "NOT_FOUND", "ACTIVITY_NOT_OPEN", "UNAVAILABLE"],
  },
  {
    method: "post",
    path: "/v1/payments/callback",
    summary: "The payment provider's signed event, applied once per eventId",
    security: "signature",
    body: paymentEvent,
    responses: { 200: { description: "Applied now, or already before", schema: paymentResultSchema } },
    problems: ["INVALID_REQUEST", "UNAUTHORIZED", "NOT_FOUND", "PAYLOAD_TOO_LARGE"],
  },
  {
    method: "put",
    path: "/admin/v1/activities/{activityId}",
    summary: "Create or update an activity (its sale window)",
    security: "admin",
    parameters: pathIds("activityId"),
    body: activityBody,
    responses: {
      201: { description: "Created", schema: activitySavedSchema },
      200: { description: "Updated", schema: activitySavedSchema },
    },
    problems: ["INVALID_REQUEST", "UNAUTHORIZED", "FORBIDDEN", "PAYLOAD_TOO_LARGE"],
  },
  {
    method: "put",
    path: "/admin/v1/activities/{activityId}/skus/{skuId}",
    summary: "Create or update a SKU of an activity",
    security: "admin",
    parameters: pathIds("activityId", "skuId"),
    body: skuBody,
    responses: {
      201: { description: "Created", schema: skuSavedSchema },
      200: { description: "Updated", schema: skuSavedSchema },
    },
    problems: ["INVALID_REQUEST", "UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "PAYLOAD_TOO_LARGE"],
  },
  {
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
  {
    method: "get",
    path: "/admin/v1/activities/{activityId}/skus/{skuId}",
    summary: "A SKU as MySQL and Redis hold it, with the drift check's verdict",
    security: "admin",
    parameters: pathIds("activityId", "skuId"),
    responses: { 200: { description: "Both views and the verdict", schema: adminSkuViewSchema } },
    problems: ["INVALID_REQUEST", "UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND"],
  },
  {
    method: "post",
    path: "/admin/v1/orders/{orderId}/close",
    summary: "Close a PENDING order; its unit goes back to stock",
    security: "admin",
    parameters: [{ name: "orderId", in: "path", pattern: keyPattern, description: "the order's id" }],
    responses: { 200: { description: "The closed order", schema: orderSchema } },
    problems: ["UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "INVALID_STATE"],
  },
  {
    method: "get",
    path: "/healthz",
    summary: "The process answers",
    security: "none",
    responses: { 200: { description: "Alive", schema: z.strictObject({ status: z.literal("ok") }) } },
    problems: [],
  },
  {
    method: "get",
    path: "/readyz",
    summary: "Redis and the database each answered within a second",
    security: "none",
    responses: {
      200: { description: "Ready", schema: z.looseObject({ status: z.literal("ready") }) },
      503: {
        description: "Not ready: the dependencies that did not answer are false",
        schema: z.looseObject({ status: z.literal("not ready") }),
      },
    },
    problems: [],
  },
  {
    method: "get",
    path: "/openapi.json",
    summary: "This document",
    security: "none",
    responses: {
      200: { description: "OpenAPI 3.1", schema: z.looseObject({ openapi: z.literal("3.1.0") }) },
    },
    problems: [],
  },
  {
    method: "get",
    path: "/metrics",
    summary: "Prometheus metrics",
    security: "none",
    responses: { 200: { description: "Prometheus text exposition", contentType: "text/plain" } },
    problems: [],
  },
];

const jsonSchema = (schema: z.ZodType, io: "input" | "output") => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return rest;
};

const securitySchemes = {
  user: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "HS256, `sub` = the user id, signed with AUTH_JWT_SECRET",
  },
  admin: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: 'HS256, `role: "admin"`, signed with ADMIN_JWT_SECRET',
  },
  signature: {
    type: "apiKey",
    in: "header",
    name: "flashgate-signature",
    description:
      '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" with PAYMENT_WEBHOOK_SECRET>`, at most 300 s old',
  },
};

/** Each status a route's problems answer with, and the codes it may carry there. */
export function problemResponses(operation: Operation): Map<number, string[]> {
  const byStatus = new Map<number, string[]>();
  for (const code of operation.problems) {
    const status = errorStatus[code];
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), wireCode(code)])]);
  }
  return byStatus;
}

/** The OpenAPI 3.1 document of the API, from the routes' own schemas. */
export function openApiDocument() {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of operations) {
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(operation.responses)) {
      responses[status] = {
        description: response.description,
        ...(response.headers
          ? { headers: Object.fromEntries(response.headers.map((h) => [h, { schema: { type: "string" } }])) }
          : {}),
        content: {
          [response.contentType ?? "application/json"]: {
            schema: response.schema ? jsonSchema(response.schema, "output") : { type: "string" },
          },
        },
      };
    }
    for (const [status, codes] of problemResponses(operation)) {
      responses[status] = {
        description: codes.join(", "),
        ...(status === 429 || status === 503
          ? { headers: { "Retry-After": { schema: { type: "integer" } } } }
          : {}),
        content: { "application/problem+json": { schema: jsonSchema(problemSchema(codes), "output") } },
      };
    }
    paths[operation.path] ??= {};
    paths[operation.path][operation.method] = {
      summary: operation.summary,
      operationId: `${operation.method}${operation.path.replaceAll(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? "").toUpperCase())}`,
      ...(operation.security === "none" ? { security: [] } : { security: [{ [operation.security]: [] }] }),
      parameters: (operation.parameters ?? []).map((p) => ({
        name: p.name,
        in: p.in,
        required: true,
        description: p.description,
        schema: { type: "string", pattern: p.pattern },
      })),
      ...(operation.body
        ? {
            requestBody: {
              required: true,
              content: { "application/json": { schema: jsonSchema(operation.body, "input") } },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "flashgate purchase API",
      version: "1",
      description:
        "Flash-sale purchases decided by MySQL behind a Redis filter. Every failure is an RFC 9457 problem (`application/problem+json`) with a `code` and a `traceId`; 429 and 503 carry `Retry-After`. Every answer carries `X-Request-Id`.",
    },
    components: { securitySchemes },
    paths,
  };
}
