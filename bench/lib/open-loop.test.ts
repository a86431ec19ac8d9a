import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { percentile } from "./load.ts";
import { findCeiling, runOpenLoad } from "./open-loop.ts";

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** A server that answers one request at a time, each `serviceMs` after the previous answer. */
async function serialServer(serviceMs: number): Promise<string> {
  let free = 0;
  const server = createServer((_, response) => {
    const at = Math.max(Date.now(), free) + serviceMs;
    free = at;
    setTimeout(() => response.end("ok"), at - Date.now());
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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
    expect(result.answered + result.timedOut).toBeGreaterThanOrEqual(result.sent);
  });

  it("finds the ceiling: the last rate whose p99 held, stopping at the first that broke", async () => {
    const rates: number[] = [];
    const ceiling = await findCeiling(
      async (rate) => {
        rates.push(rate);
        const ms = rate > 400 ? 500 : 10;
        return {
          offeredPerSecond: rate,
          sent: 100,
          answered: 100,
          timedOut: 0,
          latencies: { "201": Array(100).fill(ms) },
        };
      },
      {
        startRate: 100,
        factor: 2,
        maxRate: 10_000,
        p99Ms: 200,
        maxErrorShare: 0.001,
        measured: (label) => label === "201",
        failed: (label) => label.startsWith("5"),
      },
    );
    expect(rates).toEqual([100, 200, 400, 800]);
    expect(ceiling.sustainedPerSecond).toBe(400);
    expect(ceiling.steps.map((step) => step.held)).toEqual([true, true, true, false]);
  });
});
