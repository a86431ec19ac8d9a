import type { IncomingMessage } from "node:http";
import { parseId } from "@flashgate/auth";
import type { Context } from "hono";
import type { z } from "zod";
import { ApiError } from "./problem.ts";

const defaultMaxBytes = 16 * 1024;

const tooLarge = (maxBytes: number) =>
  new ApiError("PAYLOAD_TOO_LARGE", `the body is larger than ${maxBytes / 1024} KiB`);

/**
 * The raw body of a node:http request, at most `maxBytes` (16 KiB). A purchase body arrives in the
 * same packet as its headers, so after the parser's turn (setImmediate) it is usually complete and is
 * taken in one read; flowing a stream, or a web ReadableStream, for every request of a flash sale costs
 * more than the rest of the request. A body still arriving is read with plain events, within the
 * server's request timeout; one that grows too large is left unread (its 413 closes the connection).
 */
export function readBody(incoming: IncomingMessage, maxBytes = defaultMaxBytes): Promise<string> {
  if (Number(incoming.headers["content-length"] ?? 0) > maxBytes) return Promise.reject(tooLarge(maxBytes));
  return new Promise((resolve, reject) => {
    setImmediate(() => {
      if (incoming.complete) {
        if (incoming.readableLength > maxBytes) return reject(tooLarge(maxBytes));
        const whole = incoming.read() as Buffer | null;
        return resolve(whole ? whole.toString("utf8") : "");
      }
      const chunks: Buffer[] = [];
      let size = 0;
      incoming.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          incoming.removeAllListeners("data");
          incoming.pause();
          return reject(tooLarge(maxBytes));
        }
        chunks.push(chunk);
      });
      incoming.once("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
      // A client that goes away mid-body, or a request past its timeout: node reports it here ("aborted").
      incoming.once("error", reject);
    });
  });
}

/** The raw body of a Hono request: from the IncomingMessage on Node, else from the web request. */
export async function rawBody(c: Context, maxBytes = defaultMaxBytes): Promise<string> {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming) return readBody(incoming, maxBytes);
  if (Number(c.req.header("content-length") ?? 0) > maxBytes) throw tooLarge(maxBytes);
  const text = await c.req.text();
  if (Buffer.byteLength(text) > maxBytes) throw tooLarge(maxBytes);
  return text;
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
  const id = parseId(c.req.param(name) ?? "");
  if (id === undefined) throw new ApiError("INVALID_REQUEST", `${name} must be a positive integer`);
  return id;
}
