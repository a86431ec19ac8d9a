import { createSale, freshIds, idempotencyKey } from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

describe("idempotency and sale window", () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => api.close());

  it("replays the same key and body with 200 and the same order; refuses the buyer's reuse for another SKU; scopes keys to users", async () => {
    const { activityId, skuId } = freshIds();
    await createSale(api.pool, { activityId, skuId, units: 5 });
    await api.load(activityId, skuId);
    const key = idempotencyKey();
    const first = await api.purchase(7, { activityId, skuId }, key);
    expect(first.status).toBe(201);
    expect(first.headers.get("location")).toBe(`/v1/purchases/${key}`);
    expect(first.body).toMatchObject({
      requestId: key,
      activityId,
      skuId,
      userId: 7,
      state: "PENDING",
      amountCents: 1999,
      currency: "EUR",
    });

    const replay = await api.purchase(7, { activityId, skuId }, key);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);

    const otherKey = await api.purchase(7, { activityId, skuId });
    expect([otherKey.status, otherKey.body.code]).toEqual([409, "ALREADY_PURCHASED"]);

    // A key is its user's: the same key from another user is simply another purchase, and says nothing
    // about the first one.
    const otherUser = await api.purchase(8, { activityId, skuId }, key);
    expect(otherUser.status).toBe(201);
    expect(otherUser.body).toMatchObject({ requestId: key, userId: 8 });
    expect(otherUser.body.orderId).not.toBe(first.body.orderId);

    const other = freshIds();
    await createSale(api.pool, { ...other, units: 5 });
    await api.load(other.activityId, other.skuId);
    const otherBody = await api.purchase(7, { activityId: other.activityId, skuId: other.skuId }, key);
    expect([otherBody.status, otherBody.body.code]).toEqual([409, "IDEMPOTENCY_KEY_REUSED"]);

    const [rows] = await api.pool.query(
      "SELECT user_id FROM sale_order WHERE request_id = ? ORDER BY user_id",
      [key],
    );
    expect((rows as { user_id: number }[]).map((row) => Number(row.user_id))).toEqual([7, 8]);

    // Each user reads their own purchase under the key; a third user has none.
    for (const [user, order] of [
      [7, first.body],
      [8, otherUser.body],
    ] as const) {
      const mine = await fetch(`${api.url}/v1/purchases/${key}`, {
        headers: { authorization: `Bearer ${tokenFor(api, user)}` },
      });
      expect([mine.status, await mine.json()]).toEqual([200, order]);
    }
    const theirs = await fetch(`${api.url}/v1/purchases/${key}`, {
      headers: { authorization: `Bearer ${tokenFor(api, 9)}` },
    });
    expect(theirs.status).toBe(404);
  });

  it("a double click — one key sent twice at once, and once more a moment later — is answered 201 once and 200 otherwise, all with the one order", async () => {
    const { activityId, skuId } = freshIds();
    await createSale(api.pool, { activityId, skuId, units: 100 });
    await api.load(activityId, skuId);
    const users = Array.from({ length: 60 }, (_, i) => 100 + i);
    const answers = await Promise.all(
      users.map(async (user) => {
        const key = idempotencyKey(`click-${user}`);
        const again = new Promise((resolve) => setTimeout(resolve, 20 + (user % 60))).then(() =>
          api.purchase(user, { activityId, skuId }, key),
        );
        const clicks = [
          api.purchase(user, { activityId, skuId }, key),
          api.purchase(user, { activityId, skuId }, key),
        ];
        return Promise.all([...clicks, again]);
      }),
    );
    for (const responses of answers) {
      expect(responses.map((response) => response.status).sort()).toEqual([200, 200, 201]);
      expect(new Set(responses.map((response) => response.body.orderId)).size).toBe(1);
    }
    const [rows] = await api.pool.query("SELECT COUNT(*) AS n FROM sale_order WHERE activity_id = ?", [
      activityId,
    ]);
    expect(Number((rows as { n: number }[])[0].n)).toBe(users.length);
  });

  it("refuses purchases outside the sale window and for unknown SKUs", async () => {
    const early = freshIds();
    await createSale(api.pool, {
      ...early,
      units: 5,
      startsAt: new Date(Date.now() + 3600_000),
      endsAt: new Date(Date.now() + 7200_000),
    });
    await api.load(early.activityId, early.skuId);
    const before = await api.purchase(1, early);
    expect([before.status, before.body.code]).toEqual([409, "ACTIVITY_NOT_OPEN"]);

    const late = freshIds();
    await createSale(api.pool, {
      ...late,
      units: 5,
      startsAt: new Date(Date.now() - 7200_000),
      endsAt: new Date(Date.now() - 3600_000),
    });
    await api.load(late.activityId, late.skuId);
    const after = await api.purchase(1, late);
    expect([after.status, after.body.code]).toEqual([409, "ACTIVITY_NOT_OPEN"]);

    const unknown = await api.purchase(1, { activityId: 987654321, skuId: 1 });
    expect([unknown.status, unknown.body.code]).toEqual([404, "NOT_FOUND"]);
    const view = await fetch(`${api.url}/v1/activities/987654321/skus/1`);
    expect(view.status).toBe(404);
  });

  it("serves the public SKU view from the cache", async () => {
    const { activityId, skuId } = freshIds();
    await createSale(api.pool, { activityId, skuId, units: 3, priceCents: 4999 });
    await api.load(activityId, skuId);
    const response = await fetch(`${api.url}/v1/activities/${activityId}/skus/${skuId}`);
    expect(await response.json()).toEqual({ state: "OPEN", available: 3, priceCents: 4999, currency: "EUR" });
  });
});

import { userToken } from "@flashgate/testkit";

const tokenFor = (api: ApiHarness, userId: number) => userToken(api.config.AUTH_JWT_SECRET, userId);
