import type { FlashgateRedis } from "@flashgate/cache";
import type { Pool } from "mysql2/promise";
import { machineSettled } from "../lib/env.ts";
import type { LoadRequest } from "../lib/load.ts";
import { type Ceiling, findCeiling, runOpenLoad } from "../lib/open-loop.ts";
import { mintTokens, purchaseRequest, retireSales } from "../lib/sale.ts";
import type { Scenario } from "../lib/scenario.ts";
import type { RunningSystem, Systems } from "../lib/systems.ts";
import { type CatalogueProfile, demand, openCatalogue } from "./catalogue.ts";
import { designRounds, openSale } from "./open-sale.ts";

export interface OpenLoopProfile {
  rounds: number;
  stepMs: number;
  /** Arrivals at the step's rate before its measured ones (fresh sockets, a fresh sale). */
  warmupMs: number;
  startRate: number;
  /** The least rate tried below a start rate that broke. */
  minRate: number;
  /** How many times a rate runs before it counts as broken. */
  tries: number;
  factor: number;
  /** Past the first broken step, the rate is bisected until the bounds are this close (0.05: 5 %). */
  resolution: number;
  maxRate: number;
  connections: number;
  /** The storm's units as a share of its step's arrivals: a flood of buyers for a few units. */
  stormUnitShare: number;
  catalogue: { skus: number; zipf: number };
}

/** What a step needs: a fresh sale, and the request of each of its arrivals. */
type Prepare = (system: RunningSystem, rate: number) => Promise<(index: number) => LoadRequest>;

/**
 * Each design's highest sustained arrival rate per scenario: the rate is stepped up until the answers'
 * p99 (from when each request was due) passes 200 ms or more than 0.1 % of requests fail or time out.
 * Every step sells a fresh sale, big enough to last it where orders are the point. Three rounds, the
 * designs' order rotated each round; ratios are taken within a round.
 */
async function openLoop(
  systems: Systems,
  pool: Pool,
  redis: FlashgateRedis,
  secret: string,
  profile: OpenLoopProfile,
) {
  const perStep = Math.ceil((profile.maxRate * (profile.warmupMs + profile.stepMs)) / 1000);
  const tokens = mintTokens(secret, Math.min(perStep, 300_000), 60_000_000);
  for await (const _ of designRounds(
    systems,
    pool,
    redis,
    secret,
    { units: 500, requests: 5000, connections: 100 },
    1,
  ));

  const catalogueProfile: CatalogueProfile = {
    skus: profile.catalogue.skus,
    zipf: profile.catalogue.zipf,
    requests: perStep,
    users: tokens.length,
    // As much stock as no step can sell: orders per second on contended SKUs, not sold-out answers.
    unitsPerSku: 10_000_000,
    connections: profile.connections,
  };
  const { skuOf, userOf } = demand(catalogueProfile);
  const arrivals = (rate: number) => Math.ceil((rate * (profile.warmupMs + profile.stepMs)) / 1000);
  const scenarios: Record<string, { prepare: Prepare; measured: (label: string) => boolean }> = {
    // One SKU with units for a small share of the step's arrivals: nearly every answer is the sold-out
    // refusal, each one counts.
    storm: {
      measured: (label) => label === "201" || label.startsWith("409"),
      prepare: async (system, rate) => {
        const units = Math.ceil(arrivals(rate) * profile.stormUnitShare);
        const sale = await openSale(system, pool, redis, units);
        return (i) => purchaseRequest(sale, tokens[i % tokens.length], `ol-storm-${sale.activityId}-${i}`);
      },
    },
    // One SKU with stock for every arrival of the step, each from a buyer of their own: orders per second.
    bigstock: {
      measured: (label) => label === "201",
      prepare: async (system, rate) => {
        const sale = await openSale(system, pool, redis, arrivals(rate));
        return (i) => purchaseRequest(sale, tokens[i % tokens.length], `ol-big-${sale.activityId}-${i}`);
      },
    },
    // Many SKUs, demand Zipf over them, stock that lasts: orders per second where SKUs contend unevenly.
    catalogue: {
      measured: (label) => label === "201",
      prepare: async (system) => {
        const activityId = await openCatalogue(system, pool, redis, catalogueProfile);
        return (i) =>
          purchaseRequest({ activityId, skuId: skuOf[i] }, tokens[userOf[i]], `ol-cat-${activityId}-${i}`);
      },
    },
  };

  const designs = systems.designs;
  type DesignCeiling = Ceiling & { design: RunningSystem["design"] };
  const results: Record<
    string,
    { round: number; order: string[]; ceilings: Record<string, DesignCeiling> }[]
  > = {};
  for (const [name, scenario] of Object.entries(scenarios)) {
    results[name] = [];
    for (let round = 0; round < profile.rounds; round++) {
      const order = designs.map((_, i) => designs[(i + round) % designs.length]);
      const ceilings: Record<string, DesignCeiling> = {};
      for (const system of order) {
        process.stderr.write(`  open loop, ${name}, round ${round + 1}: ${system.name}\n`);
        const ceiling = await findCeiling(
          async (rate) => {
            await retireSales(pool);
            const request = await scenario.prepare(system, rate);
            await machineSettled();
            return runOpenLoad(
              system.urls,
              {
                rate,
                durationMs: profile.stepMs,
                warmupMs: profile.warmupMs,
                connections: profile.connections,
                timeoutMs: 2000,
              },
              request,
            );
          },
          {
            startRate: profile.startRate,
            minRate: profile.minRate,
            tries: profile.tries,
            factor: profile.factor,
            resolution: profile.resolution,
            maxRate: profile.maxRate,
            p99Ms: 200,
            maxErrorShare: 0.001,
            measured: scenario.measured,
            failed: (label) => !label.startsWith("2") && !label.startsWith("409"),
          },
        );
        ceilings[system.name] = { design: system.design, ...ceiling };
      }
      results[name].push({ round: round + 1, order: order.map((s) => s.name), ceilings });
    }
  }
  return { profile, results };
}

export const openLoopScenario: Scenario<OpenLoopProfile> = {
  name: "openloop",
  title: "open loop",
  profile: ({ quick, rounds }) => ({
    ...(quick
      ? // A coarse search: the quick run's figures are a smoke check, the full run's the measurement.
        {
          stepMs: 1000,
          warmupMs: 500,
          connections: 500,
          catalogue: { skus: 200, zipf: 1.1 },
          startRate: 2000,
          minRate: 250,
          tries: 1,
          factor: 2,
          resolution: 0.5,
        }
      : {
          stepMs: 2000,
          warmupMs: 1000,
          connections: 1000,
          catalogue: { skus: 1000, zipf: 1.1 },
          startRate: 1000,
          minRate: 60,
          tries: 2,
          factor: 2,
          resolution: 0.05,
        }),
    rounds,
    maxRate: 40_000,
    stormUnitShare: 0.01,
  }),
  run: (b, profile) => openLoop(b.systems, b.pool, b.redis, b.env.AUTH_JWT_SECRET, profile),
};
