/**
 * Answers SOLD_OUT locally for a SKU that Redis reported sold out (applied `available` 0), for `ttlMs`.
 * At that moment every order's insert has been applied before its stock decrement (same partition,
 * commit order), so the buyers set is complete: its members still take the full path, so that a
 * buyer's retry with the same key gets their order back instead of SOLD_OUT. A restock or closure is
 * seen at most `ttlMs` late: the shortcut only ever rejects, it never admits.
 */
export function createSoldOutShortcut(
  ttlMs: number,
  loadBuyers: (activityId: number, skuId: number) => Promise<string[]>,
  maxSkus = 10_000,
) {
  const entries = new Map<string, { until: number; buyers: Set<string> }>();
  const loading = new Set<string>();
  return {
    rejects(activityId: number, skuId: number, userId: string, nowMs = Date.now()): boolean {
      const entry = entries.get(`${activityId}:${skuId}`);
      if (!entry) return false;
      if (entry.until <= nowMs) {
        entries.delete(`${activityId}:${skuId}`);
        return false;
      }
      return !entry.buyers.has(userId);
    },
    /** Called when Redis answered SOLD_OUT with nothing left as applied. */
    soldOut(activityId: number, skuId: number): void {
      const key = `${activityId}:${skuId}`;
      if (ttlMs <= 0 || loading.has(key) || (entries.get(key)?.until ?? 0) > Date.now()) return;
      loading.add(key);
      loadBuyers(activityId, skuId)
        .then((buyers) => {
          if (entries.size >= maxSkus) entries.clear();
          entries.set(key, { until: Date.now() + ttlMs, buyers: new Set(buyers) });
        })
        .catch(() => {})
        .finally(() => loading.delete(key));
    },
  };
}
