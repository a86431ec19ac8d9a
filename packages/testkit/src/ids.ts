let counter = 0;

/** Each test makes its own activity and SKU ids, never wiping shared state; runs differ by time, tests by counter. */
export function freshIds(): { activityId: number; skuId: number } {
  counter += 1;
  const base = (Date.now() % 1_000_000_000) * 1000 + (process.pid % 100) * 10;
  return { activityId: base + counter, skuId: 100 + counter };
}
