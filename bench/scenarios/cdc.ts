import { cpus } from "node:os";
import { topics } from "@flashgate/cdc";
import { connectClient } from "@flashgate/connect";
import { consumerGroup } from "@flashgate/maintainer";
import { Kafka, logLevel } from "kafkajs";
import type { Pool } from "mysql2/promise";
import { commitOrders, cpuByPart, cpuPerEvent, withWriters } from "../lib/cdc-writers.ts";
import { stackCpuMs } from "../lib/env.ts";
import { percentile } from "../lib/load.ts";
import { createCatalogue, newSale } from "../lib/sale.ts";
import { defineScenario, type Stored } from "../lib/scenario.ts";
import type { Systems } from "../lib/systems.ts";
import { cpuParts } from "../lib/tables.ts";
import { lagBetween, scrape } from "./lag.ts";

export interface CdcProfile {
  orders: number;
  ordersPerTransaction: number;
  /** Transactions committed side by side, each writer on SKUs of its own. */
  writers: number;
  skus: number;
}

/**
 * A burst of order rows committed in large transactions, as a sale's deadline or a batch import writes
 * them, through the whole CDC path, and each stage of it alone: (1) the writers with Debezium paused
 * (the binlog's backlog), (2) Debezium draining that backlog into the topic with no maintainer (end
 * offsets over time), (3) the maintainers replaying the topic's backlog alone (the group's committed
 * offsets over time), then (4) a second burst with everything running: whole-pipeline events/s and the
 * commit → Redis lag the maintainer measures. Each transaction inserts its orders and takes their units
 * from its SKUs' stock in one UPDATE: every order row and every stock row is one change event.
 */
async function cdcScenario(
  systems: Systems,
  pool: Pool,
  env: Record<string, string>,
  profile: CdcProfile,
  stackCpu: () => Record<string, number>,
) {
  const kafka = new Kafka({
    clientId: "bench-cdc",
    brokers: env.KAFKA_BROKERS.split(","),
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const connect = connectClient(env.KAFKA_CONNECT_URL);
  const connector = "flashgate-sale";
  const sum = (offsets: { offset: string }[]) =>
    offsets.reduce((total, p) => total + Math.max(0, Number(p.offset)), 0);
  const topicEnd = async () => sum(await admin.fetchTopicOffsets(topics.sale));
  const committed = async () =>
    sum((await admin.fetchOffsets({ groupId: consumerGroup, topics: [topics.sale] }))[0].partitions);
  const skusPerWriter = profile.skus / profile.writers;
  const eventsPerTransaction = profile.ordersPerTransaction + skusPerWriter;
  const transactions = profile.orders / profile.ordersPerTransaction;
  const events = transactions * eventsPerTransaction;

  /** Polls `read` until it reaches `target`; the samples (ms since `since`, value) show the stage's pace. */
  async function until(read: () => Promise<number>, target: number, since: number, timeoutMs = 600_000) {
    const samples: [number, number][] = [];
    for (;;) {
      const value = await read();
      samples.push([performance.now() - since, value]);
      if (value >= target) return samples;
      if (performance.now() - since > timeoutMs) throw new Error(`stuck at ${value} of ${target}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  /** When (ms, on the samples' clock) the value first reached `target`. */
  const reached = (samples: [number, number][], target: number) =>
    samples.find(([, value]) => value >= target)?.[0] ?? Number.NaN;

  let burstNumber = 0;
  /** One burst: `writers` connections, each committing its share of transactions on its own SKUs. */
  async function burst(activityId: number, since: number) {
    burstNumber += 1;
    const commits: number[] = [];
    await withWriters(pool, profile.writers, async (w, connection) => {
      const firstSku = w * skusPerWriter + 1;
      for (let t = w; t < transactions; t += profile.writers) {
        const orders = Array.from({ length: profile.ordersPerTransaction }, (_, i) => ({
          requestId: `cdc-${activityId}-${burstNumber}-${t}-${i}`,
          skuId: firstSku + (i % skusPerWriter),
          userId: burstNumber * 10_000_000 + t * profile.ordersPerTransaction + i,
        }));
        await commitOrders(connection, activityId, orders, { first: firstSku, count: skusPerWriter });
        commits.push(performance.now() - since);
      }
    });
    return commits.sort((a, b) => a - b);
  }

  /** Per transaction (in commit order), how long after its commit the stage held its events. */
  const stageLag = (commits: number[], samples: [number, number][], start: number) => {
    const lags = commits
      .map((at, k) => reached(samples, start + (k + 1) * eventsPerTransaction) - at)
      .sort((a, b) => a - b);
    return { p50Ms: Math.round(percentile(lags, 50)), p99Ms: Math.round(percentile(lags, 99)) };
  };
  const perSecond = (count: number, ms: number) => Math.round((count / ms) * 1000);
  const cpu = () => cpuByPart(systems, stackCpu);
  const perEvent = (before: Record<string, number>, after: Record<string, number>) =>
    cpuPerEvent(before, after, events);

  try {
    const { activityId } = newSale();
    await createCatalogue(pool, activityId, profile.skus, 10_000_000);
    process.stderr.write(
      `  cdc: ${events} events (${profile.orders} orders, ${transactions} transactions)\n`,
    );

    // Stages alone: the writers into a paused connector's binlog, then Debezium, then the maintainers.
    const resumeMaintainers = await systems.flashgate.pauseMaintainers();
    await connect.pause(connector);
    await connect.waitUntil(connector, (status) => status?.connector.state === "PAUSED", {
      timeoutMs: 60_000,
    });
    const startEnd = await topicEnd();
    let since = performance.now();
    const writes = await burst(activityId, since);
    const writeMs = writes.at(-1) ?? Number.NaN;
    process.stderr.write(`  cdc: written in ${Math.round(writeMs)} ms; Debezium alone…\n`);
    since = performance.now();
    const debeziumCpuBefore = cpu();
    await connect.resume(connector);
    const debezium = await until(topicEnd, startEnd + events, since);
    const debeziumCpu = perEvent(debeziumCpuBefore, cpu());
    const firstEvent = debezium.find(([, value]) => value > startEnd)?.[0] ?? 0;
    const debeziumMs = reached(debezium, startEnd + events) - firstEvent;
    process.stderr.write(`  cdc: Debezium drained in ${Math.round(debeziumMs)} ms; maintainers alone…\n`);
    since = performance.now();
    await resumeMaintainers();
    const readyMs = performance.now() - since;
    const replay = await until(committed, startEnd + events, since);
    const replayMs = reached(replay, startEnd + events) - readyMs;

    // The whole pipeline, everything running, on the same SKUs.
    const before = await scrape(systems.flashgate.maintainerUrls);
    const pipelineStartEnd = await topicEnd();
    since = performance.now();
    const pipelineCpuBefore = cpu();
    const topicSamples = until(topicEnd, pipelineStartEnd + events, since);
    const groupSamples = until(committed, pipelineStartEnd + events, since);
    const pipelineCommits = await burst(activityId, since);
    const topic = await topicSamples;
    const group = await groupSamples;
    const pipelineCpu = perEvent(pipelineCpuBefore, cpu());
    const drainedMs = reached(group, pipelineStartEnd + events);
    const cdc = lagBetween(before, await scrape(systems.flashgate.maintainerUrls));
    return {
      profile: { ...profile, events, eventsPerTransaction },
      stages: {
        writers: { ms: Math.round(writeMs), eventsPerSecond: perSecond(events, writeMs) },
        debezium: {
          ms: Math.round(debeziumMs),
          eventsPerSecond: perSecond(events, debeziumMs),
          cpuUsPerEvent: debeziumCpu,
        },
        maintainers: {
          ms: Math.round(replayMs),
          eventsPerSecond: perSecond(events, replayMs),
          processes: systems.flashgate.maintainerUrls.length,
        },
      },
      pipeline: {
        writtenMs: Math.round(pipelineCommits.at(-1) ?? Number.NaN),
        drainedMs: Math.round(drainedMs),
        eventsPerSecond: perSecond(events, drainedMs),
        cpuUsPerEvent: pipelineCpu,
        cores: cpus().length,
        debeziumLag: stageLag(pipelineCommits, topic, pipelineStartEnd),
        committedLag: stageLag(pipelineCommits, group, pipelineStartEnd),
        maintainerLagP50Ms: cdc.lagP50Ms,
        maintainerLagP99Ms: cdc.lagP99Ms,
        applied: cdc.applied,
      },
    };
  } finally {
    await connect.resume(connector).catch(() => {});
    await admin.disconnect();
  }
}

export const cdcBurstScenario = defineScenario({
  name: "cdc",
  title: "CDC throughput, a burst",
  profile: ({ quick }) =>
    quick
      ? { orders: 10_000, ordersPerTransaction: 1000, writers: 4, skus: 1000 }
      : { orders: 200_000, ordersPerTransaction: 1000, writers: 4, skus: 1000 },
  section: cdcSection,
  goals: (cdc) => [
    {
      what: "CDC, whole pipeline, events/s",
      values: cdc ? [cdc.pipeline.eventsPerSecond] : [],
      target: 20_000,
    },
  ],
  run: (b, profile: CdcProfile) =>
    cdcScenario(b.systems, b.systems.flashgate.pool, b.env, profile, () => stackCpuMs(b.ctx)),
});

/** A burst of order rows through each CDC stage alone, then through the whole pipeline. */
function cdcSection({
  profile,
  stages,
  pipeline,
}: Stored<Awaited<ReturnType<typeof cdcScenario>>>): string[] {
  return [
    "## CDC throughput",
    "",
    `${profile.orders} order rows in transactions of ${profile.ordersPerTransaction} (each also takes its units from its ${profile.eventsPerTransaction - profile.ordersPerTransaction} SKUs' stock in one UPDATE: ${profile.events} change events), ${profile.writers} writers side by side, \`sync_binlog=1\`. Each stage alone first: the writers with the connector paused, Debezium draining that binlog into the topic (its end offsets, polled every 50 ms), the maintainers replaying the topic (the group's committed offsets); then a second burst with everything running. Stage lag: per transaction, from its commit until the stage held its events.`,
    "",
    "| stage | events/s | ms |",
    "|---|---|---|",
    `| writers (MySQL, binlog synced) | ${stages.writers.eventsPerSecond} | ${stages.writers.ms} |`,
    `| Debezium into the topic, alone | ${stages.debezium.eventsPerSecond} | ${stages.debezium.ms} |`,
    `| maintainers (${stages.maintainers.processes}) replaying the topic, alone | ${stages.maintainers.eventsPerSecond} | ${stages.maintainers.ms} |`,
    `| whole pipeline (commit of the first → the group committed the last) | **${pipeline.eventsPerSecond}** | ${pipeline.drainedMs} |`,
    "",
    `CPU per event (µs, /proc), Debezium alone: ${cpuParts(stages.debezium.cpuUsPerEvent)}; whole pipeline: ${cpuParts(pipeline.cpuUsPerEvent)} — the machine's ${pipeline.cores} cores give at most **${Math.round((pipeline.cores * 1_000_000) / pipeline.cpuUsPerEvent.machine)}** events/s at the whole pipeline's cost.`,
    "",
    `Whole pipeline: written in ${pipeline.writtenMs} ms; lag p50 / p99 into the topic ${pipeline.debeziumLag.p50Ms} / ${pipeline.debeziumLag.p99Ms} ms, to the group's commit ${pipeline.committedLag.p50Ms} / ${pipeline.committedLag.p99Ms} ms; the maintainer's own commit → Redis lag p50 / p99 ${pipeline.maintainerLagP50Ms ?? "–"} / ${pipeline.maintainerLagP99Ms ?? "–"} ms over ${pipeline.applied} changes applied (goal: ≥ 20,000 events/s with lag p99 < 2 s).`,
    "",
  ];
}
