import { cpus } from "node:os";
import type { FlashgateRedis } from "@flashgate/cache";
import { topics } from "@flashgate/cdc";
import { connectClient } from "@flashgate/connect";
import { closeAllExpiredOrders } from "@flashgate/db";
import { consumerGroup } from "@flashgate/maintainer";
import { Kafka, logLevel } from "kafkajs";
import type { Pool, PoolConnection, RowDataPacket } from "mysql2/promise";
import { machineBusyMs } from "../lib/env.ts";
import { percentile } from "../lib/load.ts";
import { runOpenLoad } from "../lib/open-loop.ts";
import { createCatalogue, mintTokens, newSale, purchaseRequest } from "../lib/sale.ts";
import type { Systems } from "../lib/systems.ts";
import { allCached } from "./catalogue.ts";
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
export async function cdcScenario(
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

/**
 * One writer's transaction, as a decision writes it: its PENDING orders, and their units taken from its
 * SKUs' stock in one UPDATE (the orders spread evenly over those SKUs).
 */
async function commitOrders(
  connection: PoolConnection,
  activityId: number,
  orders: { requestId: string; skuId: number; userId: number }[],
  skus: { first: number; count: number },
) {
  const rows = orders.map(
    (o) =>
      `('${o.requestId}', ${activityId}, ${o.skuId}, ${o.userId}, 'PENDING', 1000, 'EUR', NOW(3), NOW(3) + INTERVAL 1 DAY)`,
  );
  await connection.query("START TRANSACTION");
  await connection.query(
    `INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at) VALUES ${rows.join(",")}`,
  );
  await connection.query(
    "UPDATE sale_stock SET available = available - ? WHERE activity_id = ? AND sku_id BETWEEN ? AND ?",
    [orders.length / skus.count, activityId, skus.first, skus.first + skus.count - 1],
  );
  await connection.query("COMMIT");
}

/** `count` writers side by side, each on a connection of its own, released after. */
async function withWriters(
  pool: Pool,
  count: number,
  writer: (w: number, connection: PoolConnection) => Promise<void>,
) {
  const connections = await Promise.all(Array.from({ length: count }, () => pool.getConnection()));
  try {
    await Promise.all(connections.map((connection, w) => writer(w, connection)));
  } finally {
    for (const connection of connections) connection.release();
  }
}

/** Each part's CPU time so far (ms): the stack's servers, the maintainers, this process (the writers), the machine. */
function cpuByPart(systems: Systems, stackCpu: () => Record<string, number>): Record<string, number> {
  const own = process.cpuUsage();
  return {
    ...stackCpu(),
    maintainers: systems.flashgate.maintainersCpuMs(),
    "bench (writers)": (own.user + own.system) / 1000,
    machine: machineBusyMs(),
  };
}

/** CPU µs per event of each part between two readings: the machine's cores allow cores × 1,000,000 / machine. */
const cpuPerEvent = (before: Record<string, number>, after: Record<string, number>, events: number) =>
  Object.fromEntries(
    Object.keys(after).map((part) => [part, Math.round(((after[part] - before[part]) * 1000) / events)]),
  );

export interface SustainedProfile {
  /** Change events per second to write, each held for `seconds`. */
  rates: number[];
  seconds: number;
  writers: number;
  /** Each transaction: this many orders over its writer's SKUs, and one UPDATE of their stock. */
  ordersPerTransaction: number;
  skusPerWriter: number;
}

/**
 * The pipeline held at a steady rate rather than fed a burst: transactions of a decision's size due at
 * fixed times (open loop: a writer that falls behind commits at once, and the rate it achieved is
 * reported), for `seconds` at each rate; the commit → Redis lag meanwhile, from the maintainers'
 * histograms, and the machine's CPU per event. Held: the rate achieved and lag p99 under 2 s.
 */
export async function cdcSustained(
  systems: Systems,
  pool: Pool,
  profile: SustainedProfile,
  stackCpu: () => Record<string, number>,
) {
  const { activityId } = newSale();
  const skus = profile.writers * profile.skusPerWriter;
  await createCatalogue(pool, activityId, skus, 100_000_000);
  const eventsPerTransaction = profile.ordersPerTransaction + profile.skusPerWriter;
  const results = [];
  let next = 0;
  for (const rate of profile.rates) {
    const transactionsPerSecond = rate / eventsPerTransaction;
    const total = Math.round(transactionsPerSecond * profile.seconds);
    process.stderr.write(`  cdc: sustained ${rate} events/s for ${profile.seconds} s…
`);
    const before = await scrape(systems.flashgate.maintainerUrls);
    const cpuBefore = cpuByPart(systems, stackCpu);
    const started = performance.now();
    let written = 0;
    await withWriters(pool, profile.writers, async (w, connection) => {
      const firstSku = w * profile.skusPerWriter + 1;
      for (let t = w; t < total; t += profile.writers) {
        const wait = started + (t / transactionsPerSecond) * 1000 - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const orders = Array.from({ length: profile.ordersPerTransaction }, (_, i) => {
          next += 1;
          return {
            requestId: `cdc-s-${activityId}-${next}`,
            skuId: firstSku + (i % profile.skusPerWriter),
            userId: next,
          };
        });
        await commitOrders(connection, activityId, orders, { first: firstSku, count: profile.skusPerWriter });
        written += eventsPerTransaction;
      }
    });
    const writtenMs = performance.now() - started;
    // The lag of every change written: the maintainers' histograms once they applied them all.
    // (Or until they stop for 5 s: the pipeline lost something, and the row says so.)
    let cdc = lagBetween(before, await scrape(systems.flashgate.maintainerUrls));
    const handled = (lag: typeof cdc) => lag.applied + lag.skipped;
    for (let idleMs = 0; handled(cdc) < written && idleMs < 5000; ) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const now = lagBetween(before, await scrape(systems.flashgate.maintainerUrls));
      idleMs = handled(now) > handled(cdc) ? 0 : idleMs + 250;
      cdc = now;
    }
    const achieved = Math.round((written / writtenMs) * 1000);
    results.push({
      targetPerSecond: rate,
      achievedPerSecond: achieved,
      written,
      applied: cdc.applied,
      skipped: cdc.skipped,
      lagP50Ms: cdc.lagP50Ms,
      lagP99Ms: cdc.lagP99Ms,
      stagesP99Ms: cdc.stagesP99Ms,
      cpuUsPerEvent: cpuPerEvent(cpuBefore, cpuByPart(systems, stackCpu), written),
      held:
        achieved >= 0.95 * rate && handled(cdc) >= written && cdc.lagP99Ms !== null && cdc.lagP99Ms < 2000,
    });
  }
  return { profile: { ...profile, eventsPerTransaction }, results };
}

export interface ExpiryProfile {
  orders: number;
  skus: number;
  /** New buyers per second (open loop) on the sold-out sale from its deadline on. */
  buyersPerSecond: number;
  buyingMs: number;
}

/**
 * A payment deadline: a sold-out sale's PENDING orders all due at once. The maintainers start with order
 * expiry on; new buyers keep arriving at a fixed rate; what counts is how long after the deadline the last
 * returned unit is sold again (every unit MySQL got back is a new buyer's order), the expiry's pace, and
 * the commit → Redis lag meanwhile.
 */
export async function massExpiry(
  systems: Systems,
  pool: Pool,
  redis: FlashgateRedis,
  secret: string,
  profile: ExpiryProfile,
) {
  // The bench database outlives runs: orders an earlier run left due would be closed first (oldest first).
  await closeAllExpiredOrders(pool, 1000);
  const { activityId } = newSale();
  const unitsPerSku = profile.orders / profile.skus;
  await createCatalogue(pool, activityId, profile.skus, unitsPerSku);
  // The orders, due already: nothing closes them until the maintainers start with expiry on.
  const resume = await systems.flashgate.pauseMaintainers();
  for (let first = 0; first < profile.orders; first += 1000) {
    const rows = Array.from({ length: Math.min(1000, profile.orders - first) }, (_, i) => {
      const n = first + i;
      return `('exp-${activityId}-${n}', ${activityId}, ${(n % profile.skus) + 1}, ${n + 1}, 'PENDING', 1000, 'EUR', NOW(3), NOW(3))`;
    });
    const connection = await pool.getConnection();
    try {
      await connection.query("START TRANSACTION");
      await connection.query(
        `INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at) VALUES ${rows.join(",")}`,
      );
      await connection.query("UPDATE sale_stock SET available = available - ? WHERE activity_id = ?", [
        rows.length / profile.skus,
        activityId,
      ]);
      await connection.query("COMMIT");
    } finally {
      connection.release();
    }
  }
  // Expiry held off until the cache has the sale; then the maintainers as deployed (expiry every second).
  await resume({ EXPIRY_INTERVAL_MS: "0" });
  if (!(await allCached(pool, redis, activityId, profile.skus, 180_000)))
    throw new Error("the sold-out sale never reached the cache");
  await systems.flashgate.restartMaintainers();

  // The buyers after the deadline: users of their own, told apart from the expired orders' by id.
  const newBuyers = 70_000_000;
  const newOrders = async () => {
    const [rows] = await pool.query<RowDataPacket[]>(
      "SELECT SUM(user_id >= ? AND state = 'PENDING') AS resold, SUM(state = 'CLOSED') AS closed FROM sale_order WHERE activity_id = ?",
      [newBuyers, activityId],
    );
    return { resold: Number(rows[0].resold ?? 0), closed: Number(rows[0].closed ?? 0) };
  };
  const tokens = mintTokens(
    secret,
    Math.ceil((profile.buyersPerSecond * profile.buyingMs) / 1000),
    70_000_000,
  );
  const before = await scrape(systems.flashgate.maintainerUrls);
  const deadline = performance.now();
  let expiredMs: number | null = null;
  let resoldMs: number | null = null;
  const watching = (async () => {
    while (resoldMs === null && performance.now() - deadline < profile.buyingMs + 10_000) {
      const { resold, closed } = await newOrders();
      if (expiredMs === null && closed >= profile.orders) expiredMs = performance.now() - deadline;
      if (resold >= profile.orders) resoldMs = performance.now() - deadline;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const load = await runOpenLoad(
    systems.flashgate.urls,
    { rate: profile.buyersPerSecond, durationMs: profile.buyingMs, connections: 1000, timeoutMs: 2000 },
    (i) =>
      purchaseRequest(
        { activityId, skuId: (i % profile.skus) + 1 },
        tokens[i % tokens.length],
        `exp-buy-${activityId}-${i}`,
      ),
  );
  await watching;
  const cdc = lagBetween(before, await scrape(systems.flashgate.maintainerUrls));
  const { resold, closed } = await newOrders();
  return {
    profile,
    expiredAllAfterMs: expiredMs === null ? null : Math.round(expiredMs),
    lastUnitSoldAgainAfterMs: resoldMs === null ? null : Math.round(resoldMs),
    closed,
    resold,
    answers: Object.fromEntries(
      Object.entries(load.latencies).map(([label, values]) => [label, values.length]),
    ),
    timedOut: load.timedOut,
    lagP50Ms: cdc.lagP50Ms,
    lagP99Ms: cdc.lagP99Ms,
    applied: cdc.applied,
  };
}
