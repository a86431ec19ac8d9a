import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { clientTypes, clientTypesFile } from "../../../scripts/client-types.ts";
import { ApiProblem, createClient, type Order } from "./client.ts";

const order: Order = {
  orderId: "8f1c6f1e-1111-4a5b-9c3d-000000000001",
  requestId: "key-00000001",
  activityId: 1,
  skuId: 2,
  userId: 7,
  state: "PENDING",
  amountCents: 1999,
  currency: "EUR",
  expiresAt: "2026-12-01T00:15:00.000Z",
};

/** A scripted HTTP server: each request gets the next answer, and is recorded. */
async function scripted(answers: ((request: IncomingMessage, response: ServerResponse) => void)[]) {
  const seen: { method?: string; url?: string; key?: string; auth?: string; body: string }[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      seen.push({
        method: request.method,
        url: request.url,
        key: request.headers["idempotency-key"] as string | undefined,
        auth: request.headers.authorization,
        body,
      });
      (answers.shift() ?? ((_, res) => res.writeHead(500).end()))(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  servers.push(server);
  return { url, seen };
}
const servers: ReturnType<typeof createServer>[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}) =>
  (_: IncomingMessage, response: ServerResponse) =>
    response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
const problem = (status: number, code: string, headers: Record<string, string> = {}) =>
  json(
    status,
    { type: "x", title: "t", status, detail: `${code} detail`, code, traceId: "trace-1" },
    headers,
  );
const dropConnection = (request: IncomingMessage) => request.socket.destroy();

describe("the typed client", () => {
  it("follows a queued purchase (202) with long polls on its ticket to the order, or to the refusal as a problem", async () => {
    const queued = { requestId: "key-00000001", state: "QUEUED", activityId: 1, skuId: 2 };
    const server = await scripted([
      json(202, queued, { location: "/v1/tickets/key-00000001" }),
      json(200, queued),
      json(200, { ...queued, state: "CREATED", order }),
      json(202, { ...queued, requestId: "key-00000002" }),
      json(200, {
        ...queued,
        requestId: "key-00000002",
        state: "REFUSED",
        refusal: { code: "ACTIVITY_NOT_OPEN", detail: "the sale is not open", status: 409 },
      }),
    ]);
    const client = createClient({ baseUrl: server.url, token: "user-token" });
    const bought = await client.purchase({ activityId: 1, skuId: 2 }, "key-00000001");
    expect(bought).toEqual({ order, created: true, queued: true, idempotencyKey: "key-00000001" });
    expect(server.seen.slice(1).map((request) => request.url)).toEqual([
      "/v1/tickets/key-00000001?wait=20",
      "/v1/tickets/key-00000001?wait=20",
    ]);
    const refused = await client.purchase({ activityId: 1, skuId: 2 }, "key-00000002").catch((e) => e);
    expect(refused).toBeInstanceOf(ApiProblem);
    expect([refused.status, refused.code]).toEqual([409, "ACTIVITY_NOT_OPEN"]);
  });

  it("retries a 503 and a lost connection with the same Idempotency-Key, honouring Retry-After", async () => {
    const server = await scripted([
      problem(503, "UNAVAILABLE", { "retry-after": "1" }),
      dropConnection,
      json(201, order),
    ]);
    const client = createClient({ baseUrl: server.url, token: "user-token", baseDelayMs: 1 });
    const started = Date.now();
    const result = await client.purchase({ activityId: 1, skuId: 2 });
    expect(result).toEqual({
      order,
      created: true,
      queued: false,
      idempotencyKey: expect.stringMatching(/^[A-Za-z0-9_-]{8,64}$/),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(server.seen.map((r) => [r.method, r.url, r.key, r.auth, JSON.parse(r.body)])).toEqual(
      Array(3).fill([
        "POST",
        "/v1/purchases",
        result.idempotencyKey,
        "Bearer user-token",
        { activityId: 1, skuId: 2 },
      ]),
    );
  });

  it("tells a retried purchase that found its order (200) from a new one, and gives up after its attempts", async () => {
    const replay = await scripted([json(200, order)]);
    expect(
      await createClient({ baseUrl: replay.url }).purchase({ activityId: 1, skuId: 2 }, "my-key-0001"),
    ).toEqual({
      order,
      created: false,
      queued: false,
      idempotencyKey: "my-key-0001",
    });
    const down = await scripted([problem(503, "UNAVAILABLE"), problem(503, "UNAVAILABLE"), json(201, order)]);
    const failure = await createClient({ baseUrl: down.url, attempts: 2, baseDelayMs: 1 })
      .purchase({ activityId: 1, skuId: 2 })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiProblem);
    expect(failure).toMatchObject({ status: 503, code: "UNAVAILABLE", traceId: "trace-1" });
    expect(down.seen).toHaveLength(2);
  });

  it("answers every other problem at once as an ApiProblem with its code; a restock is never retried", async () => {
    const server = await scripted([
      problem(409, "SOLD_OUT"),
      problem(429, "RATE_LIMITED", { "retry-after": "3" }),
      problem(503, "UNAVAILABLE"),
    ]);
    const client = createClient({ baseUrl: server.url, token: () => "admin-token", baseDelayMs: 1 });
    await expect(client.purchase({ activityId: 1, skuId: 2 })).rejects.toMatchObject({
      status: 409,
      code: "SOLD_OUT",
    });
    await expect(client.purchase({ activityId: 1, skuId: 2 })).rejects.toMatchObject({
      code: "RATE_LIMITED",
      retryAfterS: 3,
    });
    await expect(client.admin.restock(1, 2, 5, "count")).rejects.toMatchObject({ status: 503 });
    expect(server.seen.map((r) => [r.method, r.url])).toEqual([
      ["POST", "/v1/purchases"],
      ["POST", "/v1/purchases"],
      ["POST", "/admin/v1/activities/1/skus/2/restock"],
    ]);
    expect(JSON.parse(server.seen[2].body)).toEqual({ delta: 5, reason: "count" });
  });

  it("behind several instances: each retry goes to the next, a 429 waits its Retry-After when asked, every attempt is told", async () => {
    const first = await scripted([problem(429, "RATE_LIMITED", { "retry-after": "1" }), dropConnection]);
    const second = await scripted([problem(503, "UNAVAILABLE"), json(201, order)]);
    const attempts: unknown[] = [];
    const client = createClient({
      baseUrl: [first.url, second.url],
      baseDelayMs: 1,
      retryRateLimited: true,
      onAttempt: ({ baseUrl, status, code }) => attempts.push([baseUrl, status, code]),
    });
    // A caller's richer object (a sale with its supply, say): only the SKU is sent.
    const { idempotencyKey } = await client.purchase({ activityId: 1, skuId: 2, supply: 30 } as never);
    expect(JSON.parse(second.seen[1].body)).toEqual({ activityId: 1, skuId: 2 });
    expect(attempts).toEqual([
      [first.url, 429, "RATE_LIMITED"],
      [second.url, 503, "UNAVAILABLE"],
      [first.url, "network", undefined],
      [second.url, 201, undefined],
    ]);
    expect([...first.seen, ...second.seen].map((r) => r.key)).toEqual(Array(4).fill(idempotencyKey));

    // Out of time, a retried call ends with its last answer, however many attempts it had left.
    const down = await scripted(Array(50).fill(problem(503, "UNAVAILABLE", { "retry-after": "1" })));
    await expect(
      createClient({ baseUrl: down.url, attempts: Number.POSITIVE_INFINITY, giveUpAfterMs: 1500 }).purchase({
        activityId: 1,
        skuId: 2,
      }),
    ).rejects.toMatchObject({ status: 503 });
    expect(down.seen.length).toBeGreaterThanOrEqual(2);
    expect(down.seen.length).toBeLessThanOrEqual(3);
  });

  it("its types are generated from the API's current OpenAPI document (npm run client:types)", async () => {
    expect(readFileSync(clientTypesFile, "utf8")).toBe(await clientTypes());
  });
});
