import { signJwt, signPayload } from "@flashgate/auth";
import { closeOrder } from "@flashgate/db";
import {
  adminToken,
  createSale,
  freshIds,
  problemOf,
  skuInDatabase,
  sold,
  userToken,
} from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

describe("payments and expiry", () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => api.close());

  const callback = (
    event: Record<string, unknown>,
    options: { timestampS?: number; tamper?: (raw: string) => string; secret?: string } = {},
  ) => {
    const raw = JSON.stringify(event);
    const signature = signPayload(
      options.secret ?? api.config.PAYMENT_WEBHOOK_SECRET,
      raw,
      options.timestampS,
    );
    return fetch(`${api.url}/v1/payments/callback`, {
      method: "POST",
      headers: { "content-type": "application/json", "flashgate-signature": signature },
      body: options.tamper ? options.tamper(raw) : raw,
    });
  };

  const buyMany = async (sale: { activityId: number; skuId: number }, users: number[]) => {
    const orders = await Promise.all(users.map((user) => api.purchase(user, sale)));
    expect(orders.every((o) => o.status === 201)).toBe(true);
    return orders.map((o) => o.body as { orderId: string; amountCents: number; currency: string });
  };

  it("200 orders where payment and expiry collide: each ends PAID or CLOSED, units released exactly once", async () => {
    const sale = freshIds();
    await createSale(api.pool, { ...sale, units: 200 });
    await api.load(sale.activityId, sale.skuId);
    const orders = await buyMany(
      sale,
      Array.from({ length: 200 }, (_, i) => 2_000_000 + i),
    );
    const pay = (order: (typeof orders)[number]) =>
      callback({
        eventId: `pay-${order.orderId}`,
        orderId: order.orderId,
        status: "SUCCEEDED",
        amountCents: order.amountCents,
        currency: order.currency,
      });
    // Even orders: the expiry worker and the payment fire at the same instant. Odd orders: the payment
    // lands first and the expiry still tries to close them.
    await Promise.all(
      orders.map(async (order, i) => {
        if (i % 2 === 0) await Promise.all([pay(order), closeOrder(api.pool, order.orderId)]);
        else {
          await pay(order);
          expect((await closeOrder(api.pool, order.orderId)).kind).toBe("not_pending");
        }
      }),
    );
    const ledger = await skuInDatabase(api.pool, sale.activityId, sale.skuId);
    expect(ledger.pending).toBe(0);
    expect(ledger.paid).toBeGreaterThan(0);
    expect(ledger.closed).toBeGreaterThan(0);
    expect(ledger.paid + ledger.closed).toBe(200);
    expect(ledger.available).toBe(ledger.closed);
    expect(ledger.available + sold(ledger)).toBe(200);
    const [refunds] = await api.pool.query(
      "SELECT COUNT(*) AS n FROM payment_event WHERE order_id IN (?) AND needs_refund",
      [orders.map((o) => o.orderId)],
    );
    expect(Number((refunds as { n: number }[])[0].n)).toBe(ledger.closed);
  });

  it("a duplicated callback is applied once; forged, altered and stale signatures get 401", async () => {
    const sale = freshIds();
    await createSale(api.pool, { ...sale, units: 5 });
    await api.load(sale.activityId, sale.skuId);
    const [order] = await buyMany(sale, [3_000_001]);
    const event = {
      eventId: `evt-${order.orderId}`,
      orderId: order.orderId,
      status: "SUCCEEDED",
      amountCents: order.amountCents,
      currency: order.currency,
    };

    const forged = await callback(event, { secret: "not-the-webhook-secret-at-all" });
    const altered = await callback(event, { tamper: (raw) => raw.replace('"SUCCEEDED"', '"FAILED"') });
    const stale = await callback(event, { timestampS: Math.floor(Date.now() / 1000) - 301 });
    for (const response of [forged, altered, stale]) {
      expect(response.status).toBe(401);
      expect((await problemOf(response)).code).toBe("UNAUTHORIZED");
    }

    const first = await (await callback(event)).json();
    const second = await (await callback(event)).json();
    expect(first).toMatchObject({ status: "processed", outcome: "PAID", orderState: "PAID" });
    expect(second).toMatchObject({ status: "already_processed", outcome: "PAID" });
    const [events] = await api.pool.query("SELECT COUNT(*) AS n FROM payment_event WHERE event_id = ?", [
      event.eventId,
    ]);
    expect(Number((events as { n: number }[])[0].n)).toBe(1);
  });

  it("the callback checks its signature header before reading the body, and reads at most 4 KiB", async () => {
    const big = "x".repeat(64 * 1024);
    const post = (headers: Record<string, string>, body: string) =>
      fetch(`${api.url}/v1/payments/callback`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body,
      });
    // A body too large for any reader, with no signature or a stale one: refused for the signature.
    const unsigned: Record<string, string>[] = [
      {},
      { "flashgate-signature": "t=1,v1=nothex" },
      { "flashgate-signature": signPayload(api.config.PAYMENT_WEBHOOK_SECRET, big, 1_000_000) },
    ];
    for (const headers of unsigned) {
      const refused = await post(headers, big);
      expect(refused.status).toBe(401);
      expect((await problemOf(refused)).code).toBe("UNAUTHORIZED");
    }
    // Correctly signed but larger than an event can be.
    const padded = JSON.stringify({ eventId: "e1", pad: "x".repeat(5 * 1024) });
    const oversized = await post(
      { "flashgate-signature": signPayload(api.config.PAYMENT_WEBHOOK_SECRET, padded) },
      padded,
    );
    expect(oversized.status).toBe(413);
  });

  it("a payment after closure keeps the order CLOSED and records a refund", async () => {
    const sale = freshIds();
    await createSale(api.pool, { ...sale, units: 5 });
    await api.load(sale.activityId, sale.skuId);
    const [order] = await buyMany(sale, [3_000_002]);
    expect((await closeOrder(api.pool, order.orderId)).kind).toBe("closed");
    const result = await (
      await callback({
        eventId: `late-${order.orderId}`,
        orderId: order.orderId,
        status: "SUCCEEDED",
        amountCents: order.amountCents,
        currency: order.currency,
      })
    ).json();
    expect(result).toMatchObject({ outcome: "REFUND_REQUIRED", orderState: "CLOSED" });
    const [rows] = await api.pool.query("SELECT needs_refund FROM payment_event WHERE order_id = ?", [
      order.orderId,
    ]);
    expect((rows as { needs_refund: number }[]).map((r) => Number(r.needs_refund))).toEqual([1]);
  });

  it("every SUCCEEDED payment not applied to its order is marked for refund, each recorded once", async () => {
    const sale = freshIds();
    await createSale(api.pool, { ...sale, units: 5 });
    await api.load(sale.activityId, sale.skuId);
    const [order] = await buyMany(sale, [3_000_003]);
    const base = { orderId: order.orderId, amountCents: order.amountCents, currency: order.currency };
    const cases = [
      { eventId: `amount-${order.orderId}`, ...base, status: "SUCCEEDED", amountCents: 1 },
      { eventId: `currency-${order.orderId}`, ...base, status: "SUCCEEDED", currency: "USD" },
      { eventId: `failed-${order.orderId}`, ...base, status: "FAILED" },
      {
        eventId: `unknown-${order.orderId}`,
        ...base,
        status: "SUCCEEDED",
        orderId: `nope-${order.orderId}`,
      },
      { eventId: `paid-${order.orderId}`, ...base, status: "SUCCEEDED" },
      { eventId: `twice-${order.orderId}`, ...base, status: "SUCCEEDED" },
    ];
    const answers = [];
    for (const event of cases) answers.push((await callback(event)).status);
    expect(answers).toEqual([200, 200, 200, 404, 200, 200]);
    const [rows] = await api.pool.query(
      "SELECT event_id, outcome, needs_refund FROM payment_event WHERE event_id IN (?) ORDER BY received_at, event_id",
      [cases.map((event) => event.eventId)],
    );
    const recorded = Object.fromEntries(
      (rows as { event_id: string; outcome: string; needs_refund: number }[]).map((row) => [
        row.event_id.slice(0, row.event_id.indexOf("-")),
        [row.outcome, Number(row.needs_refund)],
      ]),
    );
    expect(recorded).toEqual({
      amount: ["AMOUNT_MISMATCH", 1],
      currency: ["AMOUNT_MISMATCH", 1],
      failed: ["FAILED_RECORDED", 0],
      unknown: ["UNKNOWN_ORDER", 1],
      paid: ["PAID", 0],
      twice: ["ALREADY_PAID", 1],
    });
    // The provider retries a 404: the event is already recorded, and answered as such.
    expect((await callback(cases[3])).status).toBe(200);
  });
});

describe("back-office access and corrections", () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => api.close());

  const admin = (path: string, init: RequestInit & { token?: string } = {}) =>
    fetch(`${api.url}/admin/v1${path}`, {
      ...init,
      headers: {
        "content-type": "application/json",
        ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      },
    });

  it("refuses a user token with 403 and no token with 401", async () => {
    expect(
      (await admin("/activities/1/skus/1", { token: userToken(api.config.AUTH_JWT_SECRET, 5) })).status,
    ).toBe(403);
    expect((await admin("/activities/1/skus/1")).status).toBe(401);
  });

  it("refuses with 403 a token signed with the admin secret whose role is not admin", async () => {
    const exp = Math.floor(Date.now() / 1000) + 600;
    for (const claims of [
      { sub: "mallory", exp },
      { sub: "mallory", role: "user", exp },
    ]) {
      const response = await admin("/activities/1/skus/1", {
        token: signJwt(api.config.ADMIN_JWT_SECRET, claims),
      });
      expect([response.status, (await problemOf(response)).code]).toEqual([403, "FORBIDDEN"]);
    }
  });

  it("creates an activity and SKU, restocks, and refuses a correction below zero without changing anything", async () => {
    const { activityId, skuId } = freshIds();
    const token = adminToken(api.config.ADMIN_JWT_SECRET, "alice");
    const activity = await admin(`/activities/${activityId}`, {
      method: "PUT",
      token,
      body: JSON.stringify({
        name: "Black Friday",
        startsAt: new Date(Date.now() - 1000).toISOString(),
        endsAt: new Date(Date.now() + 3600_000).toISOString(),
      }),
    });
    expect(activity.status).toBe(201);
    const sku = await admin(`/activities/${activityId}/skus/${skuId}`, {
      method: "PUT",
      token,
      body: JSON.stringify({ initialStock: 3, priceCents: 999, currency: "EUR" }),
    });
    expect(sku.status).toBe(201);
    const up = await admin(`/activities/${activityId}/skus/${skuId}/restock`, {
      method: "POST",
      token,
      body: JSON.stringify({ delta: 2, reason: "found a box" }),
    });
    expect(await up.json()).toMatchObject({ available: 5 });
    const below = await admin(`/activities/${activityId}/skus/${skuId}/restock`, {
      method: "POST",
      token,
      body: JSON.stringify({ delta: -6, reason: "miscount" }),
    });
    expect(below.status).toBe(409);
    expect((await problemOf(below)).code).toBe("INVALID_STATE");
    expect((await skuInDatabase(api.pool, activityId, skuId)).available).toBe(5);
    const [ledger] = await api.pool.query(
      "SELECT delta, operator FROM stock_ledger WHERE activity_id = ? AND sku_id = ? ORDER BY id",
      [activityId, skuId],
    );
    expect(ledger).toEqual([
      { delta: 3, operator: "alice" },
      { delta: 2, operator: "alice" },
    ]);
    const view = (await (await admin(`/activities/${activityId}/skus/${skuId}`, { token })).json()) as {
      database: unknown;
    };
    expect(view.database).toMatchObject({ available: 5, pending: 0, paid: 0, closed: 0, supply: 5 });
  });
});
