import { describe, expect, it } from "vitest";
import { holdsBatch } from "./purchase-queue.ts";

const rule = { quietMs: 250, yieldAbove: 1000, maxDeferMs: 5000 };

describe("a writer's hold on a fetched batch", () => {
  it("takes a lone buyer once they have been in line the quiet time", () => {
    expect(holdsBatch([10_000], 10_100, 0, rule)).toBe(true);
    expect(holdsBatch([10_000], 10_250, 0, rule)).toBe(false);
  });

  it("holds a rush's buyers while they arrive faster than the bound — their own pace, or the queue's", () => {
    // 101 buyers within 50 ms: 2,000 a second.
    const rush = Array.from({ length: 101 }, (_, i) => 10_000 + i / 2);
    expect(holdsBatch(rush, 11_000, 0, rule)).toBe(true);
    // A slow trickle, but the queue as a whole fills fast.
    const trickle = [10_000, 10_500];
    expect(holdsBatch(trickle, 11_000, 0, rule)).toBe(false);
    expect(holdsBatch(trickle, 11_000, 1500, rule)).toBe(true);
  });

  it("never past the longest wait of its oldest buyer, and never with the yield off", () => {
    const rush = Array.from({ length: 101 }, (_, i) => 10_000 + i / 2);
    expect(holdsBatch(rush, 15_000, 5000, rule)).toBe(false);
    expect(holdsBatch(rush, 11_000, 5000, { ...rule, yieldAbove: 0 })).toBe(false);
    expect(holdsBatch([], 11_000, 5000, rule)).toBe(false);
  });
});
