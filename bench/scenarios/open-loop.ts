import type { FlashgateRedis } from "@flashgate/cache";
import { machineSettled } from "../lib/env.ts";
import type { LoadRequest } from "../lib/load.ts";
import { type Ceiling, findCeiling, laterRoundFactor, runOpenLoad, searchStart } from "../lib/open-loop.ts";
import { mintTokens, purchaseRequest, retireSales } from "../lib/sale.ts";
import { defineScenario, type Stored } from "../lib/scenario.ts";
import type { RunningSystem, Systems } from "../lib/systems.ts";
import { roundRatios } from "../lib/tables.ts";
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

/** A design's ceiling in one scenario and round. */
type DesignCeiling = Ceiling & { design: RunningSystem["design"] };

/** One scenario's round: the designs' order, and each one's ceiling by its name. */
interface OpenLoopRound {
  round: number;
  order: string[];
  ceilings: Record<string, DesignCeiling>;
}

/** What a step needs: a fresh sale, and the request of each of its arrivals. */
type Prepare = (system: RunningSystem, rate: number) => Promise<(index: number) => LoadRequest>;

/**
 * Each design's highest sustained arrival rate per scenario: the rate is stepped up until the answers'
 * p99 (from when each request was due) passes 200 ms or more than 0.1 % of requests fail or time out.
 * Every step sells a fresh sale, big enough to last it where orders are the point. Three rounds, the
 * designs' order rotated each round; ratios are taken within a round.
 */
async function openLoop(systems: Systems, redis: FlashgateRedis, secret: string, profile: OpenLoopProfile) {
  const perStep = Math.ceil((profile.maxRate * (profile.warmupMs + profile.stepMs)) / 1000);
  const tokens = mintTokens(secret, Math.min(perStep, 300_000), 60_000_000);
  for await (const _ of designRounds(
    systems,
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
        const sale = await openSale(system, redis, units);
        return (i) => purchaseRequest(sale, tokens[i % tokens.length], `ol-storm-${sale.activityId}-${i}`);
      },
    },
    // One SKU with stock for every arrival of the step, each from a buyer of their own: orders per second.
    bigstock: {
      measured: (label) => label === "201",
      prepare: async (system, rate) => {
        const sale = await openSale(system, redis, arrivals(rate));
        return (i) => purchaseRequest(sale, tokens[i % tokens.length], `ol-big-${sale.activityId}-${i}`);
      },
    },
    // Many SKUs, demand Zipf over them, stock that lasts: orders per second where SKUs contend unevenly.
    catalogue: {
      measured: (label) => label === "201",
      prepare: async (system) => {
        const activityId = await openCatalogue(system, redis, catalogueProfile);
        return (i) =>
          purchaseRequest({ activityId, skuId: skuOf[i] }, tokens[userOf[i]], `ol-cat-${activityId}-${i}`);
      },
    },
  };

  const designs = systems.designs;
  const results: Record<string, OpenLoopRound[]> = {};
  for (const [name, scenario] of Object.entries(scenarios)) {
    results[name] = [];
    for (let round = 0; round < profile.rounds; round++) {
      const order = designs.map((_, i) => designs[(i + round) % designs.length]);
      const ceilings: Record<string, DesignCeiling> = {};
      for (const system of order) {
        process.stderr.write(`  open loop, ${name}, round ${round + 1}: ${system.name}\n`);
        const ceiling = await findCeiling(
          async (rate) => {
            await retireSales(systems.flashgate.pool);
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
            ...searchStart(results[name].at(-1)?.ceilings[system.name]?.sustainedPerSecond, profile),
            minRate: profile.minRate,
            tries: profile.tries,
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

export const openLoopScenario = defineScenario({
  name: "openloop",
  title: "open loop",
  profile: ({ quick, rounds }) => ({
    ...(quick
      ? // A coarse search: the quick run's figures are a smoke check, the full run's the measurement.
        {
          stepMs: 500,
          warmupMs: 500,
          connections: 500,
          catalogue: { skus: 200, zipf: 1.1 },
          startRate: 2000,
          minRate: 250,
          tries: 1,
          factor: 2,
          resolution: 1,
        }
      : // A step's backlog is what the machine settles from before the next: 1 s measured (with 2 s steps,
        // every round searching from the start, the open loop ran 88 min without finishing). The warm-up stays
        // 1 s: at 0.5 s the sale's start (every socket's first request, the units selling out) fell into the
        // storm's measured second, p50 1–2 ms → 100–800 ms.
        {
          stepMs: 1000,
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
  section: openLoopSection,
  goals: (run) => {
    const open = run?.results;
    const openRatio = (scenario: string, design: string) =>
      open?.[scenario] ? roundRatios(openLoopRows(open[scenario]), design, (r) => r.sustainedPerSecond) : [];
    return [
      {
        what: "storm, open loop: flashgate ÷ the strongest Redis-as-truth",
        values: openRatio("storm", "redis-as-truth"),
        target: 1.2,
      },
      {
        what: "storm, open loop: flashgate ÷ the strongest MySQL-only",
        values: openRatio("storm", "mysql-only"),
        target: 10,
      },
      {
        what: "catalogue, open loop: flashgate ÷ the strongest Redis-as-truth",
        values: openRatio("catalogue", "redis-as-truth"),
        target: 0.7,
      },
      {
        what: "big stock, open loop: flashgate ÷ the strongest Redis-as-truth",
        values: openRatio("bigstock", "redis-as-truth"),
        target: 1,
      },
    ];
  },
  run: (b, profile: OpenLoopProfile) => openLoop(b.systems, b.redis, b.env.AUTH_JWT_SECRET, profile),
});

/** An open-loop ceiling per scenario and round: the last rate that held. */
const ceilingOf = (ceiling: DesignCeiling | undefined) => ceiling?.sustainedPerSecond ?? Number.NaN;

/** The open loop's rows as "system per round" rows: what roundRatios reads. */
function openLoopRows(rounds: Pick<OpenLoopRound, "round" | "ceilings">[]) {
  return rounds.flatMap(({ round, ceilings }) =>
    Object.entries(ceilings).map(([system, ceiling]) => ({
      round,
      system,
      design: ceiling.design ?? system.split(",")[0],
      sustainedPerSecond: ceilingOf(ceiling),
    })),
  );
}

/** Each design's sustained arrival rate per scenario and round, and flashgate's over the strongest baselines'. */
function openLoopSection(open: Stored<Awaited<ReturnType<typeof openLoop>>>): string[] {
  const { profile } = open;
  const lines = [
    "## Open loop",
    "",
    `Requests arrive at a fixed rate whether or not earlier ones were answered (${profile.connections} connections, 2 server processes per design), each answer timed from when its request was due. In a design's first round the rate starts at ${profile.startRate}/s and rises ×${profile.factor} per ${profile.stepMs / 1000} s step${profile.rounds > 1 ? ` (in a later round it starts at the ceiling the design's earlier round found and moves ×${laterRoundFactor})` : ""} (measured after ${(profile.warmupMs ?? 0) / 1000} s of arrivals at the same rate on its fresh sockets and sale, and once the machine has settled from the step before) until the p99 of the measured answers passes 200 ms or more than 0.1 % of requests fail or time out (2 s) ${profile.tries === 1 ? "at one rate (each rate runs once: a smoke check)" : "twice in a row at one rate (a broken step runs once more: one hiccup of the machine does not end the search)"} — or, where the first rate broke, falls ÷${profile.factor} until a rate holds (down to ${profile.minRate ?? profile.startRate}/s); ${(profile.resolution ?? 0.05) >= profile.factor - 1 ? `no bisection follows (a smoke check: each figure is within ×${profile.factor} of the ceiling)` : `then the rate is bisected between the last that held and the first that broke until they are within ${Math.round((profile.resolution ?? 0.05) * 100)} %`}. A design's figure is the highest rate that held. Storm: one SKU with a unit for ${Number(profile.stormUnitShare) * 100} % of the step's arrivals, every answer measured (mostly SOLD_OUT). Big stock: one SKU with a unit for every arrival, each from a buyer of their own; catalogue: ${profile.catalogue.skus} SKUs, Zipf s = ${profile.catalogue.zipf}, stock that lasts — both measure 201s, and orders/s is a step's 201s over its duration (Redis-as-truth: admissions, persisted later). A fresh sale per step; the designs' order rotates each round, ratios are within a round.`,
    "",
  ];
  const ordersAt = (ceiling: DesignCeiling | undefined) => {
    const step = ceiling?.steps
      .filter((s) => s.held)
      .sort((a, b) => a.offeredPerSecond - b.offeredPerSecond)
      .at(-1);
    return step ? Math.round(((step.answers["201"] ?? 0) * 1000) / profile.stepMs) : "–";
  };
  for (const [scenario, rounds] of Object.entries(open.results)) {
    const systems = Object.keys(rounds[0]?.ceilings ?? {});
    lines.push(
      `### ${scenario}`,
      "",
      `| round (order) | ${systems.map((s) => `${s} /s`).join(" | ")} | flashgate / strongest Redis-as-truth | flashgate / strongest MySQL-only |`,
      `|---|${systems.map(() => "---|").join("")}---|---|`,
    );
    for (const { round, order, ceilings } of rounds) {
      const rows = openLoopRows([{ round, ceilings }]);
      const ratio = (design: string) => {
        const [r] = roundRatios(rows, design, (row) => row.sustainedPerSecond);
        return r === undefined || !Number.isFinite(r) ? "–" : `**${r.toFixed(2)}×**`;
      };
      // No step held: the design's ceiling is below the least rate tried.
      const rate = (ceiling: DesignCeiling | undefined) => {
        if (ceiling === undefined) return "–";
        const orders = scenario === "storm" ? "" : ` (${ordersAt(ceiling)} orders/s)`;
        return ceiling.sustainedPerSecond
          ? `${ceiling.sustainedPerSecond}${orders}`
          : `< ${profile.minRate ?? profile.startRate}`;
      };
      lines.push(
        `| ${round} (${order.join(" → ")}) | ${systems.map((s) => rate(ceilings[s])).join(" | ")} | ${ratio("redis-as-truth")} | ${ratio("mysql-only")} |`,
      );
    }
    lines.push("");
  }
  lines.push(
    "The storm's units sell in each step's warm-up: its steps measure the refusals. A rate below the least one tried counts as 0 in a ratio.",
    "",
  );
  return lines;
}
