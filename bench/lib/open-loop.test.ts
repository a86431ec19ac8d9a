import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { percentile } from "./load.ts";
import { findCeiling, runOpenLoad, searchStart } from "./open-loop.ts";

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** Listens on a free port (closed after the test); its URL. */
async function listening(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A server that answers one request at a time, each `serviceMs` after the previous answer. */
function serialServer(serviceMs: number): Promise<string> {
  let free = 0;
  return listening(
    createServer((_, response) => {
      const at = Math.max(Date.now(), free) + serviceMs;
      free = at;
      setTimeout(() => response.end("ok"), at - Date.now());
    }),
  );
}

const get = () => ({ method: "GET" as const, path: "/" });

describe("the open-loop load", () => {
  it("sends every arrival of the rate and, below the server's capacity, all are answered in time", async () => {
    const url = await serialServer(1);
    const result = await runOpenLoad(
      [url],
      { rate: 100, durationMs: 500, connections: 4, timeoutMs: 2000 },
      get,
    );
    expect(result.sent).toBe(50);
    expect(result.answered).toBe(50);
    expect(result.timedOut).toBe(0);
    expect(result.latencies["200"]).toHaveLength(50);
  });

  it("sends the warm-up's arrivals at the rate but counts only those after it", async () => {
    const indices: number[] = [];
    const url = await serialServer(1);
    const result = await runOpenLoad(
      [url],
      { rate: 100, durationMs: 500, warmupMs: 300, connections: 4, timeoutMs: 2000 },
      (index) => {
        indices.push(index);
        return get();
      },
    );
    expect(indices).toHaveLength(80);
    expect(result.sent).toBe(50);
    expect(result.answered).toBe(50);
    expect(result.latencies["200"]).toHaveLength(50);
  });

  it("never sends on a socket the server closed while it sat idle", async () => {
    // The server closes a keep-alive socket idle for 100 ms after an answer. The first answer and one in
    // twenty after it take 300 ms: every socket serves at first, most then sit idle (one keeps up with
    // the rate), and the next slow answer's arrivals need them again.
    let served = 0;
    const server = createServer((_, response) => {
      served += 1;
      setTimeout(() => response.end("ok"), served === 1 || served % 20 === 0 ? 300 : 1);
    });
    server.keepAliveTimeout = 100;
    // Node 24 waits a further second past keepAliveTimeout unless told not to.
    Object.assign(server, { keepAliveTimeoutBuffer: 0 });
    const url = await listening(server);
    const result = await runOpenLoad(
      [url],
      { rate: 50, durationMs: 2000, connections: 8, timeoutMs: 2000 },
      get,
    );
    expect(result.timedOut).toBe(0);
    expect(result.answered).toBe(100);
  });

  it("sends a request again, once, when the server closed its socket without reading it", async () => {
    // Each of the first eight sockets serves one answer; the server then drops its next request unread,
    // as a server closing an idle keep-alive socket does to a request crossing its FIN. Each request is
    // dropped at most once (a resent one may land on another of those sockets and is read there).
    const served = new WeakMap<object, number>();
    const dropped = new Set<string>();
    let sockets = 0;
    const server = createServer((request, response) => {
      const count = served.get(request.socket) ?? 0;
      if (count === 0) sockets += 1;
      served.set(request.socket, count + 1);
      const path = request.url ?? "";
      if (count === 1 && sockets <= 8 && !dropped.has(path)) {
        dropped.add(path);
        request.socket.destroy();
      } else response.end("ok");
    });
    const url = await listening(server);
    const result = await runOpenLoad(
      [url],
      { rate: 100, durationMs: 500, connections: 8, timeoutMs: 2000 },
      (index) => ({ method: "GET" as const, path: `/${index}` }),
    );
    expect(dropped.size).toBeGreaterThan(0);
    expect(result.timedOut).toBe(0);
    expect(result.answered).toBe(50);
  });

  it("fails the run when the servers refuse the bench's own tokens (a 401 is never a design's figure)", async () => {
    const url = await listening(
      createServer((_, response) => {
        response.statusCode = 401;
        response.end('{"code":"UNAUTHORIZED"}');
      }),
    );
    await expect(
      runOpenLoad([url], { rate: 100, durationMs: 200, connections: 2, timeoutMs: 2000 }, get),
    ).rejects.toThrow(/401 UNAUTHORIZED/);
  });

  it("times each answer from when it was due: a server at a fifth of the rate shows its queue, not its service time", async () => {
    // 20 answers/s against 100 arrivals/s on one connection: timed from its send, each answer takes 50 ms.
    const url = await serialServer(50);
    const result = await runOpenLoad(
      [url],
      { rate: 100, durationMs: 1000, connections: 1, timeoutMs: 3000 },
      get,
    );
    const latencies = [...(result.latencies["200"] ?? [])].sort((a, b) => a - b);
    expect(percentile(latencies, 99)).toBeGreaterThan(1000);
    // Arrivals after the first three seconds' worth of service cannot be answered within the time-out.
    expect(result.timedOut).toBeGreaterThan(0);
    // Every arrival is counted once: answered within the time-out, or timed out (late or never answered).
    const inTime = latencies.filter((ms) => ms <= 3000).length;
    expect(result.timedOut).toBe(result.sent - inTime);
  });

  /** The ceiling search over steps whose every answer takes `ms(rate, ratesSoFar)`; the rates it ran. */
  async function searchCeiling(
    ms: (rate: number, rates: number[]) => number,
    resolution = 1,
    tries?: number,
    start = { startRate: 100, factor: 2 },
  ) {
    const rates: number[] = [];
    const ceiling = await findCeiling(
      async (rate) => {
        rates.push(rate);
        return {
          offeredPerSecond: rate,
          sent: 100,
          answered: 100,
          timedOut: 0,
          latencies: { "201": Array(100).fill(ms(rate, rates)) },
        };
      },
      {
        ...start,
        minRate: 10,
        resolution,
        tries,
        maxRate: 10_000,
        p99Ms: 200,
        maxErrorShare: 0.001,
        measured: (label) => label === "201",
        failed: (label) => label.startsWith("5"),
      },
    );
    return { rates, ceiling };
  }

  it("finds the ceiling: the last rate whose p99 held, stopping at the first that broke twice", async () => {
    const { rates, ceiling } = await searchCeiling((rate) => (rate > 400 ? 500 : 10));
    expect(rates).toEqual([100, 200, 400, 800, 800]);
    expect(ceiling.sustainedPerSecond).toBe(400);
    expect(ceiling.steps.map((step) => step.held)).toEqual([true, true, true, false, false]);
  });

  it("tries a broken rate once more: one hiccup of the machine does not end the search", async () => {
    const { rates, ceiling } = await searchCeiling((rate, ran) => {
      const hiccup = rate === 200 && ran.filter((r) => r === 200).length === 1;
      return hiccup || rate > 400 ? 500 : 10;
    });
    expect(rates).toEqual([100, 200, 200, 400, 800, 800]);
    expect(ceiling.sustainedPerSecond).toBe(400);
  });

  it("bisects between the last rate that held and the first that broke, to the resolution asked", async () => {
    // The true ceiling is 430/s: the ×2 steps alone would report 400.
    const { rates, ceiling } = await searchCeiling((rate) => (rate > 430 ? 500 : 10), 0.05);
    expect(rates).toEqual([100, 200, 400, 800, 800, 600, 600, 500, 500, 450, 450, 425, 438, 438]);
    expect(ceiling.sustainedPerSecond).toBe(425);
  });

  it("steps down from a start rate that broke until one holds, then bisects up to it", async () => {
    // The true ceiling is 70/s, below the start rate: "below 100/s" would say nothing.
    const { rates, ceiling } = await searchCeiling((rate) => (rate > 70 ? 500 : 10), 0.05);
    expect(rates).toEqual([100, 100, 50, 75, 75, 63, 69, 72, 72]);
    expect(ceiling.sustainedPerSecond).toBe(69);
  });

  it("reports 0 when no rate down to the least one asked for holds", async () => {
    const { rates, ceiling } = await searchCeiling(() => 500);
    expect(rates).toEqual([100, 100, 50, 50, 25, 25, 13, 13]);
    expect(ceiling.sustainedPerSecond).toBe(0);
  });

  it("starts a later round at the ceiling an earlier round found, stepping by 1.25", async () => {
    const first = { startRate: 100, factor: 2 };
    expect(searchStart(undefined, first)).toEqual(first);
    expect(searchStart(0, first)).toEqual(first);
    // An earlier round found 425/s; the true ceiling is now 470/s.
    const { rates, ceiling } = await searchCeiling(
      (rate) => (rate > 470 ? 500 : 10),
      0.05,
      2,
      searchStart(425, first),
    );
    expect(rates).toEqual([425, 531, 531, 478, 478, 452, 465]);
    expect(ceiling.sustainedPerSecond).toBe(465);
  });

  it("counts a rate broken at its first break when asked for one try (the quick run's smoke check)", async () => {
    const { rates, ceiling } = await searchCeiling((rate) => (rate > 400 ? 500 : 10), 1, 1);
    expect(rates).toEqual([100, 200, 400, 800]);
    expect(ceiling.sustainedPerSecond).toBe(400);
  });
});
