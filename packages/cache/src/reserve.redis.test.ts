import { fastRedisUrl, freshIds } from "@flashgate/testkit";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buyerField, skuKeys } from "./keys.ts";
import { type Queueing, releaseReservation, reserveUnit } from "./reserve.ts";
import { type FlashgateRedis, withScripts } from "./scripts.ts";

const limits = { reservationTtlMs: 15_000, rateLimit: 3, rateWindowMs: 1000 };
const now = 1_800_000_000_000;

describe("reserve.lua and release.lua, on Redis alone", () => {
  let redis: FlashgateRedis;
  beforeAll(() => {
    redis = withScripts(new Redis(fastRedisUrl()));
  });
  afterAll(() => redis.disconnect());

  /** A SKU as the maintainer leaves it: `available` from MySQL, its window, its buyers. */
  async function sku(fields: {
    available: number;
    startsMs?: number;
    endsMs?: number;
    buyers?: string[];
    admission?: string;
  }) {
    const ids = freshIds();
    const keys = skuKeys(ids.activityId, ids.skuId);
    await redis.hset(keys.sku, {
      pos: "00000001:0000000000004:000000",
      available: fields.available,
      starts_ms: fields.startsMs ?? now - 60_000,
      ends_ms: fields.endsMs ?? now + 60_000,
      ...(fields.admission === undefined ? {} : { admission: fields.admission }),
      ...Object.fromEntries((fields.buyers ?? []).map((user) => [buyerField(user), 1])),
    });
    const reserve = (userId: string, requestId = `r-${userId}`, at = now, custom = limits) =>
      reserveUnit(redis, { ...ids, userId, requestId, nowMs: at }, custom);
    return { ids, keys, reserve };
  }

  it("reserves while units remain, counting reservations in flight against them", async () => {
    const { keys, reserve } = await sku({ available: 2 });
    expect(await reserve("1")).toEqual({ outcome: "RESERVED", effectiveAvailable: 2, queued: false });
    expect(await reserve("2")).toEqual({ outcome: "RESERVED", effectiveAvailable: 1, queued: false });
    expect(await reserve("3")).toEqual({ outcome: "SOLD_OUT" });
    expect(await redis.zscore(keys.reservations, "1")).toBe(String(now + limits.reservationTtlMs));
    expect(await redis.hget(keys.reservationRequests, "2")).toBe("r-2");
  });

  it("sends a buyer to the queue by their activity's admission, else the API's, and only while the queue takes buyers; a queued reservation lasts the queue's ttl", async () => {
    const queueTtlMs = 600_000;
    const cases: [
      admission: string | undefined,
      fallback: Queueing["fallback"],
      now: Queueing["now"],
      queued: boolean,
    ][] = [
      [undefined, "sync", "calm", false],
      [undefined, "queued", "calm", true],
      ["", "queued", "calm", true],
      [undefined, "auto", "calm", false],
      [undefined, "auto", "busy", true],
      ["sync", "queued", "busy", false],
      ["queued", "sync", "calm", true],
      ["queued", "sync", "off", false],
      ["auto", "sync", "calm", false],
      ["auto", "sync", "busy", true],
      ["auto", "queued", "off", false],
    ];
    for (const [admission, fallback, queueNow, queued] of cases) {
      const { keys, ids } = await sku({ available: 1, admission });
      const reserved = await reserveUnit(
        redis,
        { ...ids, userId: "1", requestId: "r-1", nowMs: now },
        limits,
        {
          fallback,
          now: queueNow,
          reservationTtlMs: queueTtlMs,
        },
      );
      expect({ admission, fallback, queueNow, reserved }).toEqual({
        admission,
        fallback,
        queueNow,
        reserved: { outcome: "RESERVED", effectiveAvailable: 1, queued },
      });
      expect(await redis.zscore(keys.reservations, "1")).toBe(
        String(now + (queued ? queueTtlMs : limits.reservationTtlMs)),
      );
    }
  });

  it("answers NOT_LOADED for a SKU with no state, and writes nothing", async () => {
    const ids = freshIds();
    expect(await reserveUnit(redis, { ...ids, userId: "1", requestId: "r", nowMs: now }, limits)).toEqual({
      outcome: "NOT_LOADED",
    });
    const keys = skuKeys(ids.activityId, ids.skuId);
    expect(await redis.exists(keys.sku, keys.reservations, `${keys.ratePrefix}1`)).toBe(0);
  });

  it("tells a buyer with an order ALREADY, even sold out and after the window", async () => {
    const { reserve } = await sku({ available: 0, endsMs: now - 1, buyers: ["7"] });
    expect(await reserve("7")).toEqual({ outcome: "ALREADY" });
  });

  it("tells a buyer's own key ALREADY (their order is read back) and any other key of theirs BOUGHT, where the cache holds their order's key", async () => {
    const { ids, keys } = await sku({ available: 5 });
    await redis.hset(keys.sku, buyerField("7"), "their-key");
    const reserve = (requestId: string) =>
      reserveUnit(redis, { ...ids, userId: "7", requestId, nowMs: now }, { ...limits, rateLimit: 10 });
    expect(await reserve("their-key")).toEqual({ outcome: "ALREADY" });
    expect(await reserve("another-key")).toEqual({ outcome: "BOUGHT" });
    expect(await redis.zcard(keys.reservations)).toBe(0);
  });

  it("counts a buyer's replays against their rate limit: looping on their own key cannot turn into a database read each", async () => {
    const { reserve } = await sku({ available: 0, endsMs: now - 1, buyers: ["7"] });
    for (let i = 0; i < limits.rateLimit; i++)
      expect(await reserve("7", "their-key")).toEqual({ outcome: "ALREADY" });
    expect((await reserve("7", "their-key")).outcome).toBe("RATE_LIMITED");
  });

  it("refuses outside the window: NOT_STARTED before, ENDED at and after the end", async () => {
    const early = await sku({ available: 5, startsMs: now + 1 });
    expect(await early.reserve("1")).toEqual({ outcome: "NOT_STARTED" });
    const late = await sku({ available: 5, endsMs: now });
    expect(await late.reserve("1")).toEqual({ outcome: "ENDED" });
  });

  it("sends a buyer whose own reservation is in flight to learn its outcome, never SOLD_OUT or closed", async () => {
    const { reserve, keys } = await sku({ available: 1 });
    expect((await reserve("1", "key-1")).outcome).toBe("RESERVED");
    expect(await reserve("1", "key-2")).toEqual({ outcome: "IN_FLIGHT", requestId: "key-1" });
    // CDC applies the purchase's decrement before its order: the unit is gone, the buyer's answer is not.
    await redis.hset(keys.sku, "available", 0);
    expect(await reserve("1", "key-1")).toEqual({ outcome: "IN_FLIGHT", requestId: "key-1" });
    expect(await reserve("1", "key-1", now + limits.reservationTtlMs + 1)).toEqual({ outcome: "SOLD_OUT" });
    await redis.hset(keys.sku, "ends_ms", now);
    expect(await reserve("1", "key-1", now + 1)).toEqual({ outcome: "IN_FLIGHT", requestId: "key-1" });
    expect(await reserve("2", "key-9", now + 1)).toEqual({ outcome: "ENDED" });
  });

  it("rate-limits a user past the limit within the window, with the time left", async () => {
    const { reserve } = await sku({ available: 0 });
    const open = await sku({ available: 10 });
    for (let i = 0; i < limits.rateLimit; i++) await open.reserve("5", `k${i}`);
    const limited = await open.reserve("5", "k-next");
    expect(limited.outcome).toBe("RATE_LIMITED");
    expect((limited as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(0);
    expect((limited as { retryAfterMs: number }).retryAfterMs).toBeLessThanOrEqual(limits.rateWindowMs);
    // Sold-out answers cost no rate-limit work: a storm's rejections never touch the counter.
    for (let i = 0; i < 10; i++) expect(await reserve("5", `s${i}`)).toEqual({ outcome: "SOLD_OUT" });
  });

  it("drops expired reservations, so the units of crashed requests sell again", async () => {
    const { reserve, keys } = await sku({ available: 1 });
    expect((await reserve("1")).outcome).toBe("RESERVED");
    expect(await reserve("2")).toEqual({ outcome: "SOLD_OUT" });
    const later = now + limits.reservationTtlMs + 1;
    expect(await reserve("2", "r-2", later)).toEqual({
      outcome: "RESERVED",
      effectiveAvailable: 1,
      queued: false,
    });
    expect(await redis.zrange(keys.reservations, "0", "-1")).toEqual(["2"]);
    expect(await redis.hkeys(keys.reservationRequests)).toEqual(["2"]);
  });

  it("releases a reservation only for the request that made it", async () => {
    const { ids, reserve, keys } = await sku({ available: 1 });
    await reserve("1", "mine");
    expect(await releaseReservation(redis, { ...ids, userId: "1", requestId: "other" })).toBe(false);
    expect(await redis.zcard(keys.reservations)).toBe(1);
    expect(await releaseReservation(redis, { ...ids, userId: "1", requestId: "mine" })).toBe(true);
    expect(await redis.exists(keys.reservations, keys.reservationRequests)).toBe(0);
    expect(await reserve("2")).toEqual({ outcome: "RESERVED", effectiveAvailable: 1, queued: false });
  });
});
