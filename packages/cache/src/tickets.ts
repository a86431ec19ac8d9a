import { endedGraceMs, ticketKey, ticketOutcomesChannel } from "./keys.ts";
import type { FlashgateRedis } from "./scripts.ts";

/** A queued buyer's ticket (as the sale encodes it), kept as long as their reservation. */
export async function recordQueued(
  redis: FlashgateRedis,
  userId: string,
  requestId: string,
  ticket: string,
  ttlMs: number,
): Promise<void> {
  await redis.set(ticketKey(userId, requestId), ticket, "PX", ttlMs);
}

/** A ticket forgotten: the buyer was not put on the queue after all. */
export async function forgetTicket(redis: FlashgateRedis, userId: string, requestId: string): Promise<void> {
  await redis.del(ticketKey(userId, requestId));
}

export const readTicket = (
  redis: FlashgateRedis,
  userId: string,
  requestId: string,
): Promise<string | null> => redis.get(ticketKey(userId, requestId));

/**
 * The writer's outcomes, each kept for a day (the order itself is MySQL's for good), then announced to
 * whoever waits on them.
 */
export async function recordOutcomes(
  redis: FlashgateRedis,
  outcomes: { userId: string; requestId: string; ticket: string }[],
): Promise<void> {
  await Promise.all(
    outcomes.map(({ userId, requestId, ticket }) =>
      redis.set(ticketKey(userId, requestId), ticket, "PX", endedGraceMs),
    ),
  );
  await Promise.all(
    outcomes.map(({ userId, requestId }) => redis.publish(ticketOutcomesChannel, `${userId} ${requestId}`)),
  );
}
