import type { AddressInfo } from "node:net";
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { readBody } from "./body.ts";
import { errorReply } from "./problem.ts";
import { createHttpServer, type HttpLimits } from "./server.ts";

const limits: HttpLimits = {
  headersTimeoutMs: 300,
  requestTimeoutMs: 800,
  keepAliveTimeoutMs: 500,
  maxConnections: 3,
  maxConnectionsPerAddress: 3,
};

const servers: ReturnType<typeof createHttpServer>[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** A server whose one route echoes the body it read (as the purchase route reads it). */
async function echoServer(bounds: HttpLimits = limits): Promise<number> {
  const server = createHttpServer((req, res) => {
    readBody(req).then(
      (body) => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end(body);
      },
      (error) => {
        const reply = errorReply(error, "trace-0000", () => {});
        res.writeHead(reply.status, reply.headers);
        res.end(reply.body);
      },
    );
  }, bounds);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

async function open(port: number, localAddress = "127.0.0.1"): Promise<Socket> {
  const socket = connect({ port, host: "127.0.0.1", localAddress });
  await new Promise((resolve) => socket.once("connect", resolve));
  return socket;
}

/** Everything the server sends until it closes the connection. */
function untilClosed(socket: Socket): Promise<string> {
  const chunks: Buffer[] = [];
  socket.on("data", (chunk) => chunks.push(chunk));
  return new Promise((resolve) => socket.once("close", () => resolve(Buffer.concat(chunks).toString())));
}

describe("the API's HTTP server, against slow and greedy clients", () => {
  it("cuts off a client that never finishes its headers", async () => {
    const socket = await open(await echoServer());
    socket.write("POST /v1/purchases HTTP/1.1\r\nhost: x\r\n");
    const answer = await untilClosed(socket);
    expect(answer === "" || answer.startsWith("HTTP/1.1 408")).toBe(true);
  });

  it("answers 408 and closes when a body never completes", async () => {
    const socket = await open(await echoServer());
    socket.write('POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{"activityId":');
    expect(await untilClosed(socket)).toMatch(/^HTTP\/1\.1 408/);
  });

  it("answers 413 to an oversized chunked body and closes the connection instead of draining it", async () => {
    const socket = await open(await echoServer());
    const chunk = "x".repeat(20 * 1024);
    socket.write(
      `POST / HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n${chunk.length.toString(16)}\r\n${chunk}\r\n`,
    );
    const answer = await untilClosed(socket);
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
    expect(answer.toLowerCase()).toContain("connection: close");
  });

  it("keeps a well-behaved keep-alive client", async () => {
    const socket = await open(await echoServer());
    const first = new Promise<string>((resolve) => socket.once("data", (chunk) => resolve(chunk.toString())));
    socket.write("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}");
    expect(await first).toMatch(/^HTTP\/1\.1 200[\s\S]*Connection: keep-alive/);
    expect(socket.destroyed).toBe(false);
    socket.destroy();
  });

  it("refuses connections past the cap with a 503 problem and closes them", async () => {
    const port = await echoServer();
    const held = [await open(port), await open(port), await open(port)];
    // The held connections are counted once the server has served a request on each.
    for (const socket of held) {
      const answered = new Promise((resolve) => socket.once("data", resolve));
      socket.write("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n");
      await answered;
    }
    const answer = await untilClosed(await open(port));
    expect(answer).toMatch(/^HTTP\/1\.1 503/);
    expect(answer).toContain("retry-after: 1");
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toMatchObject({
      status: 503,
      code: "UNAVAILABLE",
      detail: "too many open connections",
    });
    for (const socket of held) socket.destroy();
  });

  it("refuses one address past its own cap, so a single client cannot hold every connection; another address still gets in", async () => {
    const port = await echoServer({ ...limits, maxConnections: 10, maxConnectionsPerAddress: 2 });
    const served = async (socket: Socket) => {
      const answered = new Promise<string>((resolve) =>
        socket.once("data", (chunk) => resolve(chunk.toString())),
      );
      socket.write("POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n");
      return answered;
    };
    const held = [await open(port), await open(port)];
    for (const socket of held) expect(await served(socket)).toMatch(/^HTTP\/1\.1 200/);
    const refused = await untilClosed(await open(port));
    expect(refused).toMatch(/^HTTP\/1\.1 503/);
    expect(refused).toContain("too many open connections from one address");
    const other = await open(port, "127.0.0.2");
    expect(await served(other)).toMatch(/^HTTP\/1\.1 200/);
    for (const socket of [...held, other]) socket.destroy();
  });

  it("settles the body read of a client that goes away mid-body", async () => {
    let settled: (outcome: string) => void = () => {};
    const outcome = new Promise<string>((resolve) => {
      settled = resolve;
    });
    const server = createHttpServer((req) => {
      readBody(req).then(
        () => settled("resolved"),
        (error: Error) => settled(`rejected: ${error.message}`),
      );
    }, limits);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const socket = await open((server.address() as AddressInfo).port);
    socket.write('POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{"activityId":');
    // Once the server holds the partial body, the client vanishes.
    await new Promise((resolve) => setImmediate(resolve));
    socket.destroy();
    expect(await outcome).toMatch(/^rejected/);
  });
});
