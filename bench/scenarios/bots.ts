import type { FlashgateRedis } from "@flashgate/cache";
import { type Latency, latencySummary, runLoad, serverErrorsOf } from "../lib/load.ts";
import { runOpenLoad } from "../lib/open-loop.ts";
import { mintTokens, purchaseRequest } from "../lib/sale.ts";
import { defineScenario, type Stored } from "../lib/scenario.ts";
import type { Systems } from "../lib/systems.ts";
import { latencyCell, perSystem, roundsOf } from "../lib/tables.ts";
import { designRounds, openSale } from "./open-sale.ts";
import { transactionsOf } from "./storm.ts";

export interface BotsProfile {
  /** Arrivals per second, for `seconds`: one in ten a new buyer, the rest bots. */
  rate: number;
  seconds: number;
  /** Users who bought before the window opens and then keep coming: half with new keys, half replaying theirs. */
  botUsers: number;
  connections: number;
  rounds: number;
  processesPerSystem: number;
}

/**
 * Bots beside buyers while stock lasts: a sale whose bot users have each bought once, then an open-loop
 * load in which one request in ten is a new buyer and nine are those users again — half buying once more
 * with a new key (already purchased), half repeating their first request's key (the order again). The
 * units last about half the window. Where the designs differ is what a bot's request costs: the new
 * buyers' answer times beside them, and the database transactions the window took.
 */
async function bots(systems: Systems, redis: FlashgateRedis, secret: string, profile: BotsProfile) {
  const arrivals = profile.rate * profile.seconds;
  const newBuyers = Math.ceil(arrivals / 10);
  const units = profile.botUsers + Math.ceil(newBuyers / 2);
  const botTokens = mintTokens(secret, profile.botUsers, 80_000_000);
  const buyerTokens = mintTokens(secret, newBuyers, 81_000_000);
  const warmUpSize = { units: units / 10, requests: arrivals / 10, connections: 100 };
  const results = [];
  for await (const { round, place, system } of designRounds(
    systems,
    redis,
    secret,
    warmUpSize,
    profile.rounds,
  )) {
    const sale = await openSale(system, redis, units);
    const firstKey = (bot: number) => `bot-${sale.activityId}-${bot}`;
    // The bots' own purchases, before the window opens.
    await runLoad(system.urls, profile.botUsers, Math.min(50, profile.botUsers), (i) =>
      purchaseRequest(sale, botTokens[i], firstKey(i)),
    );
    const transactionsBefore = await transactionsOf(systems, system);
    process.stderr.write(
      `  bots, round ${round}: ${system.name}, ${arrivals} requests in ${profile.seconds} s, 9 in 10 from ${profile.botUsers} bots…\n`,
    );
    let lastCreatedMs = 0;
    const load = await runOpenLoad(
      system.urls,
      {
        rate: profile.rate,
        durationMs: profile.seconds * 1000,
        connections: profile.connections,
        timeoutMs: 10_000,
        onAnswer: (label, atMs) => {
          if (label === "201") lastCreatedMs = Math.max(lastCreatedMs, atMs);
        },
      },
      (i) => {
        if (i % 10 === 0) return purchaseRequest(sale, buyerTokens[i / 10], `buyer-${sale.activityId}-${i}`);
        const bot = i % profile.botUsers;
        const key = i % 2 === 0 ? `${firstKey(bot)}-again-${i}` : firstKey(bot);
        return purchaseRequest(sale, botTokens[bot], key);
      },
    );
    results.push({
      system: system.name,
      design: system.design,
      round,
      place,
      requests: load.sent,
      created: load.latencies["201"]?.length ?? 0,
      newBuyerUnits: units - profile.botUsers,
      soldOutAfterMs: Math.round(lastCreatedMs),
      latencyMs: latencySummary(load.latencies),
      serverErrors: serverErrorsOf(load.latencies),
      timedOut: load.timedOut,
      databaseTransactions: (await transactionsOf(systems, system)) - transactionsBefore,
    });
  }
  return { profile: { ...profile, units, newBuyers }, results };
}

export const botsScenario = defineScenario({
  name: "bots",
  title: "bots beside buyers",
  profile: ({ quick, rounds, processes }) => ({
    ...(quick
      ? { rate: 5_000, seconds: 1, botUsers: 100, connections: 250 }
      : { rate: 10_000, seconds: 2, botUsers: 200, connections: 500 }),
    processesPerSystem: processes,
    rounds,
  }),
  section: botsSection,
  run: (b, profile: BotsProfile) => bots(b.systems, b.redis, b.env.AUTH_JWT_SECRET, profile),
});

/** Nine requests in ten from users who already bought, beside new buyers, while stock lasts. */
type BotsResult = Awaited<ReturnType<typeof bots>>;

function botsSection(run: Stored<BotsResult>): string[] {
  const { profile } = run;
  const lines = [
    "## Bots beside buyers (open loop)",
    "",
    `${profile.rate} requests/s for ${profile.seconds} s over ${profile.connections} connections, ${profile.processesPerSystem} server processes per design, ${roundsOf(profile.rounds)}: one in ten from a new buyer (${profile.newBuyers} of them for ${profile.units - profile.botUsers} units), nine from ${profile.botUsers} users who bought before the window — half buying again with a new key, half repeating their first key. Answer times from when each request was due.`,
    "",
    "| round | system | new buyers' 201 p50 / p99 ms | 201 | SOLD_OUT | already bought: p99 ms (count) | replays: p99 ms (count) | 429 | 5xx | no answer | DB transactions |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  const cell = (latency: Latency | undefined) => (latency ? `${latency.p99} (${latency.count})` : "–");
  for (const r of run.results)
    lines.push(
      `| ${r.round} | ${r.system} | ${latencyCell(r.latencyMs["201"])} | ${r.created} | ${r.latencyMs["409 SOLD_OUT"]?.count ?? 0} | ${cell(r.latencyMs["409 ALREADY_PURCHASED"])} | ${cell(r.latencyMs["200"])} | ${r.latencyMs["429 RATE_LIMITED"]?.count ?? 0} | ${r.serverErrors} | ${r.timedOut} | ${r.databaseTransactions} |`,
    );
  lines.push(
    "",
    `New buyers' 201 p99 (ms), median (min–max) of the rounds: ${perSystem(run.results, (r) => r.latencyMs["201"]?.p99 ?? Number.NaN)}.`,
    "",
  );
  return lines;
}
