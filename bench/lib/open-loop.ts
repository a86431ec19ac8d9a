import { connect, type Socket } from "node:net";
import { type LoadRequest, parseResponse, percentile, refuseUnauthorized, serialise } from "./load.ts";

export interface OpenLoadOptions {
  /** Requests per second, arriving whether or not earlier ones were answered. */
  rate: number;
  durationMs: number;
  /**
   * Arrivals at the same rate before the measured ones, sent and answered but not counted: each step
   * starts on fresh sockets and a fresh sale, and its first answers would measure that, not the rate.
   */
  warmupMs?: number;
  /** Sockets kept open (spread over the servers); a request arriving while all are busy queues for one. */
  connections: number;
  /** An answer later than this after its intended send time counts as timed out, as does no answer at all. */
  timeoutMs: number;
  /** Each measured answer: its label, and when it came (ms from the first measured request's due time). */
  onAnswer?: (label: string, atMs: number) => void;
}

export interface OpenLoadResult {
  offeredPerSecond: number;
  sent: number;
  answered: number;
  /** Requests without an answer within timeoutMs of their intended send time (or whose connection broke). */
  timedOut: number;
  /** Latencies in ms from each request's intended send time, per outcome label ("201", "409 SOLD_OUT", …). */
  latencies: Record<string, number[]>;
}

/**
 * An open-loop load: request i is due at start + i / rate, as a sale's buyers arrive on their own clock.
 * Each answer is timed from when its request was due, not from when a connection was free to send it,
 * so a server that falls behind sees the queue it made in its latencies (no coordinated omission).
 * Request bytes are built once each, when due; a free socket takes the oldest waiting request.
 */
export async function runOpenLoad(
  servers: string[],
  options: OpenLoadOptions,
  next: (index: number) => LoadRequest,
): Promise<OpenLoadResult> {
  const urls = servers.map((url) => new URL(url));
  const warmup = Math.round((options.rate * (options.warmupMs ?? 0)) / 1000);
  const total = warmup + Math.round((options.rate * options.durationMs) / 1000);
  const latencies: Record<string, number[]> = {};
  /** A request due and not yet answered; `resent` once it went out again on a fresh socket. */
  interface Arrival {
    index: number;
    dueAt: number;
    resent?: boolean;
  }
  const waiting: Arrival[] = [];
  let answered = 0;
  let broken = 0;
  let sent = 0;
  let start = 0;

  interface Connection {
    socket: Socket;
    host: string;
    busy?: Arrival;
    buffer: Buffer;
  }
  const idle: Connection[] = [];
  const dispatch = () => {
    while (idle.length > 0 && waiting.length > 0) {
      const connection = idle.pop() as Connection;
      const request = waiting.shift() as Arrival;
      connection.busy = request;
      connection.socket.write(serialise(next(request.index), connection.host));
    }
  };
  const sockets = new Set<Socket>();
  let finished = false;
  const open = (i: number): Promise<Connection> =>
    new Promise<Connection>((resolve, reject) => {
      const { port, hostname, host } = urls[i % urls.length];
      const socket = connect(Number(port), hostname, () => resolve(connection));
      const connection: Connection = { socket, host, buffer: Buffer.alloc(0) };
      socket.setNoDelay(true);
      socket.once("error", reject);
      socket.on("data", (chunk: Buffer) => {
        connection.buffer =
          connection.buffer.length === 0 ? chunk : Buffer.concat([connection.buffer, chunk]);
        const response = parseResponse(connection.buffer);
        if (!response || !connection.busy) return;
        connection.buffer = connection.buffer.subarray(response.size);
        if (connection.busy.index >= warmup) {
          const label = response.code ? `${response.status} ${response.code}` : String(response.status);
          const now = performance.now();
          latencies[label] ??= [];
          latencies[label].push(now - connection.busy.dueAt);
          options.onAnswer?.(label, now - start - (warmup * 1000) / options.rate);
          answered += 1;
        }
        connection.busy = undefined;
        idle.push(connection);
        dispatch();
      });
      // A server closes a keep-alive socket that sat idle (Node after 5 s): from its FIN on the socket
      // leaves the pool, never to be written to again, and a new one takes its place, as a client's pool would.
      const leavePool = () => {
        const at = idle.indexOf(connection);
        if (at >= 0) idle.splice(at, 1);
      };
      socket.on("end", leavePool);
      socket.on("close", () => {
        leavePool();
        const request = connection.busy;
        connection.busy = undefined;
        sockets.delete(socket);
        // A request written as the server closed the idle socket was never read: like a client's pool
        // it goes out once more on the next socket, still timed from when it was due. A second loss, or
        // one after part of its answer came, is a broken request.
        if (request && !request.resent && connection.buffer.length === 0 && !finished) {
          waiting.unshift({ ...request, resent: true });
          dispatch();
        } else if (request && request.index >= warmup) broken += 1;
        if (!finished)
          open(i).then(
            (replacement) => {
              idle.push(replacement);
              dispatch();
            },
            // The server is gone: the requests that wait for a socket time out, and are counted so.
            () => {},
          );
      });
      sockets.add(socket);
    });
  idle.push(...(await Promise.all(Array.from({ length: options.connections }, (_, i) => open(i)))));

  start = performance.now();
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * options.rate) / 1000) + 1);
      for (; sent < due; sent++) waiting.push({ index: sent, dueAt: start + (sent * 1000) / options.rate });
      dispatch();
      // A timer, not setImmediate: a spinning generator would take a core from the servers it measures.
      if (sent < total) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  // The last request's deadline, then whatever is still waiting or in flight has timed out.
  const deadline = start + (options.warmupMs ?? 0) + options.durationMs + options.timeoutMs;
  await new Promise<void>((resolve) => {
    const check = () => {
      if (answered + broken >= total - warmup || performance.now() > deadline) return resolve();
      setTimeout(check, 20);
    };
    check();
  });
  finished = true;
  for (const socket of sockets) socket.destroy();
  refuseUnauthorized(latencies);
  const late = Object.values(latencies).reduce(
    (sum, values) => sum + values.filter((ms) => ms > options.timeoutMs).length,
    0,
  );
  return {
    offeredPerSecond: options.rate,
    sent: total - warmup,
    answered,
    timedOut: total - warmup - answered + late,
    latencies,
  };
}

export interface Ceiling {
  /** The highest offered rate every step up to which held the bounds. */
  sustainedPerSecond: number;
  steps: {
    offeredPerSecond: number;
    answeredPerSecond: number;
    p50Ms: number;
    p99Ms: number;
    errorShare: number;
    held: boolean;
    /** Answers per outcome label: a step's 201s over its duration are its orders per second. */
    answers: Record<string, number>;
  }[];
}

/**
 * Where a design's search starts in a round: at the ceiling an earlier round found for it, stepping by 1.25,
 * so a later round brackets it in a step or two instead of climbing again from the profile's start (most
 * of a full run's time was spent there, settling after steps far below or far above the ceiling).
 */
export const searchStart = (earlier: number | undefined, first: { startRate: number; factor: number }) =>
  earlier ? { startRate: earlier, factor: laterRoundFactor } : first;
export const laterRoundFactor = 1.25;

/**
 * Steps the offered rate up by `factor` from `startRate` until a rate breaks the bounds twice in a row
 * (its `measured` outcomes' p99 above `p99Ms`, or more than `maxErrorShare` of its requests failed or
 * timed out) — or down, from a start rate that broke, until one holds — then bisects between the last rate that held and that one until they are within
 * `resolution` of each other: the highest rate that held is the design's sustained rate, at most
 * `resolution` below the true one. `step` runs one rate on whatever fresh state it needs (a sale big
 * enough to last the step) and returns the load's result.
 */
export async function findCeiling(
  step: (rate: number) => Promise<OpenLoadResult>,
  bounds: {
    startRate: number;
    /** Below a start rate that broke, the search steps down to this rate at the least (then reports 0). */
    minRate: number;
    factor: number;
    /** How close the bisection brings the highest rate that held and the lowest that broke (0.05: 5 %). */
    resolution: number;
    /** How many times a rate runs before it counts as broken (2 in a measurement; a smoke check's 1). */
    tries?: number;
    maxRate: number;
    p99Ms: number;
    maxErrorShare: number;
    /** The outcome labels whose latency counts (a purchase's 201; every answer where refusals are the point). */
    measured: (label: string) => boolean;
    /** Answers that are failures (5xx, 429…), whatever their latency. */
    failed: (label: string) => boolean;
  },
): Promise<Ceiling> {
  const steps: Ceiling["steps"] = [];
  const run = async (rate: number): Promise<boolean> => {
    const result = await step(rate);
    const measured = Object.entries(result.latencies)
      .filter(([label]) => bounds.measured(label))
      .flatMap(([, values]) => values)
      .sort((a, b) => a - b);
    const failures =
      result.timedOut +
      Object.entries(result.latencies)
        .filter(([label]) => bounds.failed(label))
        .reduce((sum, [, values]) => sum + values.length, 0);
    const p99 = measured.length ? percentile(measured, 99) : Number.POSITIVE_INFINITY;
    const errorShare = failures / result.sent;
    const held = p99 <= bounds.p99Ms && errorShare <= bounds.maxErrorShare;
    steps.push({
      offeredPerSecond: rate,
      answeredPerSecond: Math.round((result.answered / result.sent) * rate),
      p50Ms: measured.length ? Math.round(percentile(measured, 50) * 10) / 10 : Number.POSITIVE_INFINITY,
      p99Ms: Math.round(p99 * 10) / 10,
      errorShare: Math.round(errorShare * 100_000) / 100_000,
      held,
      answers: Object.fromEntries(
        Object.entries(result.latencies).map(([label, values]) => [label, values.length]),
      ),
    });
    process.stderr.write(
      `    ${rate}/s: p50 ${steps.at(-1)?.p50Ms} ms, p99 ${steps.at(-1)?.p99Ms} ms, errors ${errorShare} ${held ? "✓" : "✗"}\n`,
    );
    return held;
  };
  // One broken step may be a hiccup of the machine (a collector's pause, a stalled sync): the same rate
  // runs once more, and only a second break in a row counts.
  const holds = async (rate: number) => {
    for (let tried = 0; tried < (bounds.tries ?? 2); tried++) if (await run(rate)) return true;
    return false;
  };

  let sustained = 0;
  let broken: number | undefined;
  for (let rate = bounds.startRate; rate <= bounds.maxRate; rate = Math.round(rate * bounds.factor)) {
    if (!(await holds(rate))) {
      broken = rate;
      break;
    }
    sustained = rate;
  }
  // A start rate that broke says only "below it": step down until a rate holds, then bisect up to the broken one.
  if (sustained === 0 && broken !== undefined)
    for (
      let rate = Math.round(broken / bounds.factor);
      rate >= bounds.minRate;
      rate = Math.round(rate / bounds.factor)
    ) {
      if (await holds(rate)) {
        sustained = rate;
        break;
      }
      broken = rate;
    }
  while (sustained > 0 && broken !== undefined && (broken - sustained) / sustained > bounds.resolution) {
    const rate = Math.round((sustained + broken) / 2);
    if (await holds(rate)) sustained = rate;
    else broken = rate;
  }
  return { sustainedPerSecond: sustained, steps };
}
