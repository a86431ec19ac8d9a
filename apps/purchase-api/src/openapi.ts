import { z } from "zod";
import type { Operation } from "./operation.ts";
import { problemSchema, problems, wireCode } from "./problem.ts";
import { adminOperations } from "./routes/admin.ts";
import { documentOperation } from "./routes/docs.ts";
import { paymentCallback } from "./routes/payments.ts";
import { placePurchase } from "./routes/place-purchase.ts";
import { ownPurchase } from "./routes/purchases.ts";
import { serviceOperations } from "./routes/service.ts";
import { skuView } from "./routes/sku-view.ts";
import { followTicket } from "./routes/tickets.ts";

/** Every route the API serves, as each route's file declares it. */
export const operations: Operation[] = [
  placePurchase,
  ownPurchase,
  followTicket,
  skuView,
  paymentCallback,
  ...Object.values(adminOperations),
  ...serviceOperations,
  documentOperation,
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
    const { status } = problems[code];
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
        ...(response.bodyless
          ? {}
          : {
              content: {
                [response.contentType ?? "application/json"]: {
                  schema: response.schema ? jsonSchema(response.schema, "output") : { type: "string" },
                },
              },
            }),
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
        required: p.in !== "query",
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
