import type { ServerResponse } from "node:http";
import type { Reply } from "./problem.ts";

/**
 * The routes a flood takes run straight on node:http (ADR 0007): a web Request, a Hono context and a
 * Response per request cost more than their own work. These are what they share.
 */

/** Writes a reply with its trace id and a known length, so node sends head and body at once. */
export function writeReply(outgoing: ServerResponse, reply: Reply, traceId: string): void {
  reply.headers["x-request-id"] = traceId;
  reply.headers["content-length"] = String(Buffer.byteLength(reply.body));
  outgoing.writeHead(reply.status, reply.headers);
  outgoing.end(reply.body);
}

/** Label lookups hash their labels on every call: a metric's children are resolved once per value. */
export function memo<K, V>(make: (key: K) => V): (key: K) => V {
  const made = new Map<K, V>();
  return (key) => {
    let value = made.get(key);
    if (value === undefined) {
      value = make(key);
      made.set(key, value);
    }
    return value;
  };
}
