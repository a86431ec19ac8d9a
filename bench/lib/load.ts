import { connect, type Socket } from "node:net";

export interface LoadRequest {
  method: "GET" | "POST";
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  requests: number;
  elapsedMs: number;
  perSecond: number;
  /** Latencies in ms, per outcome label ("201", "409 SOLD_OUT", …). */
  latencies: Record<string, number[]>;
  /** Answers per outcome label in each 250 ms slot of the run. */
  timeline: Record<string, number>[];
  errors: number;
}

const headerEnd = Buffer.from("\r\n\r\n");

export function serialise(request: LoadRequest, host: string): Buffer {
  let head = `${request.method} ${request.path} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const [name, value] of Object.entries(request.headers ?? {})) head += `${name}: ${value}\r\n`;
  const body = request.body ?? "";
  head += `content-length: ${Buffer.byteLength(body)}\r\n\r\n`;
  return Buffer.from(head + body);
}

const codeMarker = Buffer.from('"code":"');

/** The problem code in body bytes (`"code":"SOLD_OUT"`), found without decoding the body. */
function problemCode(buffer: Buffer, from: number, to: number): string | undefined {
  const at = buffer.indexOf(codeMarker, from);
  if (at < 0 || at >= to) return undefined;
  const start = at + codeMarker.length;
  return buffer.toString("latin1", start, buffer.indexOf(34, start));
}

/** One parsed response (status, problem code, bytes used), or null while the buffer holds less. */
export function parseResponse(buffer: Buffer): { status: number; code?: string; size: number } | null {
  const end = buffer.indexOf(headerEnd);
  if (end < 0) return null;
  const status = (buffer[9] - 48) * 100 + (buffer[10] - 48) * 10 + (buffer[11] - 48);
  const head = buffer.toString("latin1", 0, end);
  const length = /\r\ncontent-length: *(\d+)/i.exec(head);
  if (length) {
    const size = end + 4 + Number(length[1]);
    if (buffer.length < size) return null;
    return { status, code: status >= 400 ? problemCode(buffer, end + 4, size) : undefined, size };
  }
  if (!/\r\ntransfer-encoding: *chunked/i.test(head)) return { status, size: end + 4 };
  // Chunked: walk the chunks until the zero-length one.
  let at = end + 4;
  for (;;) {
    const line = buffer.indexOf("\r\n", at);
    if (line < 0) return null;
    const chunk = Number.parseInt(buffer.toString("latin1", at, line), 16);
    if (buffer.length < line + 2 + chunk + 2) return null;
    at = line + 2 + chunk + 2;
    if (chunk === 0)
      return { status, code: status >= 400 ? problemCode(buffer, end + 4, at) : undefined, size: at };
  }
}

/**
 * A closed-loop load generator: `connections` keep-alive connections, each sending its next request
 * as soon as the previous answer arrives, until `total` requests are done. It writes pre-built bytes
 * to plain sockets and parses only the status, length and problem code, so on a two-core machine it
 * takes as little CPU from the systems under test as possible. Outcomes are labelled by status and
 * problem code so latency can be reported per outcome. Given several servers (one design's
 * processes), connections are spread over them in turn, as a balancer in front of them would.
 */
export async function runLoad(
  servers: string | string[],
  total: number,
  connections: number,
  next: (index: number) => LoadRequest,
  background: {
    /** Stops sending early once this answers true (a load that lasts as long as another). */
    stop?: () => boolean;
    /**
     * Each connection pauses this long on average after an answer before its next request (and before
     * its first): clients, not a firehose. The pauses are random (exponential), as independent clients'
     * are: with one fixed pause the clients that started together sent together for ever, a flood in
     * waves of every client at once, and a buyer arriving in a wave waited behind all of it.
     */
    thinkMs?: number;
    /** Told of every answer: the request's index, its outcome label and when it came (ms since the start). */
    onAnswer?: (index: number, label: string, atMs: number) => void;
  } = {},
): Promise<LoadResult> {
  const stop = background.stop ?? (() => false);
  const thinkMs = background.thinkMs ?? 0;
  const pause = () => -thinkMs * Math.log(1 - Math.random());
  const urls = (Array.isArray(servers) ? servers : [servers]).map((url) => new URL(url));
  const latencies: Record<string, number[]> = {};
  let issued = 0;
  // Answers per outcome in each 250 ms of the run: where the time of a storm goes.
  const timeline: Record<string, number>[] = [];
  let started = 0;
  const record = (index: number, label: string, ms: number) => {
    latencies[label] ??= [];
    latencies[label].push(ms);
    const atMs = performance.now() - started;
    background.onAnswer?.(index, label, atMs);
    const slot = Math.floor(atMs / 250);
    timeline[slot] ??= {};
    timeline[slot][label] = (timeline[slot][label] ?? 0) + 1;
  };

  const drive = (socket: Socket, host: string) =>
    new Promise<void>((resolve) => {
      let buffer: Buffer = Buffer.alloc(0);
      let sentAt = 0;
      let index = 0;
      const send = () => {
        if (issued >= total || stop()) {
          socket.end();
          return resolve();
        }
        index = issued++;
        const request = serialise(next(index), host);
        sentAt = performance.now();
        socket.write(request);
      };
      socket.on("data", (chunk: Buffer) => {
        buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
        const response = parseResponse(buffer);
        if (!response) return;
        buffer = buffer.subarray(response.size);
        record(
          index,
          response.code ? `${response.status} ${response.code}` : String(response.status),
          performance.now() - sentAt,
        );
        if (thinkMs > 0) setTimeout(send, pause());
        else send();
      });
      socket.on("error", () => resolve());
      socket.on("close", () => resolve());
      if (thinkMs > 0) setTimeout(send, Math.random() * thinkMs);
      else send();
    });

  const sockets = await Promise.all(
    Array.from(
      { length: connections },
      (_, i) =>
        new Promise<Socket>((resolve, reject) => {
          const { port, hostname } = urls[i % urls.length];
          const socket = connect(Number(port), hostname, () => resolve(socket));
          socket.setNoDelay(true);
          socket.once("error", reject);
        }),
    ),
  );
  started = performance.now();
  await Promise.all(sockets.map((socket, i) => drive(socket, urls[i % urls.length].host)));
  const elapsedMs = performance.now() - started;
  const answered = Object.values(latencies).reduce((sum, values) => sum + values.length, 0);
  // A request without an answer (a connection that broke) is an error; a stopped load planned only what it sent.
  const planned = stop() ? issued : total;
  const errors = planned - answered;
  refuseUnauthorized(latencies);
  return {
    requests: planned,
    elapsedMs,
    perSecond: (answered / elapsedMs) * 1000,
    latencies,
    timeline: Array.from(timeline, (slot) => slot ?? {}),
    errors,
  };
}

/** Every load carries valid tokens: a 401 is the bench's own fault, never a design's figure. */
export function refuseUnauthorized(latencies: Record<string, unknown[]>) {
  const refused = Object.keys(latencies).find((label) => label.startsWith("401"));
  if (refused)
    throw new Error(`the servers refused the bench's own tokens (${refused}): a bench fault, not a figure`);
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** How many answers were 5xx, from a load's latencies per outcome label. */
export const serverErrorsOf = (latencies: Record<string, number[]>) =>
  Object.entries(latencies)
    .filter(([label]) => label.startsWith("5"))
    .reduce((sum, [, values]) => sum + values.length, 0);

/** One answer's times (ms, from when each request was due or sent): how many, and their percentiles. */
export interface Latency {
  count: number;
  p50: number;
  p99: number;
  p999: number;
}

export function latencySummary(latencies: Record<string, number[]>): Record<string, Latency> {
  return Object.fromEntries(
    Object.entries(latencies).map(([label, values]) => {
      const sorted = [...values].sort((a, b) => a - b);
      const round = (n: number) => Math.round(n * 100) / 100;
      return [
        label,
        {
          count: sorted.length,
          p50: round(percentile(sorted, 50)),
          p99: round(percentile(sorted, 99)),
          p999: round(percentile(sorted, 99.9)),
        },
      ];
    }),
  );
}

/** Each answer's times, and every answer's together as `all`. */
export const latencySummaryWithAll = (latencies: Record<string, number[]>): Record<string, Latency> => ({
  ...latencySummary(latencies),
  all: latencySummary({ all: Object.values(latencies).flat() }).all,
});
