import { signJwt } from "@flashgate/auth";
import { createSale, freshIds, idempotencyKey, problemOf, userToken } from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

describe("bad input never yields a 500", () => {
  let api: ApiHarness;
  let sale: { activityId: number; skuId: number };
  beforeAll(async () => {
    // No maintainer writes this tier's Redis: the burst below reaches the rate limit as the same buyer,
    // whatever CDC would otherwise apply meanwhile (their first order as a buyer field).
    api = await startApi({ env: { RATE_LIMIT: "5", RATE_WINDOW_MS: "10000" } });
    sale = freshIds();
    await createSale(api.pool, { ...sale, units: 100 });
    await api.load(sale.activityId, sale.skuId);
  });
  afterAll(async () => api.close());

  const post = (headers: Record<string, string>, body: string) =>
    fetch(`${api.url}/v1/purchases`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });

  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const exp = () => Math.floor(Date.now() / 1000) + 600;

  it.each([
    ["no token", () => ({}), 401, "UNAUTHORIZED"],
    ["not a bearer", () => ({ authorization: "Basic Zm9vOmJhcg==" }), 401, "UNAUTHORIZED"],
    [
      "forged signature",
      () => ({
        authorization: `Bearer ${signJwt("another-secret-of-enough-length", { sub: "1", exp: exp() })}`,
      }),
      401,
      "UNAUTHORIZED",
    ],
    [
      "alg none",
      () => ({
        authorization: `Bearer ${b64({ alg: "none", typ: "JWT" })}.${b64({ sub: "1", exp: exp() })}.`,
      }),
      401,
      "UNAUTHORIZED",
    ],
    [
      "HS512 header",
      () => ({
        authorization: `Bearer ${b64({ alg: "HS512", typ: "JWT" })}.${b64({ sub: "1", exp: exp() })}.abc`,
      }),
      401,
      "UNAUTHORIZED",
    ],
    [
      "expired",
      () => ({ authorization: `Bearer ${signJwt(api.config.AUTH_JWT_SECRET, { sub: "1", exp: 1000 })}` }),
      401,
      "UNAUTHORIZED",
    ],
    [
      "no exp",
      () => ({ authorization: `Bearer ${signJwt(api.config.AUTH_JWT_SECRET, { sub: "1" } as never)}` }),
      401,
      "UNAUTHORIZED",
    ],
    ["garbage token", () => ({ authorization: "Bearer not.a.jwt.at.all" }), 401, "UNAUTHORIZED"],
    [
      "sub not a user id",
      () => ({
        authorization: `Bearer ${signJwt(api.config.AUTH_JWT_SECRET, { sub: "alice", exp: exp() })}`,
      }),
      401,
      "UNAUTHORIZED",
    ],
  ])("%s → %i", async (_name, headers, status, code) => {
    const response = await post({ ...headers(), "idempotency-key": idempotencyKey() }, JSON.stringify(sale));
    expect(response.status).toBe(status);
    expect(response.headers.get("content-type")).toContain("application/problem+json");
    expect(await response.json()).toMatchObject({ status, code });
  });

  const auth = () => ({ authorization: `Bearer ${userToken(api.config.AUTH_JWT_SECRET, 5)}` });
  it.each([
    ["malformed JSON", "{not json", 400],
    ["wrong types", JSON.stringify({ activityId: "1", skuId: true }), 400],
    ["negative id", JSON.stringify({ activityId: -1, skuId: 1 }), 400],
    ["huge id", JSON.stringify({ activityId: 1e30, skuId: 1 }), 400],
    ["fractional id", JSON.stringify({ activityId: 1.5, skuId: 1 }), 400],
    ["extra field", JSON.stringify({ activityId: 1, skuId: 1, price: 0 }), 400],
    ["array body", "[]", 400],
    ["body over 16 KiB", JSON.stringify({ activityId: 1, skuId: 1, pad: "x".repeat(17 * 1024) }), 413],
  ])("%s → %i", async (_name, body, status) => {
    const response = await post({ ...auth(), "idempotency-key": idempotencyKey() }, body);
    expect(response.status).toBe(status);
    const problem = await problemOf(response);
    expect(problem).toMatchObject({ status, code: "INVALID_REQUEST" });
    expect(problem.traceId).toBeTruthy();
  });

  it.each([
    ["missing", undefined],
    ["too short", "abc"],
    ["bad characters", "key with spaces!"],
    ["too long", "k".repeat(65)],
  ])("Idempotency-Key %s → 400", async (_name, key) => {
    const headers: Record<string, string> = auth();
    if (key) headers["idempotency-key"] = key;
    const response = await post(headers, JSON.stringify(sale));
    expect(response.status).toBe(400);
    expect((await problemOf(response)).detail).toMatch(/Idempotency-Key/);
  });

  it("the caller's X-Request-Id is the problem's traceId and is echoed; a bad one is replaced", async () => {
    const traced = await post(
      { ...auth(), "idempotency-key": "k", "x-request-id": "trace-abc-123" },
      JSON.stringify(sale),
    );
    expect(traced.headers.get("x-request-id")).toBe("trace-abc-123");
    expect((await problemOf(traced)).traceId).toBe("trace-abc-123");
    const replaced = await post(
      { ...auth(), "idempotency-key": "k", "x-request-id": "bad id with spaces" },
      JSON.stringify(sale),
    );
    const traceId = replaced.headers.get("x-request-id");
    expect(traceId).toMatch(/^[0-9a-f-]{36}$/);
    expect((await problemOf(replaced)).traceId).toBe(traceId);
  });

  it("a body sent in several packets is read whole", async () => {
    const { request } = await import("node:http");
    const body = JSON.stringify(sale);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${api.url}/v1/purchases`, {
        method: "POST",
        headers: { ...auth(), "idempotency-key": idempotencyKey(), "content-type": "application/json" },
      });
      req.on("response", (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      req.on("error", reject);
      req.flushHeaders();
      req.write(body.slice(0, 5));
      setTimeout(() => req.end(body.slice(5)), 50);
    });
    expect(status).toBe(201);
  });

  it("a per-user burst beyond the limit gets 429 with Retry-After", async () => {
    const results = [];
    for (let i = 0; i < 8; i++)
      results.push(await api.purchase(31337, { activityId: sale.activityId, skuId: sale.skuId }));
    const limited = results.filter((r) => r.status === 429);
    expect(limited.length).toBe(3);
    expect(Number(limited[0].headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(limited[0].body.code).toBe("RATE_LIMITED");
  });
});
