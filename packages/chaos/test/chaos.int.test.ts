import { freePort, stackEnv, testContext } from "@flashgate/testkit";
import { describe, expect, it } from "vitest";
import { profiles, runChaos } from "../src/index.ts";

describe("chaos, short profile", () => {
  it("a seeded sale under every kind of fault keeps every property", async () => {
    const seed = Number(process.env.CHAOS_SEED ?? 20261130);
    const report = await runChaos({
      seed,
      profile: profiles.short,
      ctx: testContext(),
      env: stackEnv(),
      ports: { api: await freePort(), maintainer: await freePort() },
      log: (line) => console.log(line),
    });
    console.log(JSON.stringify({ ...report, faults: undefined }, null, 2));
    expect(new Set(report.faults.map((fault) => fault.kind)).size).toBeGreaterThanOrEqual(
      profiles.short.kinds.length,
    );
    expect(report.violations).toEqual([]);
    expect(report.serverErrors + report.unavailableLeft).toBe(0);
  }, 180_000);
});
