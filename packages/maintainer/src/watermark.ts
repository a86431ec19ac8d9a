import { appliedWatermarkKey, type FlashgateRedis } from "@flashgate/cache";
import type { Logger } from "@flashgate/logger";

/** What the fence reads of the group's offsets (group-offsets.ts). */
export interface SaleOffsets {
  saleEndOffsets(): Promise<bigint[]>;
  saleCommittedOffsets(): Promise<bigint[]>;
}

/** How often a pending fence asks Kafka whether the group has caught up. */
const checkEveryMs = 200;

/**
 * The applied watermark, which the drift check fences on: a heartbeat's binlog position, published once
 * every change committed before that heartbeat has been applied to Redis — by whichever instance of the
 * group consumes its partition. When the instance that consumes the heartbeat applies one, Debezium has
 * already sent every earlier change to Kafka; the sale topic's end offsets, read then, bound them. Once
 * the group's committed offsets (committed only after Redis holds a batch's effect) reach those ends on
 * every partition, the heartbeat's position is the watermark. One fence at a time: heartbeats arriving
 * meanwhile are dropped, the next one after it starts the next fence.
 */
export function createWatermark(offsets: SaleOffsets, redis: FlashgateRedis, logger: Logger) {
  let pending: { heartbeat: string; ends: bigint[] } | undefined;
  let checking: Promise<void> | undefined;
  let lastCheck = 0;

  async function check() {
    if (!pending) return;
    const committed = await offsets.saleCommittedOffsets();
    const behind = pending.ends.some((end, partition) => (committed[partition] ?? -1n) < end && end > 0n);
    if (behind) return;
    await redis.set(appliedWatermarkKey, pending.heartbeat);
    pending = undefined;
  }

  return {
    /** This instance applied a heartbeat: a fence starts at it unless one is pending. */
    async heartbeatApplied(heartbeat: string): Promise<void> {
      if (pending) return;
      try {
        pending = { heartbeat, ends: await offsets.saleEndOffsets() };
      } catch (error) {
        logger.warn({ err: (error as Error).message }, "reading the sale topic's end offsets failed");
      }
    },
    /** Checks the pending fence, at most every 200 ms, without holding up the caller. */
    advance(): void {
      if (!pending || checking || Date.now() - lastCheck < checkEveryMs) return;
      lastCheck = Date.now();
      checking = check()
        .catch((error) =>
          logger.warn({ err: (error as Error).message }, "advancing the applied watermark failed"),
        )
        .finally(() => {
          checking = undefined;
        });
    },
    /** Waits for a check in progress (before the consumer closes). */
    settled: () => checking ?? Promise.resolve(),
  };
}
