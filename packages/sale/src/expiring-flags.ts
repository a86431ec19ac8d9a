/** A per-key flag that turns itself off after ttlMs; bounded in size so a key flood cannot grow it. */
export function createExpiringFlags(ttlMs: number, maxKeys = 10_000) {
  const until = new Map<string, number>();
  return {
    set(key: string, nowMs = Date.now()) {
      if (until.size >= maxKeys) until.clear();
      until.set(key, nowMs + ttlMs);
    },
    has(key: string, nowMs = Date.now()): boolean {
      const expiry = until.get(key);
      if (expiry === undefined) return false;
      if (expiry > nowMs) return true;
      until.delete(key);
      return false;
    },
    clear: (key: string) => until.delete(key),
  };
}
