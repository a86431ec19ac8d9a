import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "@flashgate/stack";
import { describe, expect, it } from "vitest";
import { writeReport } from "./report.ts";
import { roundRatios } from "./tables.ts";

const ceiling = (design: string, sustainedPerSecond: number) => ({ design, sustainedPerSecond, steps: [] });

/** An open loop of two rounds, flashgate beside two variants of Redis-as-truth and one MySQL-only. */
const openLoop = {
  profile: {
    connections: 10,
    startRate: 100,
    factor: 1.3,
    stepMs: 1000,
    warmupMs: 0,
    stormUnitShare: 0.01,
    catalogue: { skus: 5, zipf: 1.1 },
  },
  results: {
    storm: [
      {
        round: 1,
        order: ["flashgate", "redis-as-truth", "redis-as-truth, fsync always", "mysql-only"],
        ceilings: {
          flashgate: ceiling("flashgate", 6000),
          "redis-as-truth": ceiling("redis-as-truth", 5000),
          "redis-as-truth, fsync always": ceiling("redis-as-truth", 2000),
          "mysql-only": ceiling("mysql-only", 1000),
        },
      },
      {
        round: 2,
        order: ["redis-as-truth", "redis-as-truth, fsync always", "mysql-only", "flashgate"],
        ceilings: {
          flashgate: ceiling("flashgate", 4000),
          "redis-as-truth": ceiling("redis-as-truth", 2000),
          "redis-as-truth, fsync always": ceiling("redis-as-truth", 8000),
          "mysql-only": ceiling("mysql-only", 500),
        },
      },
    ],
  },
};

describe("the bench report", () => {
  it("takes each ratio within one round, over the strongest variant of the baseline in that round", () => {
    const rows = [
      { round: 1, system: "flashgate", design: "flashgate", rate: 60 },
      { round: 1, system: "b", design: "b", rate: 50 },
      { round: 1, system: "b, slower", design: "b", rate: 20 },
      { round: 2, system: "b", design: "b", rate: 10 },
      { round: 2, system: "flashgate", design: "flashgate", rate: 30 },
      { round: 2, system: "b, slower", design: "b", rate: 40 },
    ];
    expect(roundRatios(rows, "b", (r) => r.rate)).toEqual([1.2, 0.75]);
    // Lower is better (a latency): the baseline's best over flashgate's.
    expect(roundRatios(rows, "b", (r) => r.rate, true)).toEqual([20 / 60, 10 / 30]);
  });

  it("writes a partial run's report from that run's files alone, with the goals it measured, and leaves bench/RESULTS.md alone", () => {
    const folder = mkdtempSync(join(tmpdir(), "bench-run-"));
    writeFileSync(
      join(folder, "openloop.json"),
      JSON.stringify({ facts: { cpus: "2 × test" }, ...openLoop, tookSeconds: 2545 }),
    );
    const results = join(repoRoot, "bench", "RESULTS.md");
    const before = statSync(results).mtimeMs;
    const report = readFileSync(
      writeReport(folder, {
        quick: false,
        only: ["openloop"],
        naive: false,
        startedAt: "T0",
        commit: "abc1234",
      }),
      "utf8",
    );
    expect(statSync(results).mtimeMs).toBe(before);
    expect(report).toContain(
      "(full, its results: openloop), written by that run from its own results: commit abc1234, started T0",
    );
    expect(report).toContain("cpus 2 × test");
    expect(report).toContain("Time each scenario took: openloop 42 min 25 s.");
    // Rounds: 6000 / 5000 = 1.2 and 4000 / 8000 = 0.5 over the strongest Redis-as-truth; the median of two
    // is the upper one.
    expect(report).toMatch(
      /\| storm, open loop: flashgate ÷ the strongest Redis-as-truth \| 1\.20 \(0\.50–1\.20\) \| ≥ 1\.2 \| \*\*met\*\* \|/,
    );
    expect(report).toMatch(
      /\| storm, open loop: flashgate ÷ the strongest MySQL-only \| 8\.00 \(6\.00–8\.00\) \| ≥ 10 \| missed: ×1\.25 to go \|/,
    );
    expect(report).toMatch(
      /\| CDC, whole pipeline, events\/s \| – \| ≥ 20,000 \| not measured in this run \|/,
    );
  });

  it("reports the highest rate the CDC pipeline held with lag p99 under 2 s, and every rate tried", () => {
    const folder = mkdtempSync(join(tmpdir(), "bench-run-"));
    const cpu = { database: 40, connect: 36, kafka: 20, maintainers: 25, machine: 150 };
    const held = (target: number, achieved: number, lagP99Ms: number, isHeld: boolean) => ({
      targetPerSecond: target,
      achievedPerSecond: achieved,
      applied: achieved * 60,
      lagP50Ms: 40,
      lagP99Ms,
      stagesP99Ms: { "binlog-read": 10, "kafka-send": 20, consumed: 30, applied: 5 },
      cpuUsPerEvent: cpu,
      held: isHeld,
    });
    const cdc = {
      profile: {
        orders: 1000,
        ordersPerTransaction: 100,
        writers: 4,
        skus: 100,
        events: 1250,
        eventsPerTransaction: 125,
      },
      stages: {
        writers: { ms: 100, eventsPerSecond: 12500 },
        debezium: { ms: 100, eventsPerSecond: 12500, cpuUsPerEvent: cpu },
        maintainers: { ms: 100, eventsPerSecond: 12500, processes: 1 },
      },
      pipeline: {
        writtenMs: 100,
        drainedMs: 200,
        eventsPerSecond: 6250,
        cpuUsPerEvent: cpu,
        cores: 2,
        debeziumLag: { p50Ms: 1, p99Ms: 2 },
        committedLag: { p50Ms: 3, p99Ms: 4 },
        maintainerLagP50Ms: 5,
        maintainerLagP99Ms: 6,
        applied: 1250,
      },
    };
    const steady = {
      profile: {
        rates: [5000, 10000, 20000],
        seconds: 60,
        writers: 8,
        ordersPerTransaction: 100,
        skusPerWriter: 20,
        eventsPerTransaction: 120,
      },
      // 10,000 achieved 9,900 with p99 1.5 s: held; 20,000 fell behind.
      results: [held(5000, 4990, 300, true), held(10000, 9900, 1500, true), held(20000, 11000, 9000, false)],
    };
    writeFileSync(join(folder, "cdc.json"), JSON.stringify({ facts: { cpus: "2 × test" }, ...cdc }));
    writeFileSync(join(folder, "cdcsteady.json"), JSON.stringify({ facts: { cpus: "2 × test" }, ...steady }));
    const only = ["cdc", "cdcsteady"];
    const report = readFileSync(
      writeReport(folder, { quick: false, only, naive: false, startedAt: "T0", commit: "abc1234" }),
      "utf8",
    );
    expect(report).toMatch(
      /\| CDC held for its seconds with lag p99 < 2 s, events\/s \| 9900 \| ≥ 20,000 \| missed: ×2\.02 to go \|/,
    );
    expect(report).toContain(
      "| 20000 | 11000 | 660000 | 40 | 9000 | 10 / 20 / 30 / 5 | 150 (40, 36, 20, 25) | no |",
    );
  });
});
