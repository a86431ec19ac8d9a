/** Reading a service's Prometheus text: the dashboard, the benchmarks and the tests scrape the apps. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format (the subset prom-client writes): one sample per line. */
export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1]] = pair[2];
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

export const sumOf = (samples: Sample[], name: string, filter: Record<string, string> = {}) =>
  samples
    .filter((s) => s.name === name && Object.entries(filter).every(([k, v]) => s.labels[k] === v))
    .reduce((total, s) => total + s.value, 0);

/** Cumulative histogram buckets (le → count), summed over the other labels. */
export function histogramBuckets(samples: Sample[], name: string): Map<number, number> {
  const buckets = new Map<number, number>();
  for (const s of samples) {
    if (s.name !== `${name}_bucket`) continue;
    const le = s.labels.le === "+Inf" ? Number.POSITIVE_INFINITY : Number(s.labels.le);
    buckets.set(le, (buckets.get(le) ?? 0) + s.value);
  }
  return buckets;
}

/**
 * The q-quantile of the observations between two scrapes of a cumulative histogram, interpolated
 * linearly inside the bucket (as Prometheus' histogram_quantile does). Undefined with no observations.
 */
export function quantileBetween(
  before: Map<number, number>,
  after: Map<number, number>,
  q: number,
): number | undefined {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((le) => (after.get(le) ?? 0) - (before.get(le) ?? 0));
  const total = counts.at(-1) ?? 0;
  if (total <= 0) return undefined;
  const rank = q * total;
  for (let i = 0; i < bounds.length; i++) {
    if (counts[i] >= rank) {
      const upper = bounds[i];
      const lower = i === 0 ? 0 : bounds[i - 1];
      if (!Number.isFinite(upper)) return lower;
      const below = i === 0 ? 0 : counts[i - 1];
      const inBucket = counts[i] - below;
      return inBucket <= 0 ? upper : lower + ((upper - lower) * (rank - below)) / inBucket;
    }
  }
  return bounds.at(-2);
}
