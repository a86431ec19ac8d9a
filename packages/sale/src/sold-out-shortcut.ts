/**
 * Answers locally, for `ttlMs`, for a SKU that MySQL itself has sold out, from a snapshot of its
 * buyers (user → their order's request id) taken when Redis first answered SOLD_OUT: a non-buyer gets
 * SOLD_OUT, a buyer with another key ALREADY_PURCHASED, and a buyer's retry with their own key takes
 * the full path so they get their order back. It does not wait for CDC to apply the last sales, and a
 * restock or closure is seen at most `ttlMs` late: the shortcut only ever rejects, it never admits.
 * While MySQL still has units (held by reservations in flight), it looks again after `ttlMs / 5`.
 */
export function createSoldOutShortcut(
  ttlMs: number,
  loadBuyers: (activityId: number, skuId: number) => Promise<Map<string, string> | null>,
  maxSkus = 10_000,
) {
  const entries = new Map<string, { until: number; buyers: Map<string, string> | null }>();
  const loading = new Set<string>();
  return {
    answer(
      activityId: number,
      skuId: number,
      userId: string,
      requestId: string,
      nowMs = Date.now(),
    ): "SOLD_OUT" | "ALREADY_PURCHASED" | undefined {
      const key = `${activityId}:${skuId}`;
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.until <= nowMs) {
        entries.delete(key);
        return undefined;
      }
      if (!entry.buyers) return undefined;
      const order = entry.buyers.get(userId);
      if (order === undefined) return "SOLD_OUT";
      return order === requestId ? undefined : "ALREADY_PURCHASED";
    },
    /** Called when Redis answered SOLD_OUT. */
    soldOut(activityId: number, skuId: number, nowMs = Date.now()): void {
      const key = `${activityId}:${skuId}`;
      if (ttlMs <= 0 || loading.has(key) || (entries.get(key)?.until ?? 0) > nowMs) return;
      loading.add(key);
      loadBuyers(activityId, skuId)
        .then((buyers) => {
          if (entries.size >= maxSkus) entries.clear();
          entries.set(key, { until: Date.now() + (buyers ? ttlMs : ttlMs / 5), buyers });
        })
        .catch(() => {})
        .finally(() => loading.delete(key));
    },
  };
}
