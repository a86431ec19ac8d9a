import { type FlashgateRedis, type RedisClient, readTicket, ticketOutcomesChannel } from "@flashgate/cache";
import { findPurchase, type Order } from "@flashgate/db";
import type { Pool } from "mysql2/promise";
import { decodeTicket, type Ticket } from "./ticket.ts";

/**
 * A purchase's standing by its key: its ticket (when it was queued; a created one holds the order as
 * created), or the order alone (placed without the queue, or its ticket forgotten after a day).
 */
export interface TicketStanding {
  ticket?: Ticket;
  order?: Order;
}

/** How long a waiter with no outcome announcements to hear looks again. */
const pollMs = 250;

/**
 * Queued purchases' tickets (ADR 0030) as their buyers follow them: read from Redis, the order from
 * MySQL once the writer created it, and a wait for the outcome woken by the writer's announcement
 * (ticketOutcomesChannel) on a connection of its own. At most `maxWaiters` wait at once in this process;
 * beyond, a caller is answered at once with where their ticket stands.
 */
export function createTicketService(deps: {
  redis: FlashgateRedis;
  readPool: Pool;
  subscriber?: RedisClient;
  maxWaiters: number;
}) {
  const { redis, readPool, subscriber, maxWaiters } = deps;
  const waiters = new Map<string, Set<() => void>>();
  let waiting = 0;
  let listening = false;
  if (subscriber) {
    subscriber.on("message", (channel: string, message: string) => {
      if (channel !== ticketOutcomesChannel) return;
      for (const wake of waiters.get(message) ?? []) wake();
    });
    const subscribe = () =>
      subscriber.subscribe(ticketOutcomesChannel).then(
        () => {
          listening = true;
        },
        () => {
          listening = false;
        },
      );
    subscriber.on("ready", subscribe);
    subscriber.on("close", () => {
      listening = false;
    });
    if (subscriber.status === "ready") void subscribe();
  }

  /** Resolves when the ticket's outcome is announced, or after `ms` (sooner while nothing is heard). */
  function outcomeOrTimeout(id: string, ms: number): { done: Promise<void>; cancel: () => void } {
    let wake = () => {};
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(() => wake(), listening ? ms : Math.min(ms, pollMs));
      wake = () => {
        clearTimeout(timer);
        const set = waiters.get(id);
        if (set?.delete(wake)) {
          waiting -= 1;
          if (set.size === 0) waiters.delete(id);
        }
        resolve();
      };
    });
    const set = waiters.get(id) ?? new Set();
    waiters.set(id, set.add(wake));
    waiting += 1;
    return { done, cancel: wake };
  }

  return {
    /**
     * Where the key's purchase stands, waiting up to `waitMs` while it is still queued (no longer once
     * `abandoned` is aborted: the caller went away); undefined when the key has neither a ticket nor an
     * order. Throws when Redis or MySQL cannot be read.
     */
    async standing(
      userId: string,
      requestId: string,
      waitMs: number,
      abandoned?: AbortSignal,
    ): Promise<TicketStanding | undefined> {
      const deadline = Date.now() + waitMs;
      const id = `${userId} ${requestId}`;
      for (;;) {
        const left = deadline - Date.now();
        // Set before the read: an outcome announced between the two still wakes it.
        const wait =
          left > 0 && waiting < maxWaiters && !abandoned?.aborted ? outcomeOrTimeout(id, left) : undefined;
        let ticket: Ticket | undefined;
        try {
          const stored = await readTicket(redis, userId, requestId);
          ticket = stored === null ? undefined : decodeTicket(stored);
        } catch (error) {
          wait?.cancel();
          throw error;
        }
        if (ticket?.state === "QUEUED" && wait) {
          abandoned?.addEventListener("abort", wait.cancel, { once: true });
          if (abandoned?.aborted) wait.cancel();
          await wait.done;
          abandoned?.removeEventListener("abort", wait.cancel);
          continue;
        }
        wait?.cancel();
        if (ticket) return { ticket };
        // No MySQL read while a ticket answers: a crowd following its tickets never reaches the database.
        const order = await findPurchase(readPool, userId, requestId);
        return order && { order };
      }
    },
  };
}

export type TicketService = ReturnType<typeof createTicketService>;
