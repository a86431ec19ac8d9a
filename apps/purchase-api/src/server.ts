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
  /** Open connections of one client address at most (behind a proxy every client shares its address). */
  maxConnectionsPerAddress: number;
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
  const byAddress = new Map<string, number>();
  server.on("connection", (socket) => {
    const address = socket.remoteAddress ?? "";
    const ofAddress = byAddress.get(address) ?? 0;
    if (open >= limits.maxConnections) return void socket.end(refusal("too many open connections"));
    if (ofAddress >= limits.maxConnectionsPerAddress)
      return void socket.end(refusal("too many open connections from one address"));
    open++;
    byAddress.set(address, ofAddress + 1);
    socket.once("close", () => {
      open--;
      const left = (byAddress.get(address) ?? 1) - 1;
      if (left > 0) byAddress.set(address, left);
      else byAddress.delete(address);
    });
  });
  return server;
}

/** A whole HTTP response written straight to the socket: the connection never reaches the parser's answer. */
function refusal(detail: string): string {
  const reply = problemReply("UNAVAILABLE", detail, randomUUID(), 1);
  const head = [
    `HTTP/1.1 ${reply.status} Service Unavailable`,
    ...Object.entries(reply.headers).map(([name, value]) => `${name}: ${value}`),
    `content-length: ${Buffer.byteLength(reply.body)}`,
    "connection: close",
  ];
  return `${head.join("\r\n")}\r\n\r\n${reply.body}`;
}
