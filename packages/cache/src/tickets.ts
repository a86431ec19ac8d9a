import { endedGraceMs, ticketKey, ticketOutcomesChannel } from "./keys.ts";
import type { FlashgateRedis } from "./scripts.ts";

/** A purchase queued for a SKU: who, under which key, and when it was put in line. */
export interface QueuedPlace {
  userId: string;
  requestId: string;
  activityId: number;
  skuId: number;
  queuedAtMs: number;
}

/** What a key names already, where it names a live purchase (ticket-queue.lua). */
export type NamedPurchase = "QUEUED" | "CREATED" | "TAKEN";

/**
 * A queued buyer's ticket (as the sale encodes it), kept for a day: a place stays in line however long the
 * writers take. Not written where the key already names a live purchase: what it names, and its ticket.
 */
export async function recordQueued(
  redis: FlashgateRedis,
  place: QueuedPlace,
  ticket: string,
): Promise<{ written: true } | { written: false; named: NamedPurchase; ticket: string }> {
  const key = ticketKey(place.userId, place.requestId);
  const [outcome, current] = (await redis.fgTicketQueue(
    key,
    ticket,
    endedGraceMs,
    place.activityId,
    place.skuId,
  )) as [string, string?];
  return outcome === "WRITTEN"
    ? { written: true }
    : { written: false, named: outcome as NamedPurchase, ticket: String(current) };
}

export const readTicket = (
  redis: FlashgateRedis,
  userId: string,
  requestId: string,
): Promise<string | null> => redis.get(ticketKey(userId, requestId));

/** A place's ticket forgotten, only while it still holds that place (ticket-forget.lua). */
export async function forgetPlace(redis: FlashgateRedis, place: QueuedPlace): Promise<void> {
  await redis.fgTicketForget(
    ticketKey(place.userId, place.requestId),
    place.activityId,
    place.skuId,
    place.queuedAtMs,
  );
}

/**
 * Outcomes, each written on its ticket only while that still holds the place decided (ticket-outcome.lua)
 * and kept for a day (the order itself is MySQL's for good), then announced to whoever waits on them.
 * Answers which were written.
 */
export async function recordOutcomes(
  redis: FlashgateRedis,
  outcomes: { place: QueuedPlace; ticket: string }[],
): Promise<boolean[]> {
  const written = await Promise.all(
    outcomes.map(
      async ({ place, ticket }) =>
        (await redis.fgTicketOutcome(
          ticketKey(place.userId, place.requestId),
          ticket,
          endedGraceMs,
          place.activityId,
          place.skuId,
          place.queuedAtMs,
        )) === 1,
    ),
  );
  await Promise.all(
    outcomes
      .filter((_, i) => written[i])
      .map(({ place }) => redis.publish(ticketOutcomesChannel, `${place.userId} ${place.requestId}`)),
  );
  return written;
}
