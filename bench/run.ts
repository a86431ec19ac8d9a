// npm run bench [-- --quick] [-- --only decision,storm,firstsecond,bots,queued,drift,lag,micro,flood,topology,bigstock,catalogue,cdc,cdcsteady,deadline,openloop]
//   [-- --naive] [-- --processes N]
// One run, one report: bench/results/<start>[-quick][-only-…]/RESULTS.md from this run's results alone, and
// for a full run bench/RESULTS.md. --naive adds the baselines' naive versions as extra rows.

import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { redisClient, withScripts } from "@flashgate/cache";
import { createPool } from "@flashgate/db";
import { databaseEngines, down } from "@flashgate/stack";
import { baselinesDatabase, databaseFacts, machineFacts, startBenchStack } from "./lib/env.ts";
import { benchRun, runCommit, runFolder, writeReport, writeResult } from "./lib/report.ts";
import type { Bench, RunSettings } from "./lib/scenario.ts";
import {
  type RunningSystem,
  type Systems,
  startFlashgate,
  startHello,
  startMysqlOnly,
  startRedisTruth,
} from "./lib/systems.ts";
import { decisionScenario } from "./scenarios/decision.ts";
import { scenarios } from "./scenarios/index.ts";

const args = process.argv.slice(2);
/** How long a scenario ran, kept in its result for the report. */
const secondsSince = (start: number) => Math.round((performance.now() - start) / 1000);
const quick = args.includes("--quick");
const onlyAt = args.findIndex((a) => a === "--only" || a.startsWith("--only="));
const only =
  onlyAt < 0
    ? undefined
    : (args[onlyAt].includes("=") ? args[onlyAt].split("=")[1] : args[onlyAt + 1])?.split(",");
const wanted = (name: string) => !only || only.includes(name);
const known = ["decision", ...scenarios.map((scenario) => scenario.name)];
const unknown = only?.filter((name) => !known.includes(name)) ?? [];
if (unknown.length) {
  process.stderr.write(
    `bench: no scenario named ${unknown.join(", ")}; the scenarios: ${known.join(", ")}\n`,
  );
  process.exit(2);
}
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
  const profile = quick ? { seconds: 1, rounds: 1 } : { seconds: 6, rounds: 2 };
  process.stderr.write(`▸ the decision beside the database's floor ${JSON.stringify(profile)}\n`);
  const started = performance.now();
  const result = await decisionScenario([...databaseEngines], profile, (line) =>
    process.stderr.write(`${line}\n`),
  );
  process.stderr.write(
    `  → ${writeResult(folder, "decision", { ...result, tookSeconds: secondsSince(started) })}\n`,
  );
  if (only?.every((name) => name === "decision")) {
    process.stderr.write(
      `report: ${writeReport(folder, { quick, only, naive, startedAt: benchRun, commit })}\n`,
    );
    process.exit(0);
  }
}

const { ctx, env } = await startBenchStack();
const pool = createPool(env.DATABASE_URL, { connectionLimit: 16 });
const baselinesEnv = await baselinesDatabase(ctx, env);
const baselinesPool = createPool(baselinesEnv.DATABASE_URL, { connectionLimit: 16 });
const engine = ctx.config.FLASHGATE_DB;
const facts = machineFacts(await databaseFacts(pool, engine));
process.stderr.write(
  `flashgate bench (${quick ? "quick" : "full"}, ${processes} server processes per design) on ${JSON.stringify(facts)}\n`,
);
// MySQL 8 is what production runs; a run on another engine is kept beside it for comparison.
const resultName = (scenario: string) => (engine === "mysql" ? scenario : `${scenario}-${engine}`);
const redis = withScripts(redisClient(env.REDIS_URL));
const flashgate = await startFlashgate(env, pool, processes);
const baselines: RunningSystem[] = [
  await startMysqlOnly(baselinesEnv, baselinesPool, processes),
  await startRedisTruth(baselinesEnv, baselinesPool, processes, "everysec"),
  await startRedisTruth(baselinesEnv, baselinesPool, processes, "always"),
  ...(naive
    ? [
        await startMysqlOnly(baselinesEnv, baselinesPool, processes, true),
        await startRedisTruth(baselinesEnv, baselinesPool, processes, "everysec", true),
      ]
    : []),
];
const systems: Systems = { flashgate, designs: [flashgate, ...baselines], hello: await startHello() };
const save = (scenario: string, data: object) =>
  process.stderr.write(`  → ${writeResult(folder, resultName(scenario), { facts, ...data })}\n`);
const run: RunSettings = { quick, rounds, processes };
const bench: Bench = { ...run, systems, redis, env, ctx };

try {
  for (const scenario of scenarios) {
    // A scenario for full runs only is left out of a quick run unless asked for by name.
    if (only ? !wanted(scenario.name) : quick && scenario.fullOnly) continue;
    const profile = scenario.profile(run);
    process.stderr.write(`▸ ${scenario.title} ${JSON.stringify(profile)}\n`);
    const started = performance.now();
    const result = await scenario.run(bench, profile);
    save(scenario.name, { ...result, tookSeconds: secondsSince(started) });
  }
} finally {
  for (const system of [...systems.designs, systems.hello]) await system.stop();
  await pool.end();
  await baselinesPool.end();
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
