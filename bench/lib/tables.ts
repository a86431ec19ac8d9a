import { type Latency, percentile } from "./load.ts";

/** Each scenario's result file of one run, as read (`defineScenario` gives it its scenario's type). */
export type Results = Record<string, { file: string; data: Record<string, unknown> }>;

/** A row of one system (a design's variant) in one round. */
export interface SystemRow {
  system: string;
  design?: string;
  round?: number;
}

/** "median (min–max)" of one figure over the rounds. */
export function spread(values: number[], digits = 0): string {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (!sorted.length) return "–";
  const f = (v: number) => (digits ? v.toFixed(digits) : String(Math.round(v)));
  const median = percentile(sorted, 50);
  return sorted.length === 1 ? f(median) : `${f(median)} (${f(sorted[0])}–${f(sorted.at(-1) as number)})`;
}

export const median = (values: number[]) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length ? percentile(sorted, 50) : Number.NaN;
};

export function barChart(
  title: string,
  bars: { label: string; value: number; color: string }[],
  unit: string,
): string {
  const width = 560;
  const rowHeight = 28;
  const height = 40 + bars.length * rowHeight;
  const max = Math.max(1, ...bars.map((b) => b.value));
  const rows = bars
    .map((bar, i) => {
      const y = 30 + i * rowHeight;
      const w = Math.max(2, (bar.value / max) * (width - 230));
      return `<text x="10" y="${y + 17}" font-size="13">${bar.label}</text><rect x="150" y="${y + 4}" width="${w.toFixed(1)}" height="18" fill="${bar.color}"/><text x="${(155 + w).toFixed(1)}" y="${y + 17}" font-size="12">${bar.value.toLocaleString("en")} ${unit}</text>`;
    })
    .join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif"><title>${title}</title><text x="10" y="18" font-size="14" font-weight="bold">${title}</text>${rows}</svg>\n`;
}

export const colors: Record<string, string> = {
  flashgate: "#2f81f7",
  "redis-as-truth": "#d29922",
  "mysql-only": "#8b949e",
};

export const roundsOf = (n: number) => `${n} round${n === 1 ? "" : "s"}`;

/** Each system's rows in a run's order of first appearance. */
export const systemsOf = (rows: SystemRow[]) => [...new Set(rows.map((r) => r.system))];

/**
 * Per round, flashgate's figure over the strongest variant of a baseline design in the same round (the
 * highest figure, or the lowest where lower is better): a ratio only ever compares figures of one round.
 */
export function roundRatios<T extends SystemRow>(
  rows: T[],
  design: string,
  figure: (row: T) => number,
  lowerIsBetter = false,
): number[] {
  const rounds = [...new Set(rows.map((r) => r.round ?? 1))];
  return rounds.flatMap((round) => {
    const inRound = rows.filter((r) => (r.round ?? 1) === round);
    const fg = inRound.find((r) => r.system === "flashgate");
    const theirs = inRound
      .filter((r) => r.design === design)
      .map(figure)
      .filter(Number.isFinite);
    if (!fg || !theirs.length) return [];
    const best = lowerIsBetter ? Math.min(...theirs) : Math.max(...theirs);
    return [lowerIsBetter ? best / figure(fg) : figure(fg) / best];
  });
}

/** "system: median (min–max)" of a figure over the rounds, for each system. */
export const perSystem = <T extends SystemRow>(rows: T[], figure: (row: T) => number, digits = 0) =>
  systemsOf(rows)
    .map((system) => `${system} ${spread(rows.filter((r) => r.system === system).map(figure), digits)}`)
    .join("; ");

export const stagesHeader =
  "binlog read: commit → Debezium's envelope; Kafka send: → the broker's append (the record's timestamp); consumed: Kafka's replication and the fetch → the maintainer's receipt; applied: → Redis";

/** A row's stages' p99s (ms), in the order of flashgate_cdc_stage_seconds' stages; "–" from a run before them. */
export const stagesCell = (stagesP99Ms: unknown) =>
  stagesP99Ms && typeof stagesP99Ms === "object"
    ? Object.values(stagesP99Ms as Record<string, number | null>)
        .map((ms) => ms ?? "–")
        .join(" / ")
    : "–";

export const seconds = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? "–" : (ms / 1000).toFixed(1);

export const latencyCell = (latency: Latency | undefined) =>
  latency ? `${latency.p50} / ${latency.p99}` : "–";

/** "database 12, kafka 8, …, machine 90": a stage's CPU µs per event by part. */
export const cpuParts = (parts: Record<string, number>) =>
  Object.entries(parts)
    .map(([part, us]) => `${part} ${us}`)
    .join(", ");
