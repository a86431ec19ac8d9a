import type { Context } from "hono";
import type { z } from "zod";
import { ApiError } from "./problem.ts";

/** Parses a JSON body against a schema; every failure names what is wrong. */
export async function jsonBody<S extends z.ZodType>(
  c: Context,
  schema: S,
): Promise<{ value: z.infer<S>; raw: string }> {
  const raw = await c.req.text();
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new ApiError("INVALID_REQUEST", "the body is not valid JSON");
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ApiError("INVALID_REQUEST", `${issue?.path.join(".") || "body"}: ${issue?.message}`);
  }
  return { value: parsed.data, raw };
}

export function pathId(c: Context, name: string): number {
  const value = c.req.param(name) ?? "";
  if (!/^[1-9]\d{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new ApiError("INVALID_REQUEST", `${name} must be a positive integer`);
  }
  return Number(value);
}
