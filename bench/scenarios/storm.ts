import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FlashgateRedis } from "@flashgate/cache";
import { compareSku } from "@flashgate/sync";
import { parsePrometheus, sumOf } from "@flashgate/telemetry/scrape";
import { eventually } from "@flashgate/testkit";
import { latencySummaryWithAll, runLoad } from "../lib/load.ts";
import { databaseAvailable, mintTokens, purchaseRequest, unitsSold } from "../lib/sale.ts";
import { defineScenario, type Stored } from "../lib/scenario.ts";
import type { RunningSystem, Systems } from "../lib/systems.ts";
import {
  barChart,
  colors,
  median,
  perSystem,
  roundRatios,
  roundsOf,
  spread,
  systemsOf,
} from "../lib/tables.ts";
import { designRounds, openSale } from "./open-sale.ts";

export interface StormProfile {
  units: number;
  requests: number;
  users: number;
  connections: number;
  rounds: number;
  processesPerSystem: number;
}

/** What Redis-as-truth's own Redis says is left of a SKU. */
export const redisTruthStock = async (system: RunningSystem, sale: { activityId: number; skuId: number }) =>
  (
    (await (await fetch(`${system.url}/admin/stock/${sale.activityId}/${sale.skuId}`)).json()) as {
      available: number;
    }
  ).available;

const apiTransactions = async (url: string) =>
  sumOf(
    parsePrometheus(await (await fetch(`${url}/metrics`)).text()),
    "flashgate_purchase_transactions_total",
  );
const statsTransactions = async (url: string) =>
  ((await (await fetch(`${url}/stats`)).json()) as { transactions: number }).transactions;
/** Database purchase transactions so far, summed over the design's processes. */
export const transactionsOf = async (systems: Systems, system: RunningSystem) => {
  const counts =
    system === systems.flashgate
      ? systems.flashgate.metricsUrls.map(apiTransactions)
      : system.urls.map(statsTransactions);
  return (await Promise.all(counts)).reduce((sum, n) => sum + n, 0);
};

/** 1,000 units, 100,000 requests from 20,000 users, as fast as the machine allows, for each design, each round. */
async function storm(systems: Systems, redis: FlashgateRedis, secret: string, profile: StormProfile) {
  const tokens = mintTokens(secret, profile.users, 10_000_000);
  const results = [];
  const warmUpSize = {
    units: Math.ceil(profile.units / 10),
    requests: Math.ceil(profile.requests / 10),
    connections: profile.connections,
  };
  for await (const { round, place, system } of designRounds(
    systems,
    redis,
    secret,
    warmUpSize,
    profile.rounds,
  )) {
    const { pool } = system;
    const sale = await openSale(system, redis, profile.units);
    const before = await transactionsOf(systems, system);
    process.stderr.write(`  storm, round ${round}: ${system.name}, ${profile.requests} requests…\n`);
    const load = await runLoad(system.urls, profile.requests, profile.connections, (i) =>
      purchaseRequest(sale, tokens[i % profile.users], `storm-${sale.activityId}-${i}`),
    );
    // Asynchronous parts settle before judging: the baseline's order writer has persisted every 201,
    // flashgate's CDC has applied every sale. One that never settles is judged as it stands after 15 s.
    const created = load.latencies["201"]?.length ?? 0;
    await eventually(
      async () => {
        if ((await unitsSold(pool, sale)) < created) throw new Error("orders still being written");
        if (
          system === systems.flashgate &&
          !(await compareSku(pool, redis, sale.activityId, sale.skuId)).equal
        )
          throw new Error("cache still catching up");
      },
      { timeoutMs: 15_000 },
    ).catch(() => {});
    const transactions = (await transactionsOf(systems, system)) - before;
    const sold = await unitsSold(pool, sale);
    let drift: number | null = null;
    if (system === systems.flashgate) {
      const comparison = await compareSku(pool, redis, sale.activityId, sale.skuId);
      drift = comparison.equal
        ? 0
        : Math.abs((comparison.cache?.available ?? 0) - (comparison.database?.available ?? 0)) || 1;
    } else if (system.design === "redis-as-truth") {
      drift = Math.abs((await redisTruthStock(system, sale)) - (await databaseAvailable(pool, sale)));
    }
    results.push({
      system: system.name,
      design: system.design,
      round,
      place,
      requests: load.requests,
      requestsPerSecond: Math.round(load.perSecond),
      errors: load.errors,
      latencyMs: latencySummaryWithAll(load.latencies),
      timeline250ms: load.timeline,
      unitsSold: sold,
      soldExactly: sold === profile.units,
      databaseTransactions: transactions,
      transactionsPerUnitSold: sold ? Math.round((transactions / sold) * 1000) / 1000 : null,
      finalDrift: drift,
    });
  }
  return { profile, results };
}

export const stormScenario = defineScenario({
  name: "storm",
  title: "storm",
  profile: ({ quick, rounds, processes }) => ({
    ...(quick
      ? { units: 200, requests: 10_000, users: 5_000, connections: 100 }
      : { units: 1000, requests: 100_000, users: 20_000, connections: 100 }),
    processesPerSystem: processes,
    rounds,
  }),
  section: stormSections,
  run: (b, profile: StormProfile) => storm(b.systems, b.redis, b.env.AUTH_JWT_SECRET, profile),
});

type StormResult = Stored<Awaited<ReturnType<typeof storm>>>;

/** One storm's rows, every round, and flashgate's ratio to the strongest of each baseline round by round. */
function stormTable(results: StormResult["results"]): string[] {
  const lines = [
    "| round | system | req/s | units sold | DB tx / unit sold | p50 / p99 / p99.9 ms (all) | p50 / p99 / p99.9 ms (201) | p50 / p99 / p99.9 ms (409 SOLD_OUT) | 503s | final drift | errors |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of results) {
    const lat = (label: string) =>
      r.latencyMs[label]
        ? `${r.latencyMs[label].p50} / ${r.latencyMs[label].p99} / ${r.latencyMs[label].p999}`
        : "–";
    lines.push(
      `| ${r.round ?? 1} | ${r.system} | ${r.requestsPerSecond} | ${r.unitsSold}${r.soldExactly ? "" : " ✗"} | ${r.transactionsPerUnitSold ?? "–"} | ${lat("all")} | ${lat("201")} | ${lat("409 SOLD_OUT")} | ${r.latencyMs["503 UNAVAILABLE"]?.count ?? 0} | ${r.finalDrift ?? "n/a"} | ${r.errors} |`,
    );
  }
  const rate = (r: StormResult["results"][number]) => r.requestsPerSecond;
  const p99 = (r: StormResult["results"][number]) => r.latencyMs.all?.p99;
  lines.push(
    "",
    `Requests/s, median (min–max) of the rounds: ${perSystem(results, rate)}.`,
    "",
    `flashgate over the strongest MySQL-only, requests/s: **${spread(roundRatios(results, "mysql-only", rate), 2)}×**; over the strongest Redis-as-truth: **${spread(roundRatios(results, "redis-as-truth", rate), 2)}×**; p99 of all answers, the strongest MySQL-only's over flashgate's: ${spread(roundRatios(results, "mysql-only", p99, true), 2)}× (medians of the rounds' ratios).`,
  );
  return lines;
}

/** The storm on MySQL and, beside it, on MariaDB; draws storm.svg (medians of the rounds). */
function stormSections(
  storm: StormResult,
  folder: string,
  onEngine: (engine: string) => StormResult | undefined,
): string[] {
  const lines = [
    "## Storm (closed loop)",
    "",
    `${storm.profile.units} units, ${storm.profile.requests} requests from ${storm.profile.users} users, ${storm.profile.connections} connections spread over ${storm.profile.processesPerSystem} server processes per design (one per core, ADR 0008); ${roundsOf(storm.profile.rounds)}, the designs' order rotating each round, the machine settled before each; each design first serves an uncounted warm-up sale a tenth that size (other users).`,
    "",
    ...stormTable(storm.results),
  ];
  writeFileSync(
    join(folder, "storm.svg"),
    barChart(
      "Storm throughput (req/s, median of the rounds, higher is better)",
      systemsOf(storm.results).map((system) => {
        const rows = storm.results.filter((r) => r.system === system);
        return {
          label: system,
          value: Math.round(median(rows.map((r) => r.requestsPerSecond))),
          color: colors[rows[0].design] ?? "#888",
        };
      }),
      "req/s",
    ),
  );
  lines.push("", "![storm throughput](storm.svg)", "");
  const mariadb = onEngine("mariadb");
  if (mariadb) {
    const flashgate = (run: StormResult) =>
      median(run.results.filter((r) => r.system === "flashgate").map((r) => r.requestsPerSecond));
    lines.push(
      "### The same storm on MariaDB",
      "",
      `On ${mariadb.facts?.database ?? "MariaDB"}, with the same profile and durability, on a bench stack of its own after the MySQL one was stopped.`,
      "",
      ...stormTable(mariadb.results),
      "",
      `flashgate on MySQL over on MariaDB, requests/s (medians of the rounds): **${(flashgate(storm) / flashgate(mariadb)).toFixed(2)}×**.`,
      "",
    );
  }
  return lines;
}
