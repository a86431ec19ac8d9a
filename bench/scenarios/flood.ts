import { cpus } from "node:os";
import { Worker } from "node:worker_threads";
import type { FlashgateRedis } from "@flashgate/cache";
import { machineBusyMs } from "../lib/env.ts";
import type { FloodOrder, FloodResult } from "../lib/flood-worker.ts";
import { latencySummary, runLoad } from "../lib/load.ts";
import { runOpenLoad } from "../lib/open-loop.ts";
import { mintTokens, purchaseRequest, unitsSold } from "../lib/sale.ts";
import { defineScenario, type Stored } from "../lib/scenario.ts";
import type { Systems } from "../lib/systems.ts";
import { roundsOf } from "../lib/tables.ts";
import { openSale } from "./open-sale.ts";

export interface FloodProfile {
  units: number;
  requests: number;
  users: number;
  connections: number;
  /**
   * The sale's buyers arrive at this rate whatever the answers (open loop), below what the machine can
   * answer: a closed loop holds the cores full by itself, and then any flood beside it only lengthens the
   * queue every buyer waits in.
   */
  purchasesPerSecond: number;
  floodConnections: number;
  /** Each flooding client's mean pause between views: the flood's rate is at most connections / think time. */
  floodThinkMs: number;
  rounds: number;
}

type Condition = "quiet" | "known" | "unknown";

/** Starts a flood of GETs on its own thread; resolves once it flows, with a stop that returns its result. */
async function startFlood(order: FloodOrder) {
  const worker = new Worker(new URL("../lib/flood-worker.ts", import.meta.url), { workerData: order });
  const result = new Promise<FloodResult>((resolve, reject) => {
    worker.on("message", (message) => message.result && resolve(message.result));
    worker.once("error", reject);
  });
  await new Promise<void>((resolve, reject) => {
    worker.on("message", (message) => message.flowing && resolve());
    worker.once("error", reject);
  });
  return async () => {
    worker.postMessage("stop");
    const done = await result;
    await worker.terminate();
    return done;
  };
}

/**
 * Anyone may GET a SKU's public view, and an id Redis holds no state for is answered from the sale
 * directory (Redis too). Does a flood of such GETs delay purchases? The same sale three ways, in an
 * order that rotates each round: quiet; beside thousands of clients viewing the sale's own SKU
 * (answered from its state in Redis); and beside as many viewing random ids no sale uses (the
 * directory's 404). Goals: 201 p99 beside the unknown-id flood within 1.5× of the quiet sale's, beside
 * the known-SKU flood within 2×, and no 5xx among the flood's answers. The flooding clients pause
 * between views: a flood without pauses saturates the two cores whatever it asks for (measured:
 * purchases fall from thousands to hundreds per second beside either flood), which only a limit in
 * front of the API meets.
 */
async function floodScenario(systems: Systems, redis: FlashgateRedis, secret: string, profile: FloodProfile) {
  const system = systems.flashgate;
  const conditions: Condition[] = ["quiet", "known", "unknown"];
  const created: Record<Condition, number[]> = { quiet: [], known: [], unknown: [] };
  const rounds = [];
  let firstUser = 40_000_000;
  // An uncounted sale first, as in the storm: the first measured condition must not pay for warming up.
  const warmUp = await openSale(system, redis, profile.units);
  const warmUpTokens = mintTokens(secret, profile.users, 39_000_000);
  await runLoad(system.urls, profile.requests, profile.connections, (i) =>
    purchaseRequest(warmUp, warmUpTokens[i % profile.users], `flood-warm-${warmUp.activityId}-${i}`),
  );
  for (let round = 0; round < profile.rounds; round++) {
    for (const condition of [...conditions.slice(round % 3), ...conditions.slice(0, round % 3)]) {
      const sale = await openSale(system, redis, profile.units);
      const tokens = mintTokens(secret, profile.users, firstUser);
      firstUser += profile.users;
      const stopFlood =
        condition === "quiet"
          ? undefined
          : await startFlood({
              urls: system.urls,
              connections: profile.floodConnections,
              thinkMs: profile.floodThinkMs,
              target:
                condition === "unknown" ? "unknown" : `/v1/activities/${sale.activityId}/skus/${sale.skuId}`,
            });
      process.stderr.write(`  flood: round ${round + 1}, ${condition}…\n`);
      // What the cores did meanwhile, and how much of it was this bench process (its flood thread and
      // the purchase load): the share of the machine the API could not have used.
      const machineBefore = machineBusyMs();
      const benchBefore = process.cpuUsage();
      const startedAt = performance.now();
      const load = await runOpenLoad(
        system.urls,
        {
          rate: profile.purchasesPerSecond,
          durationMs: (profile.requests / profile.purchasesPerSecond) * 1000,
          connections: profile.connections,
          timeoutMs: 10_000,
        },
        (i) => purchaseRequest(sale, tokens[i % profile.users], `flood-${sale.activityId}-${i}`),
      );
      const elapsedMs = performance.now() - startedAt;
      const machineBusy = machineBusyMs() - machineBefore;
      const benchUs = process.cpuUsage(benchBefore);
      const flood = await stopFlood?.();
      created[condition].push(...(load.latencies["201"] ?? []));
      rounds.push({
        round: round + 1,
        condition,
        purchasesPerSecond: Math.round(load.offeredPerSecond),
        answered: load.answered,
        unitsSold: await unitsSold(system.pool, sale),
        purchaseLatencyMs: latencySummary(load.latencies),
        timedOut: load.timedOut,
        machineBusyShare: Math.round((machineBusy / (elapsedMs * cpus().length)) * 100) / 100,
        benchCoresUsed: Math.round(((benchUs.user + benchUs.system) / 1000 / elapsedMs) * 100) / 100,
        flood: flood ?? null,
      });
    }
  }
  const summary = latencySummary(created);
  const ratio = (a: Condition, b: Condition) => Math.round((summary[a].p99 / summary[b].p99) * 100) / 100;
  return {
    profile,
    created201Ms: summary,
    p99UnknownOverQuiet: ratio("unknown", "quiet"),
    p99KnownOverQuiet: ratio("known", "quiet"),
    p99UnknownOverKnown: ratio("unknown", "known"),
    rounds,
  };
}

export const floodBenchScenario = defineScenario({
  name: "flood",
  title: "flood of unknown-SKU views beside a sale",
  profile: ({ quick }) =>
    quick
      ? {
          units: 200,
          requests: 5_000,
          users: 2_500,
          connections: 100,
          purchasesPerSecond: 1_000,
          floodConnections: 2_000,
          floodThinkMs: 1000,
          rounds: 1,
        }
      : {
          units: 500,
          requests: 30_000,
          users: 10_000,
          connections: 100,
          purchasesPerSecond: 2_000,
          floodConnections: 5_000,
          floodThinkMs: 2000,
          rounds: 3,
        },
  section: floodSection,
  goals: (flood) => [
    {
      what: "201 p99 beside a flood of unknown-id views ÷ quiet",
      values: flood ? [flood.p99UnknownOverQuiet] : [],
      target: 1.5,
      atMost: true,
    },
    {
      what: "201 p99 beside a flood of views of the sale's SKU ÷ quiet",
      values: flood ? [flood.p99KnownOverQuiet] : [],
      target: 2,
      atMost: true,
    },
  ],
  run: (b, profile: FloodProfile) => floodScenario(b.systems, b.redis, b.env.AUTH_JWT_SECRET, profile),
});

/** Purchases quiet, beside a flood of views of a known SKU, and beside a flood of unknown ids. */
function floodSection(flood: Stored<Awaited<ReturnType<typeof floodScenario>>>): string[] {
  const { profile } = flood;
  const lines = [
    "## Purchases beside a flood of SKU views",
    "",
    `flashgate only. ${roundsOf(profile.rounds)}; each round, in an order that rotates, a sale of ${profile.units} units gets ${profile.requests} purchase requests from ${profile.users} users, arriving at ${profile.purchasesPerSecond}/s whatever the answers (open loop, below the machine's ceiling; over ${profile.connections} connections): quiet, beside ${profile.floodConnections} clients each viewing \`GET /v1/activities/:a/skus/:s\` every ${profile.floodThinkMs} ms on average (random pauses, as independent clients': no waves) for the sale's own SKU (served from Redis: the flood's CPU alone), and beside as many viewing random ids no sale has (each answered 404 from the sale directory in Redis; MySQL only while the directory is not loaded whole). The flood runs on a thread of its own in the bench process; an uncounted sale warms the system up first.`,
    "",
    "| condition | 201s | 201 p50 / p99 / p99.9 ms | flood answers/s (by status) | machine busy, per round | bench process, cores, per round |",
    "|---|---|---|---|---|---|",
  ];
  for (const condition of ["quiet", "known", "unknown"] as const) {
    const c = flood.created201Ms[condition];
    const floods = flood.rounds.filter((r) => r.condition === condition && r.flood);
    const answers = floods
      .map((r) =>
        Object.entries(r.flood?.latencyMs ?? {})
          .map(([label, v]) => `${label}: ${v.count}`)
          .join(", "),
      )
      .join(" · ");
    const rate = floods.map((r) => r.flood?.perSecond).join(" / ");
    const rounds = flood.rounds.filter((r) => r.condition === condition);
    const perRound = (field: "machineBusyShare" | "benchCoresUsed") =>
      rounds.map((r) => r[field] ?? "–").join(" / ");
    lines.push(
      `| ${condition} | ${c?.count ?? 0} | ${c ? `${c.p50} / ${c.p99} / ${c.p999}` : "–"} | ${floods.length ? `${rate} (${answers})` : "–"} | ${perRound("machineBusyShare")} | ${perRound("benchCoresUsed")} |`,
    );
  }
  lines.push(
    "",
    `201 p99, unknown-id flood over quiet: **${flood.p99UnknownOverQuiet}×** (goal ≤ 1.5×); known-SKU flood over quiet: **${flood.p99KnownOverQuiet}×** (goal ≤ 2×); unknown over known (what an unknown id costs beside the same CPU): **${flood.p99UnknownOverKnown}×**.`,
    "",
  );
  return lines;
}
