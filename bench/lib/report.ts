import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "@flashgate/stack";
import { type DecisionResult, decisionGoals, decisionSection } from "../scenarios/decision.ts";
import { scenarios } from "../scenarios/index.ts";
import type { Goal } from "./scenario.ts";
import { median, type Results, spread } from "./tables.ts";

const resultsDir = join(repoRoot, "bench", "results");

/** This bench run: a run that goes on in a child process (the storm on MariaDB) hands it on. */
export const benchRun = process.env.FLASHGATE_BENCH_RUN ?? new Date().toISOString();

/**
 * The run's own folder, `bench/results/<start>[-quick][-only-…]`: its result files and its report,
 * never mixed with another run's.
 */
export function runFolder(kind: { quick: boolean; only?: string[] }): string {
  if (process.env.FLASHGATE_BENCH_RUN_DIR) return process.env.FLASHGATE_BENCH_RUN_DIR;
  const stamp = benchRun.replaceAll(":", "-").slice(0, 19);
  const name = [stamp, kind.quick ? "quick" : "", kind.only ? `only-${kind.only.join(",")}` : ""]
    .filter(Boolean)
    .join("-");
  return join(resultsDir, name);
}

export function writeResult(folder: string, scenario: string, data: object): string {
  mkdirSync(folder, { recursive: true });
  const file = join(folder, `${scenario}.json`);
  writeFileSync(file, `${JSON.stringify({ run: benchRun, ...data }, null, 2)}\n`);
  return file;
}

function readRun(folder: string): Results {
  const found: Results = {};
  for (const file of readdirSync(folder).filter((f) => f.endsWith(".json")))
    found[file.slice(0, -5)] = { file, data: JSON.parse(readFileSync(join(folder, file), "utf8")) };
  return found;
}

const git = (...args: string[]) =>
  spawnSync("git", args, { cwd: repoRoot, encoding: "utf8" }).stdout?.trim() ?? "";

/** The commit the run measured, and whether the tree had changes of its own. */
export function runCommit(): string {
  const commit = git("rev-parse", "--short", "HEAD") || "unknown";
  return git("status", "--porcelain", "--untracked-files=no") ? `${commit} with uncommitted changes` : commit;
}

const minutes = (seconds: number) =>
  seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;

/** Each goal, the run's figure and how far it is from it. */
function goalsTable(results: Results): string[] {
  const goals: Goal[] = [
    ...decisionGoals(results.decision?.data as DecisionResult | undefined),
    ...scenarios.flatMap((scenario) => scenario.goals?.(results) ?? []),
  ];
  const lines = [
    "## Goals",
    "",
    "| goal | this run (median, min–max of the rounds) | target | distance |",
    "|---|---|---|---|",
  ];
  for (const goal of goals) {
    const figure = median(goal.values);
    const digits = goal.target >= 100 || goal.target === 0 ? 0 : 2;
    let distance = "not measured in this run";
    if (Number.isFinite(figure)) {
      const met = goal.atMost ? figure <= goal.target : figure >= goal.target;
      const factor = goal.atMost ? figure / goal.target : goal.target / figure;
      distance = met
        ? "**met**"
        : figure === 0
          ? "missed (0)"
          : goal.target === 0
            ? `missed: ${figure} too many`
            : `missed: ×${factor.toFixed(2)} to go`;
    }
    lines.push(
      `| ${goal.what} | ${spread(goal.values, digits)} | ${goal.atMost ? "≤" : "≥"} ${goal.target.toLocaleString("en")} | ${distance} |`,
    );
  }
  lines.push("");
  return lines;
}

/** The designs, as built for the bench: two lines each. */
const designNotes = [
  "- **flashgate**: one Redis Lua call filters, MySQL decides the survivors in group-committed transactions, CDC keeps Redis in step; run as deployed (drift check every 10 s, order expiry every 1 s, the CDC supervisor, the sold-out snapshot), 2 API processes, 1 maintainer.",
  "  Durable when answered: every order committed in MySQL (`sync_binlog=1`, `innodb_flush_log_at_trx_commit=1`) before its 201.",
  "- **mysql-only** (`bench/baselines/mysql-group-commit.ts`): no Redis; every buyer decided by MySQL with flashgate's own group commit and decision statement, and a sold-out SKU refused from an in-process snapshot of its buyers (250 ms, renewed from its stock row).",
  "  Durable when answered, as flashgate; a restock is seen up to 250 ms late (it only refuses).",
  "- **redis-as-truth** (`bench/baselines/redis-truth.ts`): a Lua DECR + buyers set on a Redis of its own decides, an asynchronous writer persists orders to MySQL, and a SKU Redis called sold out is refused in process for 250 ms.",
  "  Durable as its Redis's append-only file, `appendfsync everysec` (as the design is deployed: up to a second of admissions lost with the host); nothing carries a database edit back to Redis.",
  "- **redis-as-truth, fsync always**: the same on a Redis that syncs its append-only file before answering each write.",
  "  As durable as MySQL when answered (the orders themselves still reach MySQL later).",
];

const naiveNotes = [
  "- **mysql-only, naive** (`bench/baselines/mysql-only.ts`): a transaction of its own for every request, no memory of a sold-out SKU.",
  "  Shown to measure what group commit and the sold-out memory give the design.",
  "- **redis-as-truth, naive**: redis-as-truth without the in-process sold-out marker (every request asks Redis).",
  "  Shown to measure what the marker gives the design.",
];

export interface RunKind {
  quick: boolean;
  only?: string[];
  naive: boolean;
  startedAt: string;
  commit: string;
}

/**
 * Writes the run's report (RESULTS.md in its folder, with its charts) from that run's results alone; a
 * full run's report is also bench/RESULTS.md.
 */
export function writeReport(folder: string, kind: RunKind): string {
  const results = readRun(folder);
  const facts = (Object.values(results).find((r) => r.data.facts)?.data.facts ?? {}) as Record<
    string,
    unknown
  >;
  // What the run measured, read from its folder: a run that stopped early says so by what it lacks.
  const scope = `its results: ${Object.keys(results).sort().join(", ")}`;
  const took = Object.entries(results).flatMap(([name, { data }]) =>
    typeof data.tookSeconds === "number" ? [`${name} ${minutes(data.tookSeconds)}`] : [],
  );
  const lines = [
    "# Benchmark results",
    "",
    `One run of \`npm run bench${kind.quick ? " -- --quick" : ""}${kind.only ? ` -- --only ${kind.only.join(",")}` : ""}\` (${kind.quick ? "quick" : "full"}, ${scope}), written by that run from its own results: commit ${kind.commit}, started ${kind.startedAt}, ended ${new Date().toISOString()}. Every design runs on the same machine in the same run, so compare ratios, not absolute numbers; a ratio only ever compares figures of one round.`,
    "",
    `Machine: ${Object.entries(facts)
      .map(([k, v]) => `${k} ${v}`)
      .join("; ")}`,
    "",
    ...(took.length ? [`Time each scenario took: ${took.join(", ")}.`, ""] : []),
    ...goalsTable(results),
    "## The designs",
    "",
    ...designNotes,
    ...(kind.naive ? naiveNotes : []),
    "",
    // The decision runs before the bench stack, the others on it, in the report's order.
    ...decisionSection(results.decision?.data as DecisionResult | undefined),
    ...scenarios.flatMap((scenario) => scenario.section(results, folder)),
  ];
  const changes = (link: string) =>
    `What each change for sales at full size did, measured before and after it, is in [changes.md](${link}) (each entry from its own runs, not this one).\n`;
  const report = join(folder, "RESULTS.md");
  writeFileSync(report, `${lines.join("\n")}\n${changes("../../changes.md")}`);
  if (!kind.quick && !kind.only) {
    const bench = join(repoRoot, "bench");
    writeFileSync(join(bench, "RESULTS.md"), `${lines.join("\n")}\n${changes("changes.md")}`);
    for (const chart of readdirSync(folder).filter((f) => f.endsWith(".svg")))
      copyFileSync(join(folder, chart), join(bench, chart));
  }
  return report;
}
