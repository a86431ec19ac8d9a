import { type FlashgateRedis, skuKeys } from "@flashgate/cache";
import { machineSettled } from "../lib/env.ts";
import { percentile } from "../lib/load.ts";
import {
  type Ceiling,
  findCeiling,
  type OpenLoadResult,
  runOpenLoad,
  searchStart,
} from "../lib/open-loop.ts";
import { mintTokens, purchaseRequest, retireSales, settledAt, unitsSold } from "../lib/sale.ts";
import { defineScenario } from "../lib/scenario.ts";
import type { RunningSystem, Systems } from "../lib/systems.ts";
import { startFlashgateQueued } from "../lib/systems.ts";
import type { OpenLoopProfile } from "./open-loop.ts";
import { designRounds, openSale } from "./open-sale.ts";

/** The open loop's search, on big stock alone. */
export type QueuedProfile = Omit<OpenLoopProfile, "stormUnitShare" | "catalogue">;

/** A buyer admitted: an order at once (201) or a place in the queue (202). */
const admitted = (label: string) => label === "201" || label === "202";
const admissionsOf = (load: OpenLoadResult) =>
  (load.latencies["201"]?.length ?? 0) + (load.latencies["202"]?.length ?? 0);

/**
 * Queued admission beside deciding at once and beside Redis-as-truth, open loop, on one SKU with stock for
 * every arrival (big stock): each design's highest sustained rate of admissions (201 or 202 within a p99 of
 * 200 ms from when the request was due, < 0.1 % failed), and at that rate how soon MySQL held every admitted
 * buyer's order and how fast the queue drained once the arrivals stopped. A queued step waits for its
 * queue to drain before the next (its writers would otherwise sell beside the next step's buyers).
 */
/** At a design's ceiling, one load with every admission counted: when MySQL held them, and the drain. */
interface AtCeiling {
  offeredPerSecond: number;
  admitted: number;
  admissionP99Ms: number | null;
  answeredAtMs: number;
  inMySqlWhenAnswered: number;
  everyOrderInMySqlAtMs: number | null;
  drainPerSecond: number | null;
}

/** A design's ceiling of admissions, and what came of one load at it. */
type QueuedCeiling = Ceiling & { design: RunningSystem["design"]; atCeiling: AtCeiling };

async function queuedScenario(
  systems: Systems,
  queued: RunningSystem,
  redis: FlashgateRedis,
  secret: string,
  profile: QueuedProfile,
) {
  const perStep = Math.ceil((profile.maxRate * (profile.warmupMs + profile.stepMs)) / 1000);
  const tokens = mintTokens(secret, Math.min(perStep, 300_000), 80_000_000);
  const designs = [
    systems.flashgate,
    queued,
    ...systems.designs.filter((d) => d.design === "redis-as-truth"),
  ];
  const warmUpSize = { units: 500, requests: 5000, connections: 100 };

  /** One load at `rate` on a fresh sale with a unit for every arrival. */
  async function sell(system: RunningSystem, rate: number, warmupMs: number) {
    const { pool } = system;
    await retireSales(systems.flashgate.pool);
    const sale = await openSale(system, redis, Math.ceil((rate * (warmupMs + profile.stepMs)) / 1000));
    await machineSettled();
    const called = performance.now();
    let origin: number | undefined;
    const load = await runOpenLoad(
      system.urls,
      {
        rate,
        durationMs: profile.stepMs,
        warmupMs,
        connections: profile.connections,
        timeoutMs: 2000,
        onAnswer: (_, atMs) => {
          origin ??= performance.now() - atMs;
        },
      },
      (i) => purchaseRequest(sale, tokens[i % tokens.length], `queued-${sale.activityId}-${i}`),
    );
    const clock = () => performance.now() - (origin ?? called);
    const answeredAtMs = Math.round(clock());
    const inMySqlWhenAnswered = await unitsSold(pool, sale);
    // Every admitted buyer's order in MySQL: counted where every admission was (no warm-up); else once
    // MySQL's count holds still (Redis-as-truth's writer done with the step) and, for the queue, once no
    // buyer of the sale holds a reservation (each decided, and applied or freed).
    let last = -1;
    const reservations = skuKeys(sale.activityId, sale.skuId).reservations;
    const everyOrderAtMs = await settledAt(
      async () => {
        const sold = await unitsSold(pool, sale);
        const done =
          warmupMs === 0
            ? sold >= admissionsOf(load)
            : sold === last && (system !== queued || (await redis.zcard(reservations)) === 0);
        last = sold;
        return done;
      },
      clock,
      300_000,
    );
    return { load, answeredAtMs, inMySqlWhenAnswered, everyOrderAtMs };
  }

  const results: {
    round: number;
    order: string[];
    ceilings: Record<string, QueuedCeiling>;
  }[] = [];
  for await (const { round, system } of designRounds(
    systems,
    redis,
    secret,
    warmUpSize,
    profile.rounds,
    designs,
  )) {
    if (results.at(-1)?.round !== round) results.push({ round, order: [], ceilings: {} });
    const entry = results[results.length - 1];
    entry.order.push(system.name);
    process.stderr.write(`  queued admission, round ${round}: ${system.name}\n`);
    // A queued step ends once MySQL holds its buyers: its writers would otherwise sell beside the next step's.
    const ceiling = await findCeiling(async (rate) => (await sell(system, rate, profile.warmupMs)).load, {
      ...searchStart(results.at(-2)?.ceilings[system.name]?.sustainedPerSecond, profile),
      minRate: profile.minRate,
      tries: profile.tries,
      resolution: profile.resolution,
      maxRate: profile.maxRate,
      p99Ms: 200,
      maxErrorShare: 0.001,
      measured: admitted,
      failed: (label) => !label.startsWith("2") && !label.startsWith("409"),
    });
    // At the ceiling, with no warm-up (every admission counted): how soon MySQL holds every admitted
    // buyer's order, and how fast the queue (or Redis-as-truth's writer) drains once the answers are in.
    const rate = Math.max(ceiling.sustainedPerSecond, profile.minRate);
    const at = await sell(system, rate, 0);
    const admissions = (at.load.latencies["202"] ?? at.load.latencies["201"] ?? []).sort((a, b) => a - b);
    const drainMs = at.everyOrderAtMs === null ? null : at.everyOrderAtMs - at.answeredAtMs;
    const toDrain = admissionsOf(at.load) - at.inMySqlWhenAnswered;
    entry.ceilings[system.name] = {
      design: system.design,
      ...ceiling,
      atCeiling: {
        offeredPerSecond: rate,
        admitted: admissionsOf(at.load),
        admissionP99Ms: admissions.length ? Math.round(percentile(admissions, 99)) : null,
        answeredAtMs: at.answeredAtMs,
        inMySqlWhenAnswered: at.inMySqlWhenAnswered,
        everyOrderInMySqlAtMs: at.everyOrderAtMs,
        drainPerSecond:
          drainMs !== null && drainMs > 0 && toDrain > 0 ? Math.round((toDrain * 1000) / drainMs) : null,
      },
    };
  }
  return { profile, results };
}

type QueuedResult = Awaited<ReturnType<typeof queuedScenario>>;

/** Queued admissions over the strongest Redis-as-truth's, and over flashgate deciding at once, per round. */
function queuedRatios(result: QueuedResult) {
  const per = (over: (name: string, ceiling: QueuedCeiling) => boolean) =>
    result.results.flatMap(({ ceilings }) => {
      const queued = ceilings["flashgate, queued"]?.sustainedPerSecond;
      const theirs = Object.entries(ceilings)
        .filter(([name, ceiling]) => over(name, ceiling))
        .map(([, ceiling]) => ceiling.sustainedPerSecond);
      return queued && theirs.length && Math.max(...theirs) > 0 ? [queued / Math.max(...theirs)] : [];
    });
  return {
    overRedisTruth: per((_, ceiling) => ceiling.design === "redis-as-truth"),
    overAtOnce: per((name) => name === "flashgate"),
  };
}

const queuedGoals = (result: QueuedResult | undefined) => [
  {
    what: "big stock, open loop, queued admission: admissions ÷ the strongest Redis-as-truth's",
    values: result ? queuedRatios(result).overRedisTruth : [],
    target: 1,
  },
];

const range = (values: number[]) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (!sorted.length) return "–";
  const middle = sorted[Math.floor(sorted.length / 2)];
  const digits = middle < 10 ? 2 : 0;
  return sorted.length === 1
    ? middle.toFixed(digits)
    : `${middle.toFixed(digits)} (${sorted[0].toFixed(digits)}–${sorted.at(-1)?.toFixed(digits)})`;
};

function queuedSection(result: QueuedResult): string[] {
  const { profile } = result;
  const lines = [
    "## Queued admission (open loop, big stock)",
    "",
    `One SKU with a unit for every arrival, each a buyer of their own, over ${profile.connections} connections; per design the highest arrival rate whose admissions (201, or 202 queued) held a p99 of 200 ms from when each request was due with < 0.1 % failed (steps of ${profile.stepMs} ms after ${profile.warmupMs} ms of warm-up, a queued step ending once MySQL held its buyers); then one load at that rate without warm-up: the 202's (or 201's) p99, when MySQL held every admitted buyer's order (ms from the first arrival), and how fast the rest reached MySQL after the last answer. flashgate deciding at once and Redis-as-truth as in the open loop; flashgate queued: the same API processes answering 202 and deciding through the purchase queue on the stack's Kafka (one broker here, so not replicated).`,
    "",
    "| round | system | sustained admissions/s | at it: admitted | admission p99 ms | in MySQL when answered | every order in MySQL after ms | drain orders/s |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const { round, ceilings } of result.results)
    for (const [system, ceiling] of Object.entries(ceilings)) {
      const at = ceiling.atCeiling;
      lines.push(
        `| ${round} | ${system} | ${ceiling.sustainedPerSecond} | ${at.admitted} | ${at.admissionP99Ms ?? "–"} | ${at.inMySqlWhenAnswered} | ${at.everyOrderInMySqlAtMs ?? "not within 300 s"} | ${at.drainPerSecond ?? "–"} |`,
      );
    }
  const ratios = queuedRatios(result);
  lines.push(
    "",
    `Queued admissions over the strongest Redis-as-truth's, median (min–max) of the rounds: **${range(ratios.overRedisTruth)}×**; over flashgate deciding at once: **${range(ratios.overAtOnce)}×**.`,
    "",
  );
  return lines;
}

export const queuedAdmissionScenario = defineScenario({
  name: "queued",
  title: "queued admission beside deciding at once and Redis-as-truth",
  profile: ({ quick, rounds }) => ({
    ...(quick
      ? {
          stepMs: 500,
          warmupMs: 500,
          connections: 500,
          startRate: 2000,
          minRate: 250,
          tries: 1,
          resolution: 1,
        }
      : {
          stepMs: 1000,
          warmupMs: 1000,
          connections: 1000,
          startRate: 1000,
          minRate: 60,
          tries: 2,
          resolution: 0.05,
        }),
    factor: 2,
    maxRate: 40_000,
    rounds,
  }),
  section: queuedSection,
  goals: queuedGoals,
  run: async (b, profile: QueuedProfile) => {
    const queued = await startFlashgateQueued(b.env, b.systems.flashgate.pool, b.processes);
    try {
      return await queuedScenario(b.systems, queued, b.redis, b.env.AUTH_JWT_SECRET, profile);
    } finally {
      await queued.stop();
    }
  },
});
