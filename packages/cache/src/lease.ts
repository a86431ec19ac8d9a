import { randomUUID } from "node:crypto";
import type { FlashgateRedis } from "./scripts.ts";

/**
 * A lock that knows its holder. Taken with a token of its own, it is renewed and released only while it
 * still carries that token: a holder stalled past the lease's life (a long pause, a Redis failover) finds
 * the lease lapsed and possibly taken, and neither extends nor deletes the new holder's.
 */
export interface Lease {
  readonly token: string;
  /** True while this holder still holds it (the life starts again from now). */
  renew(): Promise<boolean>;
  /**
   * Sets a mark that only this holder's `release` removes (a flag that outlives the lease), while this
   * holder still holds the lease (false if not). A mark shares the lease's slot: one hash tag.
   */
  mark(key: string): Promise<boolean>;
  /** Ends the lease and this holder's marks; what another holder took stays. */
  release(): Promise<void>;
}

/** The lease on `key` for `lifeMs`, or undefined while another holds it. */
export async function takeLease(
  redis: FlashgateRedis,
  key: string,
  lifeMs: number,
): Promise<Lease | undefined> {
  const token = randomUUID();
  if ((await redis.set(key, token, "PX", lifeMs, "NX")) !== "OK") return undefined;
  const marks: string[] = [];
  return {
    token,
    renew: async () => Number(await redis.fgLeaseRenew(key, token, lifeMs)) === 1,
    mark: async (mark) => {
      marks.push(mark);
      return Number(await redis.fgLeaseMark(key, mark, token)) === 1;
    },
    release: async () => {
      for (const held of [...marks, key]) await redis.fgLeaseRelease(held, token);
    },
  };
}
