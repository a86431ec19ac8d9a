import { appliedWatermarkKey, type FlashgateRedis, withScripts } from "@flashgate/cache";
import { createLogger } from "@flashgate/logger";
import { eventually, fastRedisUrl } from "@flashgate/testkit";
import { Redis } from "ioredis";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { createWatermark, type SaleOffsets } from "./watermark.ts";

/** The group's offsets as a test sets them: Kafka's end offsets and the group's commits, per partition. */
function offsets(ends: bigint[], committed: bigint[]) {
  const state = { ends, committed, endReads: 0, commitReads: 0, failEnds: false, failCommits: false };
  const source: SaleOffsets = {
    saleEndOffsets: async () => {
      state.endReads += 1;
      if (state.failEnds) throw new Error("Kafka unreachable");
      return [...state.ends];
    },
    saleCommittedOffsets: async () => {
      state.commitReads += 1;
      if (state.failCommits) throw new Error("coordinator gone");
      return [...state.committed];
    },
  };
  return { state, source };
}

describe("the applied watermark, fenced by the group's committed offsets, on Redis alone", () => {
  const redis: FlashgateRedis = withScripts(new Redis(fastRedisUrl()));
  const logger = createLogger("watermark-test", "silent");
  afterAll(() => redis.disconnect());
  beforeEach(async () => {
    await redis.del(appliedWatermarkKey);
  });

  /** Advances until the watermark reads `expected` (checks are spaced 200 ms apart). */
  const advancesTo = (watermark: ReturnType<typeof createWatermark>, expected: string) =>
    eventually(async () => {
      watermark.advance();
      await watermark.settled();
      expect(await redis.get(appliedWatermarkKey)).toBe(expected);
    });

  it("publishes a heartbeat only once every partition's commits reach the ends read when it was applied", async () => {
    // Partition 1 never had a record (end 0, nothing committed); partition 2 is one record behind.
    const { state, source } = offsets([5n, 0n, 3n], [5n, -1n, 2n]);
    const watermark = createWatermark(source, redis, logger);
    await watermark.heartbeatApplied("binlog.000001:000000100");
    watermark.advance();
    await watermark.settled();
    expect(await redis.get(appliedWatermarkKey)).toBeNull();

    // Records written after the heartbeat move the ends, not this fence's.
    state.ends = [9n, 4n, 9n];
    state.committed = [5n, -1n, 3n];
    await advancesTo(watermark, "binlog.000001:000000100");
  });

  it("runs one fence at a time: a heartbeat applied meanwhile is dropped, the next one fences again", async () => {
    const { state, source } = offsets([2n, 2n], [1n, 2n]);
    const watermark = createWatermark(source, redis, logger);
    await watermark.heartbeatApplied("binlog.000001:000000100");
    await watermark.heartbeatApplied("binlog.000001:000000200");
    expect(state.endReads).toBe(1);
    state.committed = [2n, 2n];
    await advancesTo(watermark, "binlog.000001:000000100");

    await watermark.heartbeatApplied("binlog.000001:000000300");
    await advancesTo(watermark, "binlog.000001:000000300");
    expect(state.endReads).toBe(2);
  });

  it("a heartbeat whose end offsets cannot be read starts no fence; the next one does", async () => {
    const { state, source } = offsets([1n], [1n]);
    const watermark = createWatermark(source, redis, logger);
    state.failEnds = true;
    await watermark.heartbeatApplied("binlog.000001:000000100");
    watermark.advance();
    await watermark.settled();
    expect(await redis.get(appliedWatermarkKey)).toBeNull();

    state.failEnds = false;
    await watermark.heartbeatApplied("binlog.000001:000000200");
    await advancesTo(watermark, "binlog.000001:000000200");
  });

  it("asks Kafka at most every 200 ms and one check at a time; settled() waits for the check", async () => {
    const { state, source } = offsets([1n], [1n]);
    const watermark = createWatermark(source, redis, logger);
    await watermark.heartbeatApplied("binlog.000001:000000100");
    for (let i = 0; i < 5; i++) watermark.advance();
    await watermark.settled();
    expect(await redis.get(appliedWatermarkKey)).toBe("binlog.000001:000000100");
    expect(state.commitReads).toBe(1);
    // The next fence right away: its first check waits out the 200 ms since the last one.
    await watermark.heartbeatApplied("binlog.000001:000000200");
    watermark.advance();
    await watermark.settled();
    expect(state.commitReads).toBe(1);
    await advancesTo(watermark, "binlog.000001:000000200");
    expect(state.commitReads).toBe(2);
  });

  it("logs a failure to read either offsets, and keeps going", async () => {
    const warnings: string[] = [];
    const recording = {
      warn: (_: unknown, message: string) => warnings.push(message),
    } as unknown as typeof logger;
    const { state, source } = offsets([1n], [1n]);
    const watermark = createWatermark(source, redis, recording);
    state.failEnds = true;
    await watermark.heartbeatApplied("binlog.000001:000000100");
    state.failEnds = false;
    state.failCommits = true;
    await watermark.heartbeatApplied("binlog.000001:000000200");
    watermark.advance();
    await watermark.settled();
    expect(warnings).toEqual([
      "reading the sale topic's end offsets failed",
      "advancing the applied watermark failed",
    ]);
    state.failCommits = false;
    await advancesTo(watermark, "binlog.000001:000000200");
  });
});
