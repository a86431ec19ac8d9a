import { type FlashgateRedis, skuKeys } from "@flashgate/cache";
import { compareSku } from "@flashgate/sync";
import { cdcPathCpuMs } from "../lib/env.ts";
import { latencySummary, runLoad } from "../lib/load.ts";
import { databaseAvailable, mintTokens, purchaseRequest, settledAt, unitsSold } from "../lib/sale.ts";
import { defineScenario, type Stored } from "../lib/scenario.ts";
import type { Systems } from "../lib/systems.ts";
import { latencyCell, perSystem, roundRatios, roundsOf, seconds, spread } from "../lib/tables.ts";
import { lagBetween, scrape } from "./lag.ts";
import { designRounds, openSale } from "./open-sale.ts";
import { transactionsOf } from "./storm.ts";

export interface BigStockProfile {
  units: number;
  requests: number;
  users: number;
  connections: number;
  rounds: number;
}

/**
 * One SKU with a sale's worth of stock (100,000 units, 300,000 requests from 150,000 users: every user
 * comes twice, with a new key) on each design. What counts is how fast orders MySQL holds are made:
 * flashgate and MySQL-only decide each one in MySQL; Redis-as-truth admits in Redis and persists later,
 * so its admissions per second and when MySQL caught up are both reported.
 */
async function bigStock(
  systems: Systems,
  redis: FlashgateRedis,
  secret: string,
  profile: BigStockProfile,
  cdcCpuMs: () => number,
) {
  const tokens = mintTokens(secret, profile.users, 40_000_000);
  // A tenth of the sale first: the CDC path's JVMs are still compiling on a fresh stack, and a
  // smaller warm-up left the first design measured at half its speed.
  const warmUpSize = {
    units: profile.units / 10,
    requests: profile.requests / 10,
    connections: profile.connections,
  };
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
    const maintainerBefore = await scrape(systems.flashgate.maintainerUrls);
    const cdcCpuBefore = cdcCpuMs();
    process.stderr.write(`  big stock, round ${round}: ${system.name}, ${profile.requests} requests…\n`);
    let lastCreatedMs = 0;
    const started = performance.now();
    const clock = () => performance.now() - started;
    // When MySQL's stock reached 0 (a primary-key read, every 100 ms from the start): at once for the
    // designs that decide there, once its writer has caught up for Redis-as-truth.
    const persisted = settledAt(async () => (await databaseAvailable(pool, sale)) === 0, clock, 600_000);
    const load = await runLoad(
      system.urls,
      profile.requests,
      profile.connections,
      (i) => purchaseRequest(sale, tokens[i % profile.users], `big-${sale.activityId}-${i}`),
      {
        onAnswer: (_, label, atMs) => {
          if (label === "201") lastCreatedMs = atMs;
        },
      },
    );
    const created = load.latencies["201"]?.length ?? 0;
    const persistedMs = await persisted;
    // When flashgate's cache had applied them all.
    const convergedMs =
      system === systems.flashgate
        ? await settledAt(
            async () => (await compareSku(pool, redis, sale.activityId, sale.skuId)).equal,
            clock,
            180_000,
          )
        : null;
    const cdcCpuMsOfTurn = cdcCpuMs() - cdcCpuBefore;
    const sold = await unitsSold(pool, sale);
    // The SKU's hash holds a field per buyer: what 100,000 of them cost in Redis.
    const hashBytes =
      system === systems.flashgate
        ? Number(
            await redis.call("MEMORY", "USAGE", skuKeys(sale.activityId, sale.skuId).sku, "SAMPLES", "0"),
          )
        : null;
    const transactions = (await transactionsOf(systems, system)) - transactionsBefore;
    results.push({
      system: system.name,
      design: system.design,
      round,
      place,
      requests: load.requests,
      requestsPerSecond: Math.round(load.perSecond),
      errors: load.errors,
      created,
      ordersPerSecond: lastCreatedMs ? Math.round((created / lastCreatedMs) * 1000) : 0,
      timeToSellOutMs: sold === profile.units ? Math.round(lastCreatedMs) : null,
      persistedAfterMs: persistedMs,
      cacheConvergedAfterMs: convergedMs,
      redisBytesPerBuyer: hashBytes && sold ? Math.round(hashBytes / sold) : null,
      latencyMs: latencySummary(load.latencies),
      unitsSold: sold,
      soldExactly: sold === profile.units,
      databaseTransactions: transactions,
      transactionsPerUnitSold: sold ? Math.round((transactions / sold) * 1000) / 1000 : null,
      /** flashgate's CDC path's CPU from the first request until MySQL (and flashgate's cache) held every order. */
      cdcCpuMs: cdcCpuMsOfTurn,
      cdc:
        system === systems.flashgate
          ? lagBetween(maintainerBefore, await scrape(systems.flashgate.maintainerUrls))
          : null,
    });
  }
  return { profile, results };
}

export const bigStockScenario = defineScenario({
  name: "bigstock",
  title: "big stock",
  profile: ({ quick, rounds }) => ({
    ...(quick
      ? { units: 5_000, requests: 15_000, users: 7_500 }
      : { units: 50_000, requests: 150_000, users: 75_000 }),
    connections: 100,
    rounds,
  }),
  section: bigStockSection,
  run: (b, profile: BigStockProfile) =>
    bigStock(b.systems, b.redis, b.env.AUTH_JWT_SECRET, profile, () =>
      cdcPathCpuMs(b.ctx, b.systems.flashgate.maintainersCpuMs),
    ),
});

type BigStockResult = Stored<Awaited<ReturnType<typeof bigStock>>>;

/** One SKU with 100,000 units on each design. */
function bigStockSection(big: BigStockResult): string[] {
  const { profile } = big;
  const lines = [
    "## Big stock (closed loop)",
    "",
    `One SKU with ${profile.units} units; ${profile.requests} requests from ${profile.users} users (each comes twice, with a new key) over ${profile.connections} connections, 2 server processes per design, ${roundsOf(profile.rounds)} in rotating order, after an uncounted warm-up sale per design. Orders/s is orders created over the time to the last one (for Redis-as-truth: admissions, which MySQL holds only once its writer has caught up). CDC path CPU: Connect, Kafka and flashgate's maintainers over the turn, from the first request until MySQL (and for flashgate its cache) held every order — the baselines decide in a database of their own that flashgate's CDC does not capture, so theirs is what the path spends with none of their orders to carry (its idle work, Debezium reading past their binlog events).`,
    "",
    "| round | system | orders/s | sold out after s | in MySQL after s | cache converged after s | req/s | 201 p50 / p99 ms | SOLD_OUT p50 / p99 ms | units sold | DB tx / unit | CDC lag p99 ms | CDC path CPU s | Redis bytes / buyer |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of big.results)
    lines.push(
      `| ${r.round} | ${r.system} | ${r.ordersPerSecond} | ${seconds(r.timeToSellOutMs)} | ${seconds(r.persistedAfterMs)} | ${seconds(r.cacheConvergedAfterMs)} | ${r.requestsPerSecond} | ${latencyCell(r.latencyMs["201"])} | ${latencyCell(r.latencyMs["409 SOLD_OUT"])} | ${r.unitsSold}${r.soldExactly ? "" : " ✗"} | ${r.transactionsPerUnitSold ?? "–"} | ${r.cdc?.lagP99Ms ?? "–"} | ${r.cdcCpuMs === undefined ? "–" : seconds(r.cdcCpuMs)} | ${r.redisBytesPerBuyer ?? "–"} |`,
    );
  const orders = (r: BigStockResult["results"][number]) => r.ordersPerSecond;
  lines.push(
    "",
    `Orders/s, median (min–max) of the rounds: ${perSystem(big.results, orders)}. flashgate over the strongest Redis-as-truth's admissions/s: **${spread(roundRatios(big.results, "redis-as-truth", orders), 2)}×**; over the strongest MySQL-only's orders/s: **${spread(roundRatios(big.results, "mysql-only", orders), 2)}×**.`,
    "",
  );
  return lines;
}
