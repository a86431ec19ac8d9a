import { binlogPosition, type SkuChange } from "@flashgate/cdc";
import { fastRedisUrl, freshIds, openSkuLoad } from "@flashgate/testkit";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyActivityChange, applySkuChanges } from "./apply.ts";
import { activitySkusKey, buyerField, endedGraceMs, skuKeys, skuRef, unitsBackChannel } from "./keys.ts";
import { type SkuLoad, writeSkuLoad } from "./load.ts";
import { reserveUnit } from "./reserve.ts";
import { type FlashgateRedis, withScripts } from "./scripts.ts";
import { readCachedSku } from "./sku-view.ts";

const at = (pos: number, row = 0) => binlogPosition("binlog.000002", pos, row);
const stock = (position: string, available: number, op = "u"): SkuChange => ({
  kind: "stock",
  op,
  position,
  available,
  priceCents: 1999,
  currency: "EUR",
});
const order = (position: string, userId: string, live: boolean, requestId?: string): SkuChange => ({
  kind: "order",
  op: "c",
  position,
  userId,
  requestId,
  live,
});
const hour = 3600_000;

describe("apply.lua, load.lua and activity.lua, on Redis alone", () => {
  let redis: FlashgateRedis;
  let listener: Redis;
  const unitsBack: string[] = [];
  beforeAll(async () => {
    redis = withScripts(new Redis(fastRedisUrl()));
    listener = new Redis(fastRedisUrl());
    listener.on("message", (_channel, ref) => unitsBack.push(ref));
    await listener.subscribe(unitsBackChannel);
  });
  afterAll(() => {
    redis.disconnect();
    listener.disconnect();
  });

  const snapshot = openSkuLoad;
  async function loaded(fields: Partial<SkuLoad> = {}) {
    const ids = freshIds();
    expect(await writeSkuLoad(redis, ids.activityId, ids.skuId, snapshot(fields))).toBe("loaded");
    return { ids, keys: skuKeys(ids.activityId, ids.skuId) };
  }
  const apply = (ids: { activityId: number; skuId: number }, changes: SkuChange[]) =>
    applySkuChanges(redis, ids.activityId, ids.skuId, changes);
  const heard = async (ref: string) => {
    // A round trip on the listener's connection: anything published before it has been delivered.
    await listener.call("PING", "flush");
    return unitsBack.includes(ref);
  };

  it("asks for a rebuild when the SKU has no state, and applies nothing", async () => {
    const ids = freshIds();
    expect(await apply(ids, [stock(at(10), 5)])).toEqual({
      applied: 0,
      skipped: 0,
      stoppedAt: 0,
      verdict: "REBUILD",
    });
    expect(await redis.exists(skuKeys(ids.activityId, ids.skuId).sku)).toBe(0);
  });

  it("applies changes newer than the SKU's position in order, and skips the rest", async () => {
    const { ids, keys } = await loaded();
    const result = await apply(ids, [
      stock(at(900), 1),
      stock(at(1000), 2),
      stock(at(1100), 7),
      stock(at(1050), 3),
    ]);
    expect(result).toEqual({ applied: 1, skipped: 3, stoppedAt: 4, verdict: "OK" });
    expect(await redis.hmget(keys.sku, "available", "pos")).toEqual(["7", at(1100)]);
  });

  it("applies a snapshot read at the same position, but not a live change", async () => {
    const { ids, keys } = await loaded();
    expect((await apply(ids, [stock(at(1000), 4)])).skipped).toBe(1);
    expect((await apply(ids, [stock(at(1000), 4, "r")])).applied).toBe(1);
    expect(await redis.hget(keys.sku, "available")).toBe("4");
  });

  it("says units came back when `available` rises, not when it falls", async () => {
    const { ids } = await loaded({ available: 5 });
    const ref = skuRef(ids.activityId, ids.skuId);
    // The load announces its units too: heard before the slate is cleared, or it could land after.
    expect(await heard(ref)).toBe(true);
    unitsBack.length = 0;
    await apply(ids, [stock(at(1001), 4)]);
    expect(await heard(ref)).toBe(false);
    await apply(ids, [stock(at(1002), 6)]);
    expect(await heard(ref)).toBe(true);
  });

  it("records a live order as a buyer and frees the reservation that admitted it; a closed one frees the buyer", async () => {
    const { ids, keys } = await loaded();
    const reserved = await reserveUnit(
      redis,
      { ...ids, userId: "42", requestId: "k-42" },
      { reservationTtlMs: 60_000, rateLimit: 10, rateWindowMs: 1000 },
    );
    expect(reserved.outcome).toBe("RESERVED");
    await apply(ids, [order(at(1001), "42", true, "k-42"), order(at(1002), "42", true, "k-42")]);
    // The buyer's field holds their order's key: another key of theirs is refused without the database.
    expect(await redis.hmget(keys.sku, buyerField("42"), "buyers")).toEqual(["k-42", "1"]);
    expect(await redis.exists(keys.reservations, keys.reservationRequests)).toBe(0);
    await apply(ids, [order(at(1003), "42", false)]);
    expect(await redis.hmget(keys.sku, buyerField("42"), "buyers")).toEqual([null, "0"]);
    // The closed order deleted later by a DBA, or edited: nothing blocks any more, and nothing fails.
    expect(await apply(ids, [{ ...order(at(1004), "42", false), op: "d" }])).toMatchObject({
      applied: 1,
      verdict: "OK",
    });
    expect(await redis.hmget(keys.sku, "buyers", "pos")).toEqual(["0", at(1004)]);
  });

  it("never counts a purchase's unit twice while its changes arrive, whatever batches CDC splits them into", async () => {
    // The transaction's binlog order: the order row first, then the decrement (ADR 0005).
    const changes = [order(at(1001), "42", true), stock(at(1002), 9)];
    for (const split of [[2], [1, 1]]) {
      const { ids, keys } = await loaded({ available: 10 });
      const limits = { reservationTtlMs: 60_000, rateLimit: 10, rateWindowMs: 1000 };
      await reserveUnit(redis, { ...ids, userId: "42", requestId: "k-42" }, limits);
      const effective = async () =>
        Number(await redis.hget(keys.sku, "available")) - (await redis.zcard(keys.reservations));
      expect(await effective()).toBe(9);
      let from = 0;
      for (const size of split) {
        await apply(ids, changes.slice(from, from + size));
        from += size;
        // Never below MySQL's 9 (a false SOLD_OUT); between the two changes one above, which MySQL refuses.
        expect(await effective()).toBeGreaterThanOrEqual(9);
      }
      expect(await effective()).toBe(9);
    }
  });

  it("drops the SKU when its row is deleted", async () => {
    const { ids, keys } = await loaded();
    expect((await apply(ids, [stock(at(1000, 5), 3)])).verdict).not.toBe("GONE");
    expect(await redis.sismember(activitySkusKey(ids.activityId), String(ids.skuId))).toBe(1);
    expect((await readCachedSku(redis, ids.activityId, ids.skuId))?.rebuy).toBe(false);
    expect(
      (await apply(ids, [{ kind: "gone", op: "d", position: at(1001) }, stock(at(1002), 1)])).verdict,
    ).toBe("GONE");
    expect(await redis.exists(keys.sku)).toBe(0);
    expect(await redis.sismember(activitySkusKey(ids.activityId), String(ids.skuId))).toBe(0);
  });

  it("keeps a SKU's keys until a day after its sale ends", async () => {
    const endsAt = new Date(Date.now() + hour);
    const { ids, keys } = await loaded({ endsAt });
    await reserveUnit(
      redis,
      { ...ids, userId: "1", requestId: "k" },
      { reservationTtlMs: 60_000, rateLimit: 10, rateWindowMs: 1000 },
    );
    // The load set the hash's expiry, the reservation made its keys without one: the apply sets all three.
    await redis.persist(keys.sku);
    await apply(ids, [stock(at(1001), 3)]);
    for (const key of [keys.sku, keys.reservations, keys.reservationRequests])
      expect(await redis.pexpiretime(key)).toBe(endsAt.getTime() + endedGraceMs);
  });

  it("a load never replaces a newer state, unless forced after the binlog source changed", async () => {
    const { ids, keys } = await loaded();
    await apply(ids, [stock(at(2000), 1)]);
    expect(await writeSkuLoad(redis, ids.activityId, ids.skuId, snapshot({ available: 9 }))).toBe(
      "newer_in_cache",
    );
    expect(await redis.hget(keys.sku, "available")).toBe("1");
    expect(await redis.keys(`${keys.loadPrefix}*`)).toEqual([]);
    await writeSkuLoad(redis, ids.activityId, ids.skuId, snapshot({ available: 9 }), { force: true });
    expect(await redis.hmget(keys.sku, "available", "pos")).toEqual(["9", at(1000)]);
  });

  it("a load swaps in the read's buyers and drops only their reservations", async () => {
    const { ids, keys } = await loaded({ buyers: ["1"] });
    const limits = { reservationTtlMs: 60_000, rateLimit: 10, rateWindowMs: 1000 };
    for (const user of ["2", "3"])
      await reserveUnit(redis, { ...ids, userId: user, requestId: `k${user}` }, limits);
    const buyers = Array.from({ length: 2500 }, (_, i) => String(10_000 + i)).concat("2");
    await writeSkuLoad(redis, ids.activityId, ids.skuId, snapshot({ position: at(3000), buyers }));
    expect(await redis.hexists(keys.sku, buyerField("1"))).toBe(0);
    expect(await redis.hexists(keys.sku, buyerField("12499"))).toBe(1);
    expect(await redis.hget(keys.sku, "buyers")).toBe(String(buyers.length));
    expect(await redis.zrange(keys.reservations, "0", "-1")).toEqual(["3"]);
  });

  it("a load keeps a sale window applied after its read; an older window change is skipped", async () => {
    const { ids, keys } = await loaded();
    const window = {
      startsMs: Date.now() - 5000,
      endsMs: Date.now() + 2 * hour,
      rebuy: true,
      admission: "queued",
    };
    expect(await applyActivityChange(redis, ids.activityId, { position: at(5000), ...window })).toEqual({
      applied: 1,
      failed: [],
    });
    expect(
      (await applyActivityChange(redis, ids.activityId, { position: at(4000), ...window })).applied,
    ).toBe(0);
    await writeSkuLoad(redis, ids.activityId, ids.skuId, snapshot({ position: at(4500), admission: "auto" }));
    expect(await redis.hmget(keys.sku, "ends_ms", "rebuy", "admission", "apos", "pos")).toEqual([
      String(window.endsMs),
      "1",
      "queued",
      at(5000),
      at(4500),
    ]);
    // A load read after the window change brings the activity as it is now; null is the API's own admission.
    await writeSkuLoad(redis, ids.activityId, ids.skuId, snapshot({ position: at(6000), admission: null }));
    expect(await redis.hmget(keys.sku, "admission", "apos")).toEqual(["", at(6000)]);
    await writeSkuLoad(redis, ids.activityId, ids.skuId, snapshot({ position: at(7000), admission: "auto" }));
    expect(await redis.hget(keys.sku, "admission")).toBe("auto");
  });

  it("keeps nothing of a sale that ended more than a day ago", async () => {
    const ids = freshIds();
    const ended = snapshot({ endsAt: new Date(Date.now() - endedGraceMs - 1) });
    expect(await writeSkuLoad(redis, ids.activityId, ids.skuId, ended)).toBe("ended");
    expect(await redis.exists(skuKeys(ids.activityId, ids.skuId).sku)).toBe(0);
  });
});
