import type { FlashgateRedis } from "@flashgate/cache";
import { percentile, serverErrorsOf } from "../lib/load.ts";
import { runOpenLoad } from "../lib/open-loop.ts";
import { databaseAvailable, mintTokens, purchaseRequest, settledAt, unitsSold } from "../lib/sale.ts";
import { defineScenario, type Stored } from "../lib/scenario.ts";
import type { Systems } from "../lib/systems.ts";
import { perSystem, roundsOf } from "../lib/tables.ts";
import { designRounds, openSale } from "./open-sale.ts";
import { transactionsOf } from "./storm.ts";

export interface FirstSecondProfile {
  units: number;
  /** Buyers arriving within the sale's first second, each a user of their own: twenty times the units. */
  arrivals: number;
  connections: number;
  rounds: number;
  processesPerSystem: number;
}

/**
 * The first second of a sale: a fresh SKU, and a crowd twenty times its units arriving within one second
 * (open loop), on each design. Where the designs differ is whether the crowd reaches the database: each
 * round reports how soon the units were sold (the last 201), the p99 of every answer from when its
 * request was due, the answers that were 5xx or never came, and the database transactions the sale cost.
 */
async function firstSecond(
  systems: Systems,
  redis: FlashgateRedis,
  secret: string,
  profile: FirstSecondProfile,
) {
  const tokens = mintTokens(secret, profile.arrivals, 70_000_000);
  // A warm-up sale as big as the measured one: with a tenth of it, flashgate's first measured turn sold out
  // after 1.3–1.6 s in 105–122 transactions, its later turns after 0.4–0.5 s in 15–28.
  const warmUpSize = { units: profile.units, requests: profile.arrivals, connections: 100 };
  const results = [];
  for await (const { round, place, system } of designRounds(
    systems,
    redis,
    secret,
    warmUpSize,
    profile.rounds,
  )) {
    const { pool } = system;
    const sale = await openSale(system, redis, profile.units);
    const transactionsBefore = await transactionsOf(systems, system);
    process.stderr.write(
      `  first second, round ${round}: ${system.name}, ${profile.arrivals} buyers in 1 s for ${profile.units} units…\n`,
    );
    let lastCreatedMs = 0;
    // The load's clock starts at its first request's due time, once its sockets are open.
    const called = performance.now();
    let origin: number | undefined;
    // When MySQL's stock reached 0 (polled every 100 ms): at once where MySQL decides, once its writer has
    // caught up for Redis-as-truth.
    const persisted = settledAt(
      async () => (await databaseAvailable(pool, sale)) === 0,
      () => performance.now() - (origin ?? called),
      120_000,
    );
    const load = await runOpenLoad(
      system.urls,
      {
        rate: profile.arrivals,
        durationMs: 1000,
        connections: profile.connections,
        timeoutMs: 10_000,
        onAnswer: (label, atMs) => {
          origin ??= performance.now() - atMs;
          if (label === "201") lastCreatedMs = Math.max(lastCreatedMs, atMs);
        },
      },
      (i) => purchaseRequest(sale, tokens[i], `first-${sale.activityId}-${i}`),
    );
    const created = load.latencies["201"]?.length ?? 0;
    const every = Object.values(load.latencies)
      .flat()
      .sort((a, b) => a - b);
    results.push({
      system: system.name,
      design: system.design,
      round,
      place,
      arrivals: load.sent,
      created,
      soldOutAfterMs: created === profile.units ? Math.round(lastCreatedMs) : null,
      p50Ms: Math.round(percentile(every, 50)),
      p99Ms: Math.round(percentile(every, 99)),
      serverErrors: serverErrorsOf(load.latencies),
      timedOut: load.timedOut,
      answers: Object.fromEntries(Object.entries(load.latencies).map(([label, v]) => [label, v.length])),
      // Redis-as-truth's writer persists later: what MySQL holds once the load is answered, and when it held all.
      unitsSoldInMySql: await unitsSold(pool, sale),
      allInMySqlAfterMs: await persisted,
      databaseTransactions: (await transactionsOf(systems, system)) - transactionsBefore,
    });
  }
  return { profile, results };
}

export const firstSecondScenario = defineScenario({
  name: "firstsecond",
  title: "the first second of a sale",
  profile: ({ quick, rounds, processes }) => ({
    ...(quick
      ? { units: 250, arrivals: 5_000, connections: 250 }
      : { units: 1000, arrivals: 20_000, connections: 500 }),
    processesPerSystem: processes,
    rounds,
  }),
  section: firstSecondSection,
  goals: (result) => [
    {
      what: "first second of a sale: flashgate's answers 5xx or never answered",
      values: (result?.results ?? [])
        .filter((r) => r.system === "flashgate")
        .map((r) => r.serverErrors + r.timedOut),
      target: 0,
      atMost: true,
    },
  ],
  run: (b, profile: FirstSecondProfile) => firstSecond(b.systems, b.redis, b.env.AUTH_JWT_SECRET, profile),
});

/** A fresh SKU and twenty times its units in buyers within one second, on each design. */
function firstSecondSection(first: Stored<Awaited<ReturnType<typeof firstSecond>>>): string[] {
  const { profile } = first;
  const lines = [
    "## The first second of a sale (open loop)",
    "",
    `A fresh SKU with ${profile.units} units and ${profile.arrivals} buyers (each a user of their own) arriving evenly within one second over ${profile.connections} connections, ${profile.processesPerSystem} server processes per design, ${roundsOf(profile.rounds)} in rotating order, after an uncounted warm-up sale per design. Sold out after: the last 201, from the first buyer's arrival; answer times from when each request was due; in MySQL: the units MySQL holds once every answer came (Redis-as-truth's writer persists later).`,
    "",
    "| round | system | sold out after ms | every order in MySQL after ms | p50 / p99 ms, every answer | 5xx | no answer | 201 | in MySQL when answered | DB transactions |",
    "|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of first.results)
    lines.push(
      `| ${r.round} | ${r.system} | ${r.soldOutAfterMs ?? "not sold out"} | ${r.allInMySqlAfterMs ?? "–"} | ${r.p50Ms} / ${r.p99Ms} | ${r.serverErrors} | ${r.timedOut} | ${r.created} | ${r.unitsSoldInMySql} | ${r.databaseTransactions} |`,
    );
  lines.push(
    "",
    `Sold out after (ms), median (min–max) of the rounds: ${perSystem(first.results, (r) => r.soldOutAfterMs ?? Number.NaN)}. Every order in MySQL after (ms): ${perSystem(first.results, (r) => r.allInMySqlAfterMs ?? Number.NaN)}. p99 of every answer (ms): ${perSystem(first.results, (r) => r.p99Ms)}.`,
    "",
  );
  return lines;
}
