import { z } from "zod";
import type { Operation } from "../operation.ts";

/** The operational routes every flashgate service serves alike (@flashgate/telemetry), as this API documents them. */
export const serviceOperations: Operation[] = [
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
    path: "/metrics",
    summary: "Prometheus metrics",
    security: "none",
    responses: { 200: { description: "Prometheus text exposition", contentType: "text/plain" } },
    problems: [],
  },
];
