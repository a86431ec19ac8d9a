import { randomUUID } from "node:crypto";
import { createServer, type RequestListener, type Server } from "node:http";
import { problemReply } from "./problem.ts";

export interface HttpLimits {
  /** Time to receive a request's headers. */
  headersTimeoutMs: number;
  /** Time to receive a whole request, body included; past it node answers 408 and closes. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
  /** Open connections at most; one more is told 503 and closed. */
  maxConnections: number;
}

/**
 * The API's HTTP server, bounded against slow and greedy clients: node's defaults give a request 300 s
 * and take any number of connections, so a few thousand sockets trickling bytes would hold the process.
 */
export function createHttpServer(listener: RequestListener, limits: HttpLimits): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks the two timeouts above on this period (30 s by default).
      connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
    },
    listener,
  );
  let open = 0;
  server.on("connection", (socket) => {
    if (open >= limits.maxConnections) {
      socket.end(refusal());
      return;
    }
    open++;
    socket.once("close", () => open--);
  });
  return server;
}

/** A whole HTTP response written straight to the socket: the connection never reaches the parser's answer. */
function refusal(): string {
  const reply = problemReply("UNAVAILABLE", "too many open connections", randomUUID(), 1);
  const head = [
    `HTTP/1.1 ${reply.status} Service Unavailable`,
    ...Object.entries(reply.headers).map(([name, value]) => `${name}: ${value}`),
    `content-length: ${Buffer.byteLength(reply.body)}`,
    "connection: close",
  ];
  return `${head.join("\r\n")}\r\n\r\n${reply.body}`;
}
