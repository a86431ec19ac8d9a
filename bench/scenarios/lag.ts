import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { histogramBuckets, parsePrometheus, quantileBetween, sumOf } from "@flashgate/telemetry/scrape";
import type { Pool } from "mysql2/promise";
import { createSale, newSale } from "../lib/sale.ts";
import { defineScenario, type Stored } from "../lib/scenario.ts";
import { barChart, stagesCell, stagesHeader } from "../lib/tables.ts";

/** Every maintainer's samples together: the group's instances share the partitions, and so the lag. */
export const scrape = async (urls: string[]) =>
  (
    await Promise.all(urls.map(async (url) => parsePrometheus(await (await fetch(`${url}/metrics`)).text())))
  ).flat();

type Samples = Awaited<ReturnType<typeof scrape>>;

/** The stages of the maintainers' flashgate_cdc_stage_seconds, in order. */
const stages = ["binlog-read", "kafka-send", "consumed", "applied"] as const;

/**
 * Commit → Redis lag between two scrapes (ms, interpolated within the histogram's buckets), the p99 of
 * each stage on the way, and the changes applied.
 */
export function lagBetween(before: Samples, after: Samples) {
  const quantileMs = (name: string, q: number, labels: Record<string, string> = {}) => {
    const buckets = (samples: Samples) =>
      histogramBuckets(
        samples.filter(
          (s) =>
            s.labels.source === "row" &&
            Object.entries(labels).every(([key, value]) => s.labels[key] === value),
        ),
        name,
      );
    const seconds = quantileBetween(buckets(before), buckets(after), q);
    return seconds === undefined ? null : Math.round(seconds * 1000);
  };
  const countBetween = (result: string) =>
    sumOf(after, "flashgate_cdc_events_total", { result }) -
    sumOf(before, "flashgate_cdc_events_total", { result });
  return {
    lagP50Ms: quantileMs("flashgate_cdc_lag_seconds", 0.5),
    lagP99Ms: quantileMs("flashgate_cdc_lag_seconds", 0.99),
    stagesP99Ms: Object.fromEntries(
      stages.map((stage) => [stage, quantileMs("flashgate_cdc_stage_seconds", 0.99, { stage })]),
    ),
    applied: countBetween("applied"),
    // Changes already in Redis through a SKU's rebuild from MySQL (a new SKU's first changes).
    skipped: countBetween("skipped"),
  };
}

/**
 * Mixed single-row writes (stock moves on 20 SKUs, paced) at each rate; commit → Redis lag from the
 * maintainer's histogram of row DATETIME(3) → apply, between scrapes. Bucket bounds limit precision
 * (interpolated within 5/10/25/50/100/250/500/1000 ms buckets).
 */
export async function lagScenario(pool: Pool, maintainerUrls: string[], rates: number[], seconds: number) {
  const skus = Array.from({ length: 20 }, () => newSale());
  for (const sku of skus) await createSale(pool, sku, 1_000_000);
  await new Promise((r) => setTimeout(r, 2000));
  const results = [];
  for (const rate of rates) {
    const before = await scrape(maintainerUrls);
    const started = Date.now();
    let sent = 0;
    let inFlight = 0;
    let dropped = 0;
    while (Date.now() - started < seconds * 1000) {
      const due = Math.floor(((Date.now() - started) / 1000) * rate);
      while (sent < due) {
        if (inFlight >= 64) {
          dropped += due - sent;
          sent = due;
          break;
        }
        const sku = skus[sent % skus.length];
        inFlight += 1;
        sent += 1;
        pool
          .query("UPDATE sale_stock SET available = available + ? WHERE activity_id = ? AND sku_id = ?", [
            sent % 2 ? 1 : -1,
            sku.activityId,
            sku.skuId,
          ])
          .finally(() => {
            inFlight -= 1;
          });
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    while (inFlight > 0) await new Promise((r) => setTimeout(r, 5));
    const writeSeconds = (Date.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, 2000));
    const after = await scrape(maintainerUrls);
    const { lagP50Ms, lagP99Ms, stagesP99Ms, applied } = lagBetween(before, after);
    results.push({
      targetPerSecond: rate,
      achievedPerSecond: Math.round((sent - dropped) / writeSeconds),
      appliedChanges: applied,
      lagP50Ms,
      lagP99Ms,
      stagesP99Ms,
      droppedByGenerator: dropped,
      // Bounded: the maintainer applied what was written, with p99 under a second.
      bounded: lagP99Ms !== null && lagP99Ms < 1000 && applied >= 0.99 * (sent - dropped),
    });
  }
  return { seconds, results };
}

export const cdcLagScenario = defineScenario({
  name: "lag",
  title: "CDC lag",
  profile: ({ quick }) => ({ rates: [250, 500, 1000, 2000], seconds: quick ? 2 : 15 }),
  section: lagSection,
  run: (b, { rates, seconds }: { rates: number[]; seconds: number }) =>
    lagScenario(b.systems.flashgate.pool, b.systems.flashgate.maintainerUrls, rates, seconds),
});

/** CDC lag by write rate; draws bench/lag.svg. */
function lagSection(lag: Stored<Awaited<ReturnType<typeof lagScenario>>>, folder: string): string[] {
  const lines = [
    "## CDC lag",
    "",
    `Commit (row DATETIME(3)) → Redis apply, ${lag.seconds} s per rate; and each stage's p99 on the way (${stagesHeader}).`,
    "",
    "| target changes/s | achieved | applied | lag p50 ms | lag p99 ms | stages p99 ms | bounded |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const r of lag.results)
    lines.push(
      `| ${r.targetPerSecond} | ${r.achievedPerSecond} | ${r.appliedChanges} | ${r.lagP50Ms ?? "–"} | ${r.lagP99Ms ?? "–"} | ${stagesCell(r.stagesP99Ms)} | ${r.bounded ? "yes" : "no"} |`,
    );
  // The rate the writer reached, not the one it aimed at: with a sync per commit it may fall short.
  const bounded = lag.results.filter((r) => r.bounded).map((r) => r.achievedPerSecond);
  lines.push(
    "",
    `Highest achieved rate with p99 < 1 s: **${bounded.length ? Math.max(...bounded) : "none"}** changes/s`,
  );
  writeFileSync(
    join(folder, "lag.svg"),
    barChart(
      "CDC lag p99 (ms) by write rate",
      lag.results.map((r) => ({
        label: `${r.targetPerSecond}/s`,
        value: r.lagP99Ms ?? 0,
        color: "#2f81f7",
      })),
      "ms",
    ),
  );
  lines.push("", "![lag](lag.svg)", "");
  return lines;
}
