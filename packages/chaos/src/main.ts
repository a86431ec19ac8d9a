import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  appEnv,
  consoleProgress,
  databaseEngineOf,
  down,
  repoRoot,
  sideStackHome,
  stackContext,
  up,
} from "@flashgate/stack";
import { profiles } from "./profiles.ts";
import { runChaos } from "./run.ts";

/** `npm run chaos [-- --seed N --minutes M --profile short|long]`: on its own stack, its report in a run folder of bench/results. */
const { values } = parseArgs({
  options: {
    seed: { type: "string" },
    minutes: { type: "string" },
    profile: { type: "string", default: "long" },
  },
});
const base = profiles[values.profile === "short" ? "short" : "long"];
const profile = values.minutes ? { ...base, durationMs: Number(values.minutes) * 60_000 } : base;
const seed = values.seed ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
if (!Number.isSafeInteger(seed) || !(profile.durationMs > 0)) {
  console.error("usage: npm run chaos -- [--seed <integer>] [--minutes <number>] [--profile short|long]");
  process.exit(2);
}

const engine = databaseEngineOf(process.env);
// The chaos stack has its own ports and data dir: faults here never reach a dev, test or bench stack.
const stack = {
  FLASHGATE_HOME: sideStackHome("chaos", engine),
  FLASHGATE_DB: engine,
  FLASHGATE_DB_PORT: "33307",
  FLASHGATE_REDIS_PORT: "36380",
  FLASHGATE_KAFKA_PORT: "39092",
  FLASHGATE_KAFKA_CONTROLLER_PORT: "39093",
  FLASHGATE_CONNECT_PORT: "38083",
};
const ctx = stackContext({ env: { ...process.env, ...stack }, progress: consoleProgress() });
const started = await up(ctx, { withApps: false });

console.log(
  `chaos: profile ${profile.name}, ${profile.durationMs / 1000} s, seed ${seed} (replay with --seed ${seed})`,
);
const report = await runChaos({
  seed,
  profile,
  ctx,
  env: appEnv(ctx),
  ports: { api: 38080, maintainer: 38082 },
  log: (line) => console.log(line),
});
// A folder per run, as the bench's: when it started, what it ran.
const stamp = new Date().toISOString().slice(0, 19).replaceAll(":", "-");
const dir = join(repoRoot, "bench", "results", `${stamp}-chaos-${profile.name}-${seed}`);
mkdirSync(dir, { recursive: true });
const file = join(dir, "chaos.json");
writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
const { faults: _, ...summary } = report;
console.log(JSON.stringify(summary, null, 2));
console.log(`report: ${file}`);
console.log(report.violations.length ? `${report.violations.length} violations` : "no violations");
if (process.env.FLASHGATE_KEEP_CHAOS_STACK !== "1") await down(ctx, { only: started });
process.exit(report.violations.length ? 1 : 0);
