import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { runLoad } from "./load.ts";

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

describe("runLoad with pauses (a flood of clients)", () => {
  it("sends each client's views at random times: no waves of every client at once", async () => {
    // When each request reached the server, per client connection.
    const arrivals = new Map<Socket, number[]>();
    const server = createServer((request, response) => {
      const times = arrivals.get(request.socket) ?? [];
      times.push(performance.now());
      arrivals.set(request.socket, times);
      response.end("ok");
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const thinkMs = 300;
    const started = performance.now();
    await runLoad(url, Number.POSITIVE_INFINITY, 100, () => ({ method: "GET", path: "/" }), {
      stop: () => performance.now() - started > 2_000,
      thinkMs,
    });

    const clients = [...arrivals.values()];
    expect(clients).toHaveLength(100);
    // With one fixed pause, clients that started together send together for ever: a flood in waves.
    // Each client's first view comes at its own time within a pause...
    const firsts = clients.map((times) => times[0]);
    expect(Math.max(...firsts) - Math.min(...firsts)).toBeGreaterThan(thinkMs / 2);
    // ...and the pauses vary as independent clients' do (exponential: as much spread as mean).
    const gaps = clients.flatMap((times) => times.slice(1).map((at, i) => at - times[i]));
    const mean = gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length;
    const spread = Math.sqrt(gaps.reduce((sum, gap) => sum + (gap - mean) ** 2, 0) / gaps.length);
    expect(mean).toBeGreaterThan(thinkMs / 2);
    expect(spread / mean).toBeGreaterThan(0.5);
  });
});
