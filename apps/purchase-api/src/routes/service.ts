import { z } from "zod";
import type { Operation } from "../operation.ts";

/**
 * The probes every flashgate service serves alike (@flashgate/telemetry), as this API documents them; its
 * /metrics is on the operators' port (METRICS_PORT), not in this public document.
 */
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
];
