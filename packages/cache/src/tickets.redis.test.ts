import { fastRedisUrl } from "@flashgate/testkit";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { ticketKey, ticketOutcomesChannel } from "./keys.ts";
import { withScripts } from "./scripts.ts";
import { forgetPlace, type QueuedPlace, readTicket, recordOutcomes, recordQueued } from "./tickets.ts";

/** A ticket as the sale writes it: what the scripts read of it is its state, SKU and time in line. */
const ticket = (place: QueuedPlace, state: string, more: object = {}) =>
  JSON.stringify({
    activityId: place.activityId,
    skuId: place.skuId,
    queuedAtMs: place.queuedAtMs,
    state,
    ...more,
  });

describe("queued purchases' tickets, on Redis alone", () => {
  const redis = withScripts(new Redis(fastRedisUrl()));
  const listener = new Redis(fastRedisUrl());
  afterAll(() => {
    redis.disconnect();
    listener.disconnect();
  });
  let next = 0;
  const place = (over: Partial<QueuedPlace> = {}): QueuedPlace => ({
    userId: `u-${process.pid}-${Date.now()}-${++next}`,
    requestId: "key-00000001",
    activityId: 7_000_000_001,
    skuId: 1,
    queuedAtMs: 1_796_000_000_000 + next,
    ...over,
  });

  it("a key names one live purchase: the same SKU's place in line, its order, or another SKU's are kept; a refusal frees it", async () => {
    const first = place();
    expect(await recordQueued(redis, first, ticket(first, "QUEUED"))).toEqual({ written: true });
    // A retry whose reservation lapsed: the place in line, not a second one.
    const retry = { ...first, queuedAtMs: first.queuedAtMs + 60_000 };
    expect(await recordQueued(redis, retry, ticket(retry, "QUEUED"))).toEqual({
      written: false,
      named: "QUEUED",
      ticket: ticket(first, "QUEUED"),
    });
    // The same key for another SKU: taken.
    const other = { ...first, skuId: 2 };
    expect(await recordQueued(redis, other, ticket(other, "QUEUED"))).toMatchObject({
      written: false,
      named: "TAKEN",
    });
    await redis.set(ticketKey(first.userId, first.requestId), ticket(first, "CREATED"));
    expect(await recordQueued(redis, retry, ticket(retry, "QUEUED"))).toMatchObject({ named: "CREATED" });
    expect(await recordQueued(redis, other, ticket(other, "QUEUED"))).toMatchObject({ named: "TAKEN" });
    // Refused: the key is free again, for any SKU.
    await redis.set(ticketKey(first.userId, first.requestId), ticket(first, "REFUSED"));
    expect(await recordQueued(redis, other, ticket(other, "QUEUED"))).toEqual({ written: true });
    expect(await readTicket(redis, first.userId, first.requestId)).toBe(ticket(other, "QUEUED"));
  });

  it("an outcome is written only on the place it decided, and only the written ones are announced", async () => {
    const decided = place();
    const requeued = place();
    const told = place();
    const lapsed = place();
    await recordQueued(redis, decided, ticket(decided, "QUEUED"));
    // Queued again since (a refusal freed the key, the buyer retried): a later place than the one decided.
    await redis.set(
      ticketKey(requeued.userId, requeued.requestId),
      ticket({ ...requeued, queuedAtMs: requeued.queuedAtMs + 1 }, "QUEUED"),
    );
    // Told already (a redelivery after a writer died).
    await redis.set(ticketKey(told.userId, told.requestId), ticket(told, "REFUSED"));
    const heard: string[] = [];
    await listener.subscribe(ticketOutcomesChannel);
    listener.on("message", (_, message: string) => heard.push(message));

    await recordOutcomes(
      redis,
      [decided, requeued, told, lapsed].map((p) => ({
        place: p,
        ticket: ticket(p, "CREATED", { order: {} }),
      })),
    );
    expect(await readTicket(redis, decided.userId, decided.requestId)).toBe(
      ticket(decided, "CREATED", { order: {} }),
    );
    expect(await readTicket(redis, requeued.userId, requeued.requestId)).toBe(
      ticket({ ...requeued, queuedAtMs: requeued.queuedAtMs + 1 }, "QUEUED"),
    );
    expect(await readTicket(redis, told.userId, told.requestId)).toBe(ticket(told, "REFUSED"));
    // No ticket (it lapsed, or was never written): the outcome is what there is to tell.
    expect(await readTicket(redis, lapsed.userId, lapsed.requestId)).toBe(
      ticket(lapsed, "CREATED", { order: {} }),
    );
    await expect.poll(() => heard.length).toBe(2);
    expect(heard.sort()).toEqual([decided, lapsed].map((p) => `${p.userId} ${p.requestId}`).sort());
  });

  it("a place is forgotten only while its ticket still holds it", async () => {
    const first = place();
    await recordQueued(redis, first, ticket(first, "QUEUED"));
    await forgetPlace(redis, { ...first, queuedAtMs: first.queuedAtMs - 1 });
    expect(await readTicket(redis, first.userId, first.requestId)).toBe(ticket(first, "QUEUED"));
    await forgetPlace(redis, first);
    expect(await readTicket(redis, first.userId, first.requestId)).toBeNull();
    const decided = place();
    await redis.set(ticketKey(decided.userId, decided.requestId), ticket(decided, "CREATED"));
    await forgetPlace(redis, decided);
    expect(await readTicket(redis, decided.userId, decided.requestId)).toBe(ticket(decided, "CREATED"));
  });
});
