import type { Pool } from "mysql2/promise";
import { commitOrders, cpuByPart, cpuPerEvent, withWriters } from "../lib/cdc-writers.ts";
import { stackCpuMs } from "../lib/env.ts";
import { createCatalogue, newSale } from "../lib/sale.ts";
import { defineScenario, type Stored } from "../lib/scenario.ts";
import type { Systems } from "../lib/systems.ts";
import { stagesCell, stagesHeader } from "../lib/tables.ts";
import { lagBetween, scrape } from "./lag.ts";

export interface SustainedProfile {
  /** Change events per second to write, each held for `seconds`. */
  rates: number[];
  seconds: number;
  writers: number;
  /** Each transaction: this many orders over its writer's SKUs, and one UPDATE of their stock. */
  ordersPerTransaction: number;
  skusPerWriter: number;
}

/**
 * The pipeline held at a steady rate rather than fed a burst: transactions of a decision's size due at
 * fixed times (open loop: a writer that falls behind commits at once, and the rate it achieved is
 * reported), for `seconds` at each rate; the commit → Redis lag meanwhile, from the maintainers'
 * histograms, and the machine's CPU per event. Held: the rate achieved and lag p99 under 2 s.
 */
async function cdcSustained(
  systems: Systems,
  pool: Pool,
  profile: SustainedProfile,
  stackCpu: () => Record<string, number>,
) {
  const { activityId } = newSale();
  const skus = profile.writers * profile.skusPerWriter;
  await createCatalogue(pool, activityId, skus, 100_000_000);
  const eventsPerTransaction = profile.ordersPerTransaction + profile.skusPerWriter;
  const results = [];
  let next = 0;
  for (const rate of profile.rates) {
    const transactionsPerSecond = rate / eventsPerTransaction;
    const total = Math.round(transactionsPerSecond * profile.seconds);
    process.stderr.write(`  cdc: sustained ${rate} events/s for ${profile.seconds} s…
`);
    const before = await scrape(systems.flashgate.maintainerUrls);
    const cpuBefore = cpuByPart(systems, stackCpu);
    const started = performance.now();
    let written = 0;
    await withWriters(pool, profile.writers, async (w, connection) => {
      const firstSku = w * profile.skusPerWriter + 1;
      for (let t = w; t < total; t += profile.writers) {
        const wait = started + (t / transactionsPerSecond) * 1000 - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const orders = Array.from({ length: profile.ordersPerTransaction }, (_, i) => {
          next += 1;
          return {
            requestId: `cdc-s-${activityId}-${next}`,
            skuId: firstSku + (i % profile.skusPerWriter),
            userId: next,
          };
        });
        await commitOrders(connection, activityId, orders, { first: firstSku, count: profile.skusPerWriter });
        written += eventsPerTransaction;
      }
    });
    const writtenMs = performance.now() - started;
    // The lag of every change written: the maintainers' histograms once they applied them all.
    // (Or until they stop for 5 s: the pipeline lost something, and the row says so.)
    let cdc = lagBetween(before, await scrape(systems.flashgate.maintainerUrls));
    const handled = (lag: typeof cdc) => lag.applied + lag.skipped;
    for (let idleMs = 0; handled(cdc) < written && idleMs < 5000; ) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const now = lagBetween(before, await scrape(systems.flashgate.maintainerUrls));
      idleMs = handled(now) > handled(cdc) ? 0 : idleMs + 250;
      cdc = now;
    }
    const achieved = Math.round((written / writtenMs) * 1000);
    results.push({
      targetPerSecond: rate,
      achievedPerSecond: achieved,
      written,
      applied: cdc.applied,
      skipped: cdc.skipped,
      lagP50Ms: cdc.lagP50Ms,
      lagP99Ms: cdc.lagP99Ms,
      stagesP99Ms: cdc.stagesP99Ms,
      cpuUsPerEvent: cpuPerEvent(cpuBefore, cpuByPart(systems, stackCpu), written),
      held:
        achieved >= 0.95 * rate && handled(cdc) >= written && cdc.lagP99Ms !== null && cdc.lagP99Ms < 2000,
    });
  }
  return { profile: { ...profile, eventsPerTransaction }, results };
}

export const cdcSteadyScenario = defineScenario({
  name: "cdcsteady",
  title: "CDC held at steady rates",
  // Decision-sized transactions (100 orders over 20 SKUs) at the goal's rate and below it.
  profile: ({ quick }) => ({
    rates: quick ? [5_000, 10_000, 20_000] : [5_000, 7_500, 10_000, 20_000],
    seconds: quick ? 10 : 60,
    writers: 8,
    ordersPerTransaction: 100,
    skusPerWriter: 20,
  }),
  section: cdcSteadySection,
  goals: (steady) => [
    {
      what: "CDC held for its seconds with lag p99 < 2 s, events/s",
      values: steady
        ? [Math.max(0, ...steady.results.filter((r) => r.held).map((r) => r.achievedPerSecond))]
        : [],
      target: 20_000,
    },
  ],
  run: (b, profile: SustainedProfile) =>
    cdcSustained(b.systems, b.systems.flashgate.pool, profile, () => stackCpuMs(b.ctx)),
});

/** The pipeline held at steady rates: lag and CPU per event at each. */
function cdcSteadySection(steady: Stored<Awaited<ReturnType<typeof cdcSustained>>>): string[] {
  const { profile } = steady;
  return [
    "## CDC held at steady rates",
    "",
    `Transactions of ${profile.ordersPerTransaction} orders over ${profile.skusPerWriter} SKUs (${profile.eventsPerTransaction} events), ${profile.writers} writers, due at fixed times, ${profile.seconds} s per rate; commit → Redis lag from the maintainers' histograms (${stagesHeader}). Held: the rate achieved and lag p99 under 2 s.`,
    "",
    "| target events/s | achieved | applied (+ in a rebuild) | lag p50 ms | lag p99 ms | stages p99 ms | machine CPU µs / event (database, connect, kafka, maintainers) | held |",
    "|---|---|---|---|---|---|---|---|",
    ...steady.results.map(
      (r) =>
        `| ${r.targetPerSecond} | ${r.achievedPerSecond} | ${r.applied}${r.skipped ? ` (+ ${r.skipped})` : ""} | ${r.lagP50Ms ?? "–"} | ${r.lagP99Ms ?? "–"} | ${stagesCell(r.stagesP99Ms)} | ${r.cpuUsPerEvent.machine} (${r.cpuUsPerEvent.database}, ${r.cpuUsPerEvent.connect}, ${r.cpuUsPerEvent.kafka}, ${r.cpuUsPerEvent.maintainers}) | ${r.held ? "yes" : "no"} |`,
    ),
    "",
  ];
}
