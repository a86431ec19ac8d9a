import type { IncomingMessage } from "node:http";
import type { Context } from "hono";
import type { z } from "zod";
import { ApiError } from "./problem.ts";

export const maxBodyBytes = 16 * 1024;

/**
 * The raw body, at most 16 KiB. On Node it is read straight from the IncomingMessage: building a web
 * ReadableStream for every request of a flash sale costs more than the rest of the request.
 */
export async function rawBody(c: Context): Promise<string> {
  const tooLarge = () => new ApiError("PAYLOAD_TOO_LARGE", "the body is larger than 16 KiB");
  if (Number(c.req.header("content-length") ?? 0) > maxBodyBytes) throw tooLarge();
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!incoming) {
    const text = await c.req.text();
    if (Buffer.byteLength(text) > maxBodyBytes) throw tooLarge();
    return text;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of incoming) {
    size += (chunk as Buffer).length;
    if (size > maxBodyBytes) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Parses JSON text against a schema; every failure names what is wrong. */
export function parseJson<S extends z.ZodType>(raw: string, schema: S): z.infer<S> {
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
  return parsed.data;
}

export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<{ value: z.infer<S> }> {
  return { value: parseJson(await rawBody(c), schema) };
}

export function pathId(c: Context, name: string): number {
  const value = c.req.param(name) ?? "";
  if (!/^[1-9]\d{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new ApiError("INVALID_REQUEST", `${name} must be a positive integer`);
  }
  return Number(value);
}
