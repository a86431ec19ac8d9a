import { fastRedisUrl } from "@flashgate/testkit";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { takeLease } from "./lease.ts";
import { withScripts } from "./scripts.ts";

/** This process stalls: no timer, no renewal, for `ms` (a long pause, as a failover or a stop-the-world). */
const stall = (ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until);
};

describe("a lease that knows its holder, on Redis alone", () => {
  const redis = withScripts(new Redis(fastRedisUrl()));
  afterAll(() => redis.disconnect());
  const keys = () => {
    const id = `${process.pid}-${Date.now()}-${Math.random()}`;
    // One slot for both, as a lease and its marks must share (leaseKeys).
    return { lease: `test:{lease-${id}}:lease`, mark: `test:{lease-${id}}:mark` };
  };

  it("is held by one holder at a time, and free again once released", async () => {
    const { lease } = keys();
    const first = await takeLease(redis, lease, 10_000);
    expect(first).toBeDefined();
    expect(await takeLease(redis, lease, 10_000)).toBeUndefined();
    expect(await first?.renew()).toBe(true);
    await first?.release();
    expect(await takeLease(redis, lease, 10_000)).toBeDefined();
  });

  it("a holder stalled past the lease's life neither renews, marks nor releases what the next holder took", async () => {
    const { lease, mark } = keys();
    const stalled = await takeLease(redis, lease, 200);
    expect(await stalled?.mark(mark)).toBe(true);
    stall(300);
    const next = await takeLease(redis, lease, 10_000);
    expect(next).toBeDefined();
    expect(await next?.mark(mark)).toBe(true);

    expect(await stalled?.renew()).toBe(false);
    expect(await stalled?.mark(mark)).toBe(false);
    expect(await redis.get(mark)).toBe(next?.token);
    await stalled?.release();

    expect(await redis.get(lease)).toBe(next?.token);
    expect(await redis.pttl(lease)).toBeGreaterThan(5_000);
    expect(await redis.get(mark)).toBe(next?.token);
    await next?.release();
    expect(await redis.exists(lease, mark)).toBe(0);
  });
});
