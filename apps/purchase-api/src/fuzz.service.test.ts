import { createHmac } from "node:crypto";
import { signJwt, signPayload } from "@flashgate/auth";
import { adminToken, createSale, freshIds, userToken } from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import fc from "fast-check";
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Property-based fuzzing of every route: whatever arrives, the answer is never a 500 and never shows a
 * stack, SQL or a secret, and nothing changes in MySQL or Redis except what a legitimate request does.
 */
describe("fuzzing every route", () => {
  let api: ApiHarness;
  let sale: { activityId: number; skuId: number };
  const tried = new Map<string, number>();
  const count = (kind: string, n = 1) => tried.set(kind, (tried.get(kind) ?? 0) + n);

  beforeAll(async () => {
    api = await startApi({ env: { RATE_LIMIT: "100000" } });
    sale = freshIds();
    await createSale(api.pool, { ...sale, units: 1000 });
    await api.load(sale.activityId, sale.skuId);
  });
  afterAll(async () => {
    process.stdout.write(
      `fuzz: inputs tried per class — ${[...tried].map(([kind, n]) => `${kind} ${n}`).join(", ")}\n`,
    );
    await api.close();
  });

  const secrets = () => [
    api.config.AUTH_JWT_SECRET,
    api.config.ADMIN_JWT_SECRET,
    api.config.PAYMENT_WEBHOOK_SECRET,
  ];

  /** What no answer may contain, whatever was asked. */
  function expectSafe(status: number, body: string) {
    expect(status < 500 || status === 503, `${status} ${body}`).toBe(true);
    expect(body).not.toMatch(
      /(\n|\\n)\s+at \S|\bSELECT\b|\bINSERT INTO\b|\bUPDATE\b.*\bSET\b|ER_[A-Z_]+|sqlMessage/,
    );
    for (const secret of secrets()) expect(body).not.toContain(secret);
  }

  async function send(method: string, path: string, headers: Record<string, string>, body?: string) {
    const response = await fetch(`${api.url}${path}`, {
      method,
      headers,
      body: method === "GET" || method === "HEAD" ? undefined : body,
    });
    const text = await response.text();
    expectSafe(response.status, text);
    return { status: response.status, text };
  }

  /** Rows and keys a request could create or change; compared before and after the fuzzing. */
  async function fingerprint() {
    const [rows] = await api.pool.query<RowDataPacket[]>(
      `SELECT (SELECT COUNT(*) FROM sale_order) AS orders, (SELECT COUNT(*) FROM payment_event) AS payments,
              (SELECT COUNT(*) FROM activity) AS activities, (SELECT COUNT(*) FROM sale_stock) AS skus,
              (SELECT COALESCE(SUM(available), 0) FROM sale_stock) AS available`,
    );
    const counts = Object.fromEntries(Object.entries(rows[0]).map(([name, value]) => [name, Number(value)]));
    return { orders: 0, available: 0, ...counts, redisKeys: await api.redis.dbsize() };
  }

  const segment = fc.oneof(
    fc.string({ unit: "grapheme", maxLength: 12 }).map(encodeURIComponent),
    fc.constantFrom("0", "-1", "1e3", "9007199254740993", "99999999999999999999", "..", "%00", "%2F", "1.5"),
    fc.nat().map(String),
  );
  const path = fc.oneof(
    fc.tuple(segment).map(([r]) => `/v1/purchases/${r}`),
    fc.constant("/v1/purchases"),
    fc.tuple(segment, segment).map(([a, s]) => `/v1/activities/${a}/skus/${s}`),
    fc.constant("/v1/payments/callback"),
    fc.tuple(segment).map(([a]) => `/admin/v1/activities/${a}`),
    fc.tuple(segment, segment).map(([a, s]) => `/admin/v1/activities/${a}/skus/${s}`),
    fc.tuple(segment, segment).map(([a, s]) => `/admin/v1/activities/${a}/skus/${s}/restock`),
    fc.tuple(segment).map(([r]) => `/admin/v1/orders/${r}/close`),
    fc.tuple(segment, segment).map(([a, b]) => `/${a}/${b}`),
  );
  const nested = (depth: number): string => `${"[".repeat(depth)}1${"]".repeat(depth)}`;
  const body = fc.oneof(
    fc.json(),
    fc.string({ unit: "grapheme", maxLength: 200 }),
    fc
      .record({ activityId: fc.oneof(fc.integer(), fc.double(), fc.string()), skuId: fc.anything() })
      .map((v) => {
        try {
          return JSON.stringify(v);
        } catch {
          return "{}";
        }
      }),
    fc.constantFrom(
      '{"activityId":1,"activityId":2,"skuId":1}',
      '{"activityId":9007199254740993,"skuId":1}',
      '{"initialStock":1e400,"priceCents":1,"currency":"EUR"}',
      '{"delta":-9007199254740993,"reason":"x"}',
      `{"a":${nested(5000)}}`,
      "\u0000\uffff\ud800",
    ),
    // Up to the 16 KiB limit (an oversized body's 413 closes the connection: server.test.ts covers it).
    fc.nat({ max: 16_000 }).map((n) => "x".repeat(n)),
  );
  const authorization = fc.oneof(
    fc.constant(undefined),
    fc.string({ maxLength: 80 }).map((s) => `Bearer ${s}`),
    fc.constant("user"),
    fc.constant("admin"),
  );

  it("random methods, paths, headers and bodies: never a 500, nothing leaked, nothing changed unless bought", async () => {
    const before = await fingerprint();
    let created = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"),
        path,
        body,
        authorization,
        fc.option(fc.string({ maxLength: 70 }), { nil: undefined }),
        async (method, target, payload, auth, key) => {
          count("routes");
          const headers: Record<string, string> = { "content-type": "application/json" };
          if (auth === "user")
            headers.authorization = `Bearer ${userToken(api.config.AUTH_JWT_SECRET, 424242)}`;
          else if (auth === "admin")
            headers.authorization = `Bearer ${adminToken(api.config.ADMIN_JWT_SECRET, "fuzz")}`;
          else if (auth) headers.authorization = auth.replace(/[^\x20-\x7e]/g, "?");
          if (key !== undefined) headers["idempotency-key"] = key.replace(/[^\x20-\x7e]/g, "?");
          // Admin writes are legitimate effects; the fuzz sends them only with bodies that cannot be valid.
          const write = method !== "GET" && target.startsWith("/admin/v1/") && auth === "admin";
          const { status } = await send(method, target, headers, write ? `${payload}!` : payload);
          if (status === 201 && target === "/v1/purchases") created++;
        },
      ),
      { numRuns: 3000 },
    );
    const after = await fingerprint();
    expect(after.orders).toBe(before.orders + created);
    expect({ ...after, orders: 0, available: 0, redisKeys: 0 }).toEqual({
      ...before,
      orders: 0,
      available: 0,
      redisKeys: 0,
    });
    expect(after.available).toBe(before.available - created);
  });

  it("token attacks: every forged, altered or misplaced token is refused", async () => {
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const exp = () => Math.floor(Date.now() / 1000) + 600;
    const hmac = (alg: string, secret: string, claims: object) => {
      const head = `${b64({ alg, typ: "JWT" })}.${b64(claims)}`;
      const hash = { HS256: "sha256", HS384: "sha384", HS512: "sha512", RS256: "sha256" }[alg] ?? "sha256";
      return `${head}.${createHmac(hash, secret).update(head).digest("base64url")}`;
    };
    const user = api.config.AUTH_JWT_SECRET;
    const admin = api.config.ADMIN_JWT_SECRET;
    const valid = userToken(user, 7);
    const [h, p, s] = valid.split(".");
    const attacks: [string, string, string][] = [
      [
        "alg none",
        `${b64({ alg: "none", typ: "JWT" })}.${b64({ sub: "7", exp: exp() })}.`,
        "/v1/purchases/x-12345678",
      ],
      ["HS384", hmac("HS384", user, { sub: "7", exp: exp() }), "/v1/purchases/x-12345678"],
      ["HS512", hmac("HS512", user, { sub: "7", exp: exp() }), "/v1/purchases/x-12345678"],
      [
        "RS256 keyed by the secret",
        hmac("RS256", user, { sub: "7", exp: exp() }),
        "/v1/purchases/x-12345678",
      ],
      ["wrong secret", signJwt("x".repeat(40), { sub: "7", exp: exp() }), "/v1/purchases/x-12345678"],
      [
        "expired",
        signJwt(user, { sub: "7", exp: Math.floor(Date.now() / 1000) - 120 }),
        "/v1/purchases/x-12345678",
      ],
      ["future nbf", signJwt(user, { sub: "7", exp: exp(), nbf: exp() }), "/v1/purchases/x-12345678"],
      ["tampered sub", `${h}.${b64({ sub: "8", exp: exp() })}.${s}`, "/v1/purchases/x-12345678"],
      ["user token on admin routes", valid, `/admin/v1/activities/${sale.activityId}/skus/${sale.skuId}`],
      [
        "admin claims signed with the user secret",
        signJwt(user, { sub: "mallory", role: "admin", exp: exp() }),
        `/admin/v1/activities/${sale.activityId}/skus/${sale.skuId}`,
      ],
      [
        "admin secret without the admin role",
        signJwt(admin, { sub: "mallory", exp: exp() }),
        `/admin/v1/activities/${sale.activityId}/skus/${sale.skuId}`,
      ],
    ];
    for (const [name, token, target] of attacks) {
      count("token attacks");
      const { status } = await send("GET", target, { authorization: `Bearer ${token}` });
      expect([401, 403], name).toContain(status);
    }
    // Any one character of a valid token changed: refused (or, where base64 decodes the same, the same user).
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: valid.length - 1 }),
        fc.constantFrom(..."AZaz09-_.=!%"),
        async (at, char) => {
          fc.pre(valid[at] !== char);
          count("token mutations");
          const token = `${valid.slice(0, at)}${char}${valid.slice(at + 1)}`;
          const { status } = await send("GET", "/v1/purchases/x-12345678", {
            authorization: `Bearer ${token}`,
          });
          expect(status).toBe(401);
        },
      ),
      { numRuns: 500 },
    );
    expect(`${h}.${p}.${s}`).toBe(valid);
  });

  it("payment attacks: forged, replayed, stale and re-signed callbacks change nothing", async () => {
    const buy = await api.purchase(777_001, sale);
    expect(buy.status).toBe(201);
    const order = buy.body as { orderId: string; amountCents: number; currency: string };
    const event = JSON.stringify({
      eventId: `fuzz-${order.orderId}`,
      orderId: order.orderId,
      status: "SUCCEEDED",
      amountCents: order.amountCents,
      currency: order.currency,
    });
    const post = (signature: string, raw = event) =>
      send(
        "POST",
        "/v1/payments/callback",
        { "content-type": "application/json", "flashgate-signature": signature },
        raw,
      );
    const secret = api.config.PAYMENT_WEBHOOK_SECRET;
    const refusals: [string, string, string?][] = [
      ["forged", `t=${Math.floor(Date.now() / 1000)},v1=${"0".repeat(64)}`],
      ["stale", signPayload(secret, event, Math.floor(Date.now() / 1000) - 301)],
      // Past the 300 s tolerance by more than a second boundary crossed between signing and checking.
      ["from the future", signPayload(secret, event, Math.floor(Date.now() / 1000) + 310)],
      ["re-signed with another secret", signPayload("another-secret-of-enough-length-000", event)],
      ["body altered after signing", signPayload(secret, event), event.replace("SUCCEEDED", "FAILED")],
    ];
    for (const [name, signature, raw] of refusals) {
      count("payment attacks");
      expect((await post(signature, raw)).status, name).toBe(401);
    }
    const first = await post(signPayload(secret, event));
    const replayed = await post(signPayload(secret, event));
    count("payment attacks", 2);
    expect(JSON.parse(first.text)).toMatchObject({ status: "processed", orderState: "PAID" });
    expect(JSON.parse(replayed.text)).toMatchObject({ status: "already_processed" });
    const [rows] = await api.pool.query<RowDataPacket[]>(
      "SELECT COUNT(*) AS n FROM payment_event WHERE order_id = ?",
      [order.orderId],
    );
    expect(Number(rows[0].n)).toBe(1);
  });
});
