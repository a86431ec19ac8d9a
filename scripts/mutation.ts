// npm run mutation [-- <stryker run options>, e.g. --mutate packages/auth/src/jwt.ts or --force]
//
// Mutation testing of the money path (auth, sale, db, cache, the maintainer's apply logic) against the
// fast test tiers. Incremental: a rerun tests only the mutants whose code or tests changed since the
// last report (test-artifacts/mutation/incremental.json); --force tests them all again.

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  databaseEngineOf,
  down,
  repoRoot,
  sideStackHome,
  silentProgress,
  stackContext,
} from "@flashgate/stack";

const reportDir = join(repoRoot, "test-artifacts", "mutation");
const engine = databaseEngineOf(process.env);
// Each Stryker worker starts its own Redis and database here (not in Stryker's copy of the repository).
const workersHome = join(sideStackHome("test", engine), "mutation");
mkdirSync(workersHome, { recursive: true });

const started = Date.now();
const stryker = spawnSync(
  join(repoRoot, "node_modules", ".bin", "stryker"),
  ["run", ...process.argv.slice(2)],
  {
    cwd: repoRoot,
    stdio: "inherit",
    env: {
      ...process.env,
      FLASHGATE_DB: engine,
      FLASHGATE_JARS: process.env.FLASHGATE_JARS ?? join(repoRoot, ".flashgate", "jars"),
      FLASHGATE_FAST_TIER_HOME: workersHome,
    },
  },
);

// A worker Stryker killed (a mutant that never returned) leaves its servers behind: stop them all.
for (const dir of readdirSync(workersHome)) {
  const ctx = stackContext({
    env: { FLASHGATE_DB: engine },
    home: join(workersHome, dir),
    progress: silentProgress,
  });
  // A part a worker never started is simply "not running".
  await down(ctx, { only: ["redis", "database"] });
}

const reportFile = join(reportDir, "report.json");
if (stryker.status !== 0 || !existsSync(reportFile)) {
  console.error(`mutation: stryker ended with ${stryker.status ?? stryker.signal}`);
  process.exit(1);
}

type Status =
  | "Killed"
  | "Timeout"
  | "Survived"
  | "NoCoverage"
  | "CompileError"
  | "RuntimeError"
  | "Ignored"
  | "Pending";
const report: { files: Record<string, { mutants: { status: Status }[] }> } = JSON.parse(
  readFileSync(reportFile, "utf8"),
);

const goal = 85;
const rows = new Map<string, Record<Status, number>>();
for (const [file, { mutants }] of Object.entries(report.files)) {
  const pkg = file.split("/").slice(0, 2).join("/");
  const row = rows.get(pkg) ?? ({} as Record<Status, number>);
  for (const { status } of mutants) row[status] = (row[status] ?? 0) + 1;
  rows.set(pkg, row);
}
const lines = [
  `# Mutation score per package (${engine}, ${new Date().toISOString()}, ${Math.round((Date.now() - started) / 1000)} s)`,
  "",
  "Score = (killed + timed out) / (killed + timed out + survived + not covered); compile errors and",
  `ignored mutants do not count. Goal: ${goal} % per package. Report: test-artifacts/mutation/report.html.`,
  "",
  "| package | score | killed | timeout | survived | no coverage | compile errors | ignored |",
  "| ------- | ----: | -----: | ------: | -------: | ----------: | -------------: | ------: |",
];
let belowGoal = 0;
for (const [pkg, n] of [...rows].sort()) {
  const detected = (n.Killed ?? 0) + (n.Timeout ?? 0);
  const valid = detected + (n.Survived ?? 0) + (n.NoCoverage ?? 0);
  const score = valid === 0 ? 100 : (100 * detected) / valid;
  if (score < goal) belowGoal++;
  lines.push(
    `| ${pkg} | ${score.toFixed(1)} % | ${n.Killed ?? 0} | ${n.Timeout ?? 0} | ${n.Survived ?? 0} | ${n.NoCoverage ?? 0} | ${n.CompileError ?? 0} | ${n.Ignored ?? 0} |`,
  );
}
writeFileSync(join(reportDir, "scores.md"), `${lines.join("\n")}\n`);
console.log(`\n${lines.join("\n")}\n`);
if (belowGoal > 0) console.log(`mutation: ${belowGoal} package(s) below ${goal} %`);
