/**
 * Answers locally, for `ttlMs`, for a SKU that MySQL itself has sold out, from a snapshot of its
 * buyers (user → their order's request id) taken when Redis first answered SOLD_OUT: a non-buyer gets
 * SOLD_OUT, a buyer with another key ALREADY_PURCHASED, and a buyer's retry with their own key takes
 * the full path so they get their order back. It does not wait for CDC to apply the last sales, and a
 * restock or closure is seen at most `ttlMs` late: the shortcut only ever rejects, it never admits.
 * A snapshot in use is taken again from MySQL in the last quarter of its life, so a long sold-out
 * stretch is never sent to Redis in a burst each time a snapshot lapses. While MySQL still has units
 * (held by reservations in flight), it looks again after `ttlMs / 5`.
 */
interface Entry {
  until: number;
  buyers: Map<string, string> | null;
}

export function createSoldOutShortcut(
  ttlMs: number,
  loadBuyers: (activityId: number, skuId: number) => Promise<Map<string, string> | null>,
  options: { maxActivities?: number; now?: () => number } = {},
) {
  const { maxActivities = 10_000, now = Date.now } = options;
  // Keyed by activity, then SKU: numeric keys, no key string built for every rejection.
  const entries = new Map<number, Map<number, Entry>>();
  const loading = new Set<string>();
  const entryOf = (activityId: number, skuId: number) => entries.get(activityId)?.get(skuId);

  function load(activityId: number, skuId: number) {
    const key = `${activityId}:${skuId}`;
    if (loading.has(key)) return;
    loading.add(key);
    loadBuyers(activityId, skuId)
      .then((buyers) => {
        let skus = entries.get(activityId);
        if (!skus) {
          if (entries.size >= maxActivities) entries.clear();
          skus = new Map();
          entries.set(activityId, skus);
        }
        skus.set(skuId, { until: now() + (buyers ? ttlMs : ttlMs / 5), buyers });
      })
      .catch(() => {})
      .finally(() => loading.delete(key));
  }

  return {
    answer(
      activityId: number,
      skuId: number,
      userId: string,
      requestId: string,
    ): "SOLD_OUT" | "ALREADY_PURCHASED" | undefined {
      const entry = entryOf(activityId, skuId);
      if (!entry?.buyers) return undefined;
      const left = entry.until - now();
      if (left <= 0) {
        entry.buyers = null;
        return undefined;
      }
      if (left < ttlMs / 4) load(activityId, skuId);
      const order = entry.buyers.get(userId);
      if (order === undefined) return "SOLD_OUT";
      return order === requestId ? undefined : "ALREADY_PURCHASED";
    },
    /** Called when Redis answered SOLD_OUT. */
    soldOut(activityId: number, skuId: number): void {
      if (ttlMs <= 0 || (entryOf(activityId, skuId)?.until ?? 0) > now()) return;
      load(activityId, skuId);
    },
  };
}
