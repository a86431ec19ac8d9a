// npm run bench [-- --quick] [-- --only decision,storm,firstsecond,bots,queued,drift,lag,micro,flood,topology,bigstock,catalogue,cdc,cdcsteady,deadline,openloop]
//   [-- --naive] [-- --processes N]
// One run, one report: bench/results/<start>[-quick][-only-…]/RESULTS.md from this run's results alone, and
// for a full run bench/RESULTS.md. --naive adds the baselines' naive versions as extra rows.

import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { redisClient, withScripts } from "@flashgate/cache";
import { createPool } from "@flashgate/db";
import { databaseEngines, down } from "@flashgate/stack";
import { databaseFacts, machineFacts, stackCpuMs, startBenchStack } from "./lib/env.ts";
import { benchRun, runCommit, runFolder, writeReport, writeResult } from "./lib/report.ts";
import {
  type RunningSystem,
  type Systems,
  startFlashgate,
  startFlashgateQueued,
  startHello,
  startMysqlOnly,
  startRedisTruth,
} from "./lib/systems.ts";
import { bigStock } from "./scenarios/bigstock.ts";
import { bots } from "./scenarios/bots.ts";
import { catalogue } from "./scenarios/catalogue.ts";
import { cdcScenario } from "./scenarios/cdc.ts";
import { cdcSustained } from "./scenarios/cdc-steady.ts";
import { massExpiry } from "./scenarios/deadline.ts";
import { decisionScenario } from "./scenarios/decision.ts";
import { driftScenario } from "./scenarios/drift.ts";
import { firstSecond } from "./scenarios/first-second.ts";
import { floodScenario } from "./scenarios/flood.ts";
import { lagScenario } from "./scenarios/lag.ts";
import { microScenario } from "./scenarios/micro.ts";
import { openLoop } from "./scenarios/open-loop.ts";
import { queuedScenario } from "./scenarios/queued.ts";
import { storm } from "./scenarios/storm.ts";
import { topologyScenario } from "./scenarios/topology.ts";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const onlyAt = args.findIndex((a) => a === "--only" || a.startsWith("--only="));
const only =
  onlyAt < 0
    ? undefined
    : (args[onlyAt].includes("=") ? args[onlyAt].split("=")[1] : args[onlyAt + 1])?.split(",");
const wanted = (name: string) => !only || only.includes(name);
const naive = args.includes("--naive");
// Every scenario three rounds, the designs' order rotating; a quick run one.
const rounds = quick ? 1 : 3;
const folder = runFolder({ quick, only });
// The storm on MariaDB runs in a child process of this run, into its folder; the parent writes the report.
const child = process.env.FLASHGATE_BENCH_RUN_DIR !== undefined;
const commit = runCommit();
// Each design runs as it would be deployed: one server process per core, load spread over them.
const processesAt = args.indexOf("--processes");
const processes = processesAt < 0 ? availableParallelism() : Number(args[processesAt + 1]);

// The decision against the least a durable decision can cost, on databases of its own, before the stack
// starts (nothing else runs beside them): both engines, in this one run.
if (wanted("decision") && !child) {
  const profile = quick ? { seconds: 3, rounds: 1 } : { seconds: 6, rounds: 2 };
  process.stderr.write(`▸ the decision beside the database's floor ${JSON.stringify(profile)}\n`);
  const result = await decisionScenario([...databaseEngines], profile, (line) =>
    process.stderr.write(`${line}\n`),
  );
  process.stderr.write(`  → ${writeResult(folder, "decision", result)}\n`);
  if (only?.every((name) => name === "decision")) {
    process.stderr.write(
      `report: ${writeReport(folder, { quick, only, naive, startedAt: benchRun, commit })}\n`,
    );
    process.exit(0);
  }
}

const { ctx, env } = await startBenchStack();
const pool = createPool(env.DATABASE_URL, { connectionLimit: 16 });
const engine = ctx.config.FLASHGATE_DB;
const facts = machineFacts(await databaseFacts(pool, engine));
process.stderr.write(
  `flashgate bench (${quick ? "quick" : "full"}, ${processes} server processes per design) on ${JSON.stringify(facts)}\n`,
);
// MySQL 8 is what production runs; a run on another engine is kept beside it for comparison.
const resultName = (scenario: string) => (engine === "mysql" ? scenario : `${scenario}-${engine}`);
const redis = withScripts(redisClient(env.REDIS_URL));
const flashgate = await startFlashgate(env, processes);
const baselines: RunningSystem[] = [
  await startMysqlOnly(env, processes),
  await startRedisTruth(env, processes, "everysec"),
  await startRedisTruth(env, processes, "always"),
  ...(naive
    ? [await startMysqlOnly(env, processes, true), await startRedisTruth(env, processes, "everysec", true)]
    : []),
];
const systems: Systems = { flashgate, designs: [flashgate, ...baselines], hello: await startHello() };
const save = (scenario: string, data: object) =>
  process.stderr.write(`  → ${writeResult(folder, resultName(scenario), { facts, ...data })}\n`);

try {
  if (wanted("openloop")) {
    const profile = {
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
    };
    process.stderr.write(`▸ open loop ${JSON.stringify(profile)}\n`);
    save("openloop", await openLoop(systems, pool, redis, env.AUTH_JWT_SECRET, profile));
  }
  if (wanted("storm")) {
    const profile = {
      ...(quick
        ? { units: 200, requests: 10_000, users: 5_000, connections: 100 }
        : { units: 1000, requests: 100_000, users: 20_000, connections: 100 }),
      processesPerSystem: processes,
      rounds,
    };
    process.stderr.write(`▸ storm ${JSON.stringify(profile)}\n`);
    save("storm", await storm(systems, pool, redis, env.AUTH_JWT_SECRET, profile));
  }
  if (wanted("firstsecond")) {
    const profile = {
      ...(quick
        ? { units: 250, arrivals: 5_000, connections: 250 }
        : { units: 1000, arrivals: 20_000, connections: 500 }),
      processesPerSystem: processes,
      rounds,
    };
    process.stderr.write(`▸ the first second of a sale ${JSON.stringify(profile)}\n`);
    save("firstsecond", await firstSecond(systems, pool, redis, env.AUTH_JWT_SECRET, profile));
  }
  if (wanted("bots")) {
    const profile = {
      ...(quick
        ? { rate: 5_000, seconds: 1, botUsers: 100, connections: 250 }
        : { rate: 10_000, seconds: 2, botUsers: 200, connections: 500 }),
      processesPerSystem: processes,
      rounds,
    };
    process.stderr.write(`▸ bots beside buyers ${JSON.stringify(profile)}\n`);
    save("bots", await bots(systems, pool, redis, env.AUTH_JWT_SECRET, profile));
  }
  if (wanted("queued")) {
    const profile = {
      ...(quick
        ? {
            stepMs: 1000,
            warmupMs: 500,
            connections: 500,
            startRate: 2000,
            minRate: 250,
            tries: 1,
            resolution: 0.5,
          }
        : {
            stepMs: 2000,
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
    };
    process.stderr.write(
      `▸ queued admission beside deciding at once and Redis-as-truth ${JSON.stringify(profile)}\n`,
    );
    const queued = await startFlashgateQueued(env, processes);
    try {
      save("queued", await queuedScenario(systems, queued, pool, redis, env.AUTH_JWT_SECRET, profile));
    } finally {
      await queued.stop();
    }
  }
  if (wanted("bigstock")) {
    const profile = {
      ...(quick
        ? { units: 5_000, requests: 15_000, users: 7_500 }
        : { units: 50_000, requests: 150_000, users: 75_000 }),
      connections: 100,
      rounds,
    };
    process.stderr.write(`▸ big stock ${JSON.stringify(profile)}\n`);
    save("bigstock", await bigStock(systems, pool, redis, env.AUTH_JWT_SECRET, profile));
  }
  if (wanted("catalogue")) {
    const profile = {
      ...(quick
        ? { skus: 100, unitsPerSku: 50, requests: 20_000, users: 10_000 }
        : { skus: 1000, unitsPerSku: 100, requests: 100_000, users: 50_000 }),
      connections: 100,
      zipf: 1.1,
      rounds,
    };
    process.stderr.write(`▸ catalogue ${JSON.stringify(profile)}\n`);
    save("catalogue", await catalogue(systems, pool, redis, env.AUTH_JWT_SECRET, profile));
  }
  if (wanted("drift")) {
    process.stderr.write("▸ drift\n");
    save("drift", await driftScenario(systems, pool, redis, env.AUTH_JWT_SECRET, quick ? 5 : 15, rounds));
  }
  if (wanted("micro")) {
    process.stderr.write("▸ micro ceilings\n");
    save(
      "micro",
      await microScenario(systems, pool, redis, env.REDIS_URL, env.AUTH_JWT_SECRET, quick ? 10_000 : 60_000),
    );
  }
  if (wanted("flood")) {
    const profile = quick
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
        };
    process.stderr.write(`▸ flood of unknown-SKU views beside a sale ${JSON.stringify(profile)}\n`);
    save("flood", await floodScenario(systems, pool, redis, env.AUTH_JWT_SECRET, profile));
  }
  if (wanted("cdc")) {
    const profile = quick
      ? { orders: 10_000, ordersPerTransaction: 1000, writers: 4, skus: 1000 }
      : { orders: 200_000, ordersPerTransaction: 1000, writers: 4, skus: 1000 };
    process.stderr.write(`▸ CDC throughput, a burst ${JSON.stringify(profile)}\n`);
    save("cdc", await cdcScenario(systems, pool, env, profile, () => stackCpuMs(ctx)));
  }
  if (wanted("cdcsteady")) {
    // Decision-sized transactions (100 orders over 20 SKUs) at the goal's rate and below it.
    const profile = {
      rates: [5_000, 7_500, 10_000, 20_000],
      seconds: quick ? 10 : 60,
      writers: 8,
      ordersPerTransaction: 100,
      skusPerWriter: 20,
    };
    process.stderr.write(`▸ CDC held at ${profile.rates.join(", ")} events/s ${JSON.stringify(profile)}\n`);
    save("cdcsteady", await cdcSustained(systems, pool, profile, () => stackCpuMs(ctx)));
  }
  if (wanted("deadline")) {
    const profile = quick
      ? { orders: 2_000, skus: 20, buyersPerSecond: 500, buyingMs: 8_000 }
      : { orders: 50_000, skus: 100, buyersPerSecond: 2000, buyingMs: 120_000 };
    process.stderr.write(`▸ a payment deadline ${JSON.stringify(profile)}\n`);
    save("deadline", await massExpiry(systems, pool, redis, env.AUTH_JWT_SECRET, profile));
  }
  if (wanted("lag")) {
    process.stderr.write("▸ CDC lag\n");
    save(
      "lag",
      await lagScenario(pool, systems.flashgate.maintainerUrls, [250, 500, 1000, 2000], quick ? 3 : 15),
    );
  }
  // A second whole stack takes minutes to start: the quick run leaves it out unless asked for.
  if (only ? wanted("topology") : !quick) {
    const profile = {
      ...(quick
        ? { units: 200, requests: 10_000, users: 5_000, rounds: 2, lagSeconds: 5 }
        : { units: 1000, requests: 50_000, users: 20_000, rounds: 3, lagSeconds: 15 }),
      connections: 100,
      lagRates: [500, 1000],
    };
    process.stderr.write(`▸ single topology beside the cluster topology ${JSON.stringify(profile)}\n`);
    const cluster = await startBenchStack("cluster");
    const clusterPool = createPool(cluster.env.DATABASE_URL, { connectionLimit: 16 });
    const clusterRedis = withScripts(redisClient(cluster.env.REDIS_URL));
    // The same two API processes as the single topology's, and two maintainers in one group.
    const clusterFlashgate = await startFlashgate(cluster.env, processes, 2);
    try {
      const single = {
        topology: "single" as const,
        urls: systems.flashgate.urls,
        maintainerUrls: systems.flashgate.maintainerUrls,
        pool,
        redis,
        secret: env.AUTH_JWT_SECRET,
      };
      const result = await topologyScenario(
        single,
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
      save("topology", result);
    } finally {
      await clusterFlashgate.stop();
      await clusterPool.end();
      clusterRedis.disconnect();
      if (process.env.FLASHGATE_KEEP_BENCH_STACK !== "1") await down(cluster.ctx);
    }
  }
} finally {
  for (const system of [...systems.designs, systems.hello]) await system.stop();
  await pool.end();
  redis.disconnect();
  if (process.env.FLASHGATE_KEEP_BENCH_STACK !== "1") await down(ctx);
}
// The engines' ratio is only taken within one run: the storm on MariaDB follows, on its own bench stack
// (not in a quick run, unless the storm is asked for by name).
if ((only ? wanted("storm") : !quick) && engine === "mysql" && !child) {
  const mariadb = spawnSync(
    process.execPath,
    [process.argv[1], "--only", "storm", ...(quick ? ["--quick"] : []), "--processes", String(processes)],
    {
      stdio: "inherit",
      env: {
        ...process.env,
        FLASHGATE_DB: "mariadb",
        FLASHGATE_BENCH_RUN: benchRun,
        FLASHGATE_BENCH_RUN_DIR: folder,
      },
    },
  );
  if (mariadb.status !== 0) process.exit(mariadb.status ?? 1);
}
if (!child)
  process.stderr.write(
    `report: ${writeReport(folder, { quick, only, naive, startedAt: benchRun, commit })}${quick || only ? "" : " and bench/RESULTS.md"}\n`,
  );
process.exit(0);
