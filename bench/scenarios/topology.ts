import { type FlashgateRedis, redisClient, withScripts } from "@flashgate/cache";
import { createPool } from "@flashgate/db";
import { down } from "@flashgate/stack";
import { compareSku } from "@flashgate/sync";
import { eventually } from "@flashgate/testkit";
import type { Pool } from "mysql2/promise";
import { machineBusyMs, startBenchStack } from "../lib/env.ts";
import { type Latency, latencySummaryWithAll, runLoad } from "../lib/load.ts";
import { mintTokens, purchaseRequest, unitsSold } from "../lib/sale.ts";
import { defineScenario, type Stored } from "../lib/scenario.ts";
import { startFlashgate } from "../lib/systems.ts";
import { roundsOf, stagesCell, stagesHeader } from "../lib/tables.ts";
import { lagScenario } from "./lag.ts";
import { cachedSale } from "./open-sale.ts";

/** flashgate over one stack: its API processes, its maintainers, and the stack's MySQL and Redis. */
interface Deployment {
  topology: "single" | "cluster";
  urls: string[];
  maintainerUrls: string[];
  pool: Pool;
  redis: FlashgateRedis;
  /** The stack's own user-token secret: each stack generates its own. */
  secret: string;
}

export interface TopologyProfile {
  units: number;
  requests: number;
  users: number;
  connections: number;
  rounds: number;
  lagRates: number[];
  lagSeconds: number;
}

interface TopologyRound {
  topology: Deployment["topology"];
  round: number;
  requestsPerSecond: number;
  errors: number;
  latencyMs: Record<string, Latency>;
  machineCpuMsPerRequest: number;
  unitsSold: number;
  soldExactly: boolean;
  cacheConverged: boolean;
}

/**
 * The storm on the single topology and on the cluster topology in the same run, both stacks up, rounds
 * in rotating order. On two cores the comparison is CPU per request and tail latency, not throughput:
 * the cluster's six Redis nodes, three brokers and two workers share the same cores. Then the CDC lag
 * on each at a few write rates.
 */
async function topologyScenario(single: Deployment, cluster: Deployment, profile: TopologyProfile) {
  const deployments = [single, cluster];
  const tokens = new Map(deployments.map((d) => [d, mintTokens(d.secret, profile.users, 50_000_000)]));
  for (const deployment of deployments) {
    // An uncounted sale warms each deployment (JIT, pools, the CDC path, the cluster client's slot map).
    const warmUp = await cachedSale(deployment.pool, deployment.redis, Math.ceil(profile.units / 10));
    const warmTokens = mintTokens(deployment.secret, 2_000, 70_000_000);
    await runLoad(deployment.urls, Math.ceil(profile.requests / 10), profile.connections, (i) =>
      purchaseRequest(warmUp, warmTokens[i % warmTokens.length], `warm-${warmUp.activityId}-${i}`),
    );
  }
  const rounds: TopologyRound[] = [];
  for (let round = 0; round < profile.rounds; round++) {
    const order = round % 2 ? [cluster, single] : [single, cluster];
    for (const deployment of order) {
      const sale = await cachedSale(deployment.pool, deployment.redis, profile.units);
      process.stderr.write(
        `  topology: ${deployment.topology}, round ${round + 1}, ${profile.requests} requests…\n`,
      );
      const cpuBefore = machineBusyMs();
      const load = await runLoad(deployment.urls, profile.requests, profile.connections, (i) =>
        purchaseRequest(
          sale,
          (tokens.get(deployment) ?? [])[i % profile.users],
          `topology-${sale.activityId}-${i}`,
        ),
      );
      const cpuMs = machineBusyMs() - cpuBefore;
      const created = load.latencies["201"]?.length ?? 0;
      await eventually(
        async () => {
          if ((await unitsSold(deployment.pool, sale)) < created)
            throw new Error("orders still being written");
          if (!(await compareSku(deployment.pool, deployment.redis, sale.activityId, sale.skuId)).equal)
            throw new Error("cache still catching up");
        },
        { timeoutMs: 15_000 },
      ).catch(() => {});
      const sold = await unitsSold(deployment.pool, sale);
      rounds.push({
        topology: deployment.topology,
        round: round + 1,
        requestsPerSecond: Math.round(load.perSecond),
        errors: load.errors,
        latencyMs: latencySummaryWithAll(load.latencies),
        machineCpuMsPerRequest: Math.round((cpuMs / load.requests) * 1000) / 1000,
        unitsSold: sold,
        soldExactly: sold === profile.units,
        cacheConverged: (await compareSku(deployment.pool, deployment.redis, sale.activityId, sale.skuId))
          .equal,
      });
    }
  }
  const lag = [];
  for (const deployment of deployments) {
    process.stderr.write(`  topology: ${deployment.topology}, CDC lag…\n`);
    lag.push({
      topology: deployment.topology,
      ...(await lagScenario(
        deployment.pool,
        deployment.maintainerUrls,
        profile.lagRates,
        profile.lagSeconds,
      )),
    });
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const of = (topology: string, pick: (r: TopologyRound) => number) =>
    median(rounds.filter((r) => r.topology === topology).map(pick));
  const ratio = (pick: (r: TopologyRound) => number) =>
    Math.round((of("cluster", pick) / of("single", pick)) * 100) / 100;
  return {
    profile,
    rounds,
    lag,
    clusterOverSingle: {
      machineCpuPerRequest: ratio((r) => r.machineCpuMsPerRequest),
      p99All: ratio((r) => r.latencyMs.all.p99),
      p99Created: ratio((r) => r.latencyMs["201"]?.p99 ?? Number.NaN),
      requestsPerSecond: ratio((r) => r.requestsPerSecond),
    },
  };
}

/** The single topology (the run's own stack) beside the cluster topology, started for it and stopped after. */
export const topologyBenchScenario = defineScenario({
  name: "topology",
  title: "single topology beside the cluster topology",
  fullOnly: true,
  profile: ({ quick }) => ({
    ...(quick
      ? { units: 200, requests: 10_000, users: 5_000, rounds: 2, lagSeconds: 5 }
      : { units: 1000, requests: 50_000, users: 20_000, rounds: 3, lagSeconds: 15 }),
    connections: 100,
    lagRates: [500, 1000],
  }),
  section: topologySection,
  run: async (b, profile: TopologyProfile) => {
    const cluster = await startBenchStack("cluster");
    const clusterPool = createPool(cluster.env.DATABASE_URL, { connectionLimit: 16 });
    const clusterRedis = withScripts(redisClient(cluster.env.REDIS_URL));
    // The same API processes as the single topology's, and two maintainers in one group.
    const clusterFlashgate = await startFlashgate(cluster.env, clusterPool, b.processes, 2);
    try {
      return await topologyScenario(
        {
          topology: "single",
          urls: b.systems.flashgate.urls,
          maintainerUrls: b.systems.flashgate.maintainerUrls,
          pool: b.systems.flashgate.pool,
          redis: b.redis,
          secret: b.env.AUTH_JWT_SECRET,
        },
        {
          topology: "cluster",
          urls: clusterFlashgate.urls,
          maintainerUrls: clusterFlashgate.maintainerUrls,
          pool: clusterPool,
          redis: clusterRedis,
          secret: cluster.env.AUTH_JWT_SECRET,
        },
        profile,
      );
    } finally {
      await clusterFlashgate.stop();
      await clusterPool.end();
      clusterRedis.disconnect();
      if (process.env.FLASHGATE_KEEP_BENCH_STACK !== "1") await down(cluster.ctx);
    }
  },
});

/** The storm and the CDC lag on the single topology and on the cluster topology, in one run. */
function topologySection(topology: Stored<Awaited<ReturnType<typeof topologyScenario>>>): string[] {
  const { profile, clusterOverSingle: ratio } = topology;
  const lines = [
    "## Single topology beside the cluster topology",
    "",
    `flashgate with the same API processes on both: one Redis, one broker, one Connect worker and one maintainer, against Redis Cluster (3 masters, 3 replicas), 3 brokers (RF 3, min.insync 2), 2 Connect workers and 2 maintainers — both stacks up throughout, on the same two cores. ${roundsOf(profile.rounds)} in rotating order; each a sale of ${profile.units} units, ${profile.requests} requests from ${profile.users} users over ${profile.connections} connections. CPU is the whole machine's busy time over the storm (every process of both stacks and the load generator) per request.`,
    "",
    "| topology | round | requests/s | 201 p50 / p99 ms | all p50 / p99 / p99.9 ms | machine CPU ms/request | sold exactly | cache converged |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const r of topology.rounds) {
    const created = r.latencyMs["201"];
    lines.push(
      `| ${r.topology} | ${r.round} | ${r.requestsPerSecond} | ${created ? `${created.p50} / ${created.p99}` : "–"} | ${r.latencyMs.all.p50} / ${r.latencyMs.all.p99} / ${r.latencyMs.all.p999} | ${r.machineCpuMsPerRequest} | ${r.soldExactly ? "yes" : "no"} | ${r.cacheConverged ? "yes" : "no"} |`,
    );
  }
  lines.push(
    "",
    `Cluster over single (medians of the rounds): machine CPU per request **${ratio.machineCpuPerRequest}×**, p99 of all answers **${ratio.p99All}×**, 201 p99 ${ratio.p99Created}×, requests/s ${ratio.requestsPerSecond}×.`,
    "",
    `| topology | target changes/s | achieved | applied | CDC lag p50 ms | p99 ms | stages p99 ms (${stagesHeader}) |`,
    "|---|---|---|---|---|---|---|",
  );
  for (const run of topology.lag)
    for (const r of run.results)
      lines.push(
        `| ${run.topology} | ${r.targetPerSecond} | ${r.achievedPerSecond} | ${r.appliedChanges} | ${r.lagP50Ms ?? "–"} | ${r.lagP99Ms ?? "–"} | ${stagesCell(r.stagesP99Ms)} |`,
      );
  lines.push("");
  return lines;
}
