import { parseSkuRef, type RedisClient, skuRef, unitsBackChannel } from "@flashgate/cache";
import type { SoldOutSnapshot } from "@flashgate/db";

interface Entry {
  until: number;
  snapshot: SoldOutSnapshot | null;
  /** When its buyers were read (a renewal that kept it keeps this). */
  readAt: number;
}

/**
 * Answers locally, for `ttlMs`, for a SKU that MySQL itself has sold out, from a snapshot of its
 * buyers (user → their order's request id) taken when Redis first answered SOLD_OUT: a non-buyer gets
 * SOLD_OUT, a buyer with another key ALREADY_PURCHASED, and a buyer's retry with their own key takes
 * the full path so they get their order back. It does not wait for CDC to apply the last sales, and a
 * restock or closure is seen at most `ttlMs` late: the shortcut only ever rejects, it never admits.
 * A snapshot in use is taken again from MySQL in the last quarter of its life, so a long sold-out
 * stretch is never sent to Redis in a burst each time a snapshot lapses; the loader is given the
 * snapshot in use, and keeps it when the version of MySQL's stock row has not moved since (one row
 * read, however many buyers: a thousand sold-out SKUs cost a thousand primary-key reads per `ttlMs`,
 * not a thousand lists of buyers) — but never once its buyers were read `maxAgeMs` ago (40 × `ttlMs`
 * by default), so that whatever the version could miss is corrected within that bound. While MySQL
 * still has units (held by reservations in flight), it looks again after `ttlMs / 5`.
 *
 * Units can come back (a restock, a closure or expiry) and be sold within a snapshot's life; the buyer
 * who takes one must get their order on a retry, which a snapshot taken before would answer SOLD_OUT.
 * So the cache announces units coming back (unitsBackChannel) and `unitsBack` drops the SKU's snapshot,
 * and one still loading, before anyone can be admitted to them; while that announcement cannot be
 * heard (`listening(false)`), the shortcut is off.
 */
export function createSoldOutShortcut(
  ttlMs: number,
  loadBuyers: (activityId: number, skuId: number, known?: SoldOutSnapshot) => Promise<SoldOutSnapshot | null>,
  options: { maxActivities?: number; maxAgeMs?: number; now?: () => number } = {},
) {
  const { maxActivities = 10_000, maxAgeMs = 40 * ttlMs, now = Date.now } = options;
  // Keyed by activity, then SKU: numeric keys, no key string built for every rejection.
  const entries = new Map<number, Map<number, Entry>>();
  // The load in flight per SKU; a load that is no longer the SKU's own (units came back) is dropped.
  const loading = new Map<string, symbol>();
  let listening = false;
  const entryOf = (activityId: number, skuId: number) => entries.get(activityId)?.get(skuId);

  function load(activityId: number, skuId: number) {
    const key = skuRef(activityId, skuId);
    if (loading.has(key)) return;
    const token = Symbol(key);
    loading.set(key, token);
    const startedAt = now();
    const entry = entryOf(activityId, skuId);
    const known = entry?.snapshot && startedAt - entry.readAt < maxAgeMs ? entry : undefined;
    loadBuyers(activityId, skuId, known?.snapshot ?? undefined)
      .then((snapshot) => {
        if (loading.get(key) !== token || !listening) return;
        let skus = entries.get(activityId);
        if (!skus) {
          if (entries.size >= maxActivities) entries.clear();
          skus = new Map();
          entries.set(activityId, skus);
        }
        const readAt = known && snapshot === known.snapshot ? known.readAt : startedAt;
        skus.set(skuId, { until: now() + (snapshot ? ttlMs : ttlMs / 5), snapshot, readAt });
      })
      .catch(() => {})
      .finally(() => {
        if (loading.get(key) === token) loading.delete(key);
      });
  }

  return {
    answer(
      activityId: number,
      skuId: number,
      userId: string,
      requestId: string,
    ): "SOLD_OUT" | "ALREADY_PURCHASED" | undefined {
      const entry = entryOf(activityId, skuId);
      if (!entry?.snapshot) return undefined;
      // A lapsed snapshot answers nobody, but is kept: the next load renews it if MySQL's row is unchanged.
      const left = entry.until - now();
      if (left <= 0) return undefined;
      if (left < ttlMs / 4) load(activityId, skuId);
      const order = entry.snapshot.buyers.get(userId);
      if (order === undefined) return "SOLD_OUT";
      return order === requestId ? undefined : "ALREADY_PURCHASED";
    },
    /** Called when Redis answered SOLD_OUT. */
    soldOut(activityId: number, skuId: number): void {
      if (ttlMs <= 0 || !listening || (entryOf(activityId, skuId)?.until ?? 0) > now()) return;
      load(activityId, skuId);
    },
    /** Units may have come back to this SKU: forget what was known of it, and what is being loaded. */
    unitsBack(activityId: number, skuId: number): void {
      entries.get(activityId)?.delete(skuId);
      loading.delete(skuRef(activityId, skuId));
    },
    /** Whether announcements of units coming back reach this process; without them, nothing is kept. */
    listening(on: boolean): void {
      listening = on;
      if (!on) {
        entries.clear();
        loading.clear();
      }
    },
  };
}

export type SoldOutShortcut = ReturnType<typeof createSoldOutShortcut>;

/**
 * Feeds the shortcut the cache's announcements of units coming back, on a connection of its own (a
 * subscribed connection can do nothing else). The shortcut is on only while subscribed.
 */
export function followUnitsBack(subscriber: RedisClient, shortcut: SoldOutShortcut): void {
  subscriber.on("message", (channel: string, message: string) => {
    if (channel !== unitsBackChannel) return;
    const sku = parseSkuRef(message);
    if (sku) shortcut.unitsBack(sku.activityId, sku.skuId);
  });
  const subscribe = () =>
    subscriber.subscribe(unitsBackChannel).then(
      () => shortcut.listening(true),
      () => shortcut.listening(false),
    );
  subscriber.on("ready", subscribe);
  subscriber.on("close", () => shortcut.listening(false));
  if (subscriber.status === "ready") void subscribe();
}
