import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "@flashgate/stack";
import { type AppProcess, clients, stackPart, startMaintainer } from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import { afterAll, afterEach, beforeAll, describe, it } from "vitest";
import { expectCdcFlows, restockSoldFromMysql } from "./cdc-faults.ts";

/**
 * Kafka or Connect down: what fails is not the database, so this runs on MySQL only (`npm run
 * test:engine` leaves it out); the fallback's SQL runs on both engines in cdc-fallback.service.test.ts,
 * and a failed task on both in cdc-healing.int.test.ts.
 */
describe("buyers are served what MySQL holds while Kafka or Connect is down", () => {
  const c = clients();
  const timings: Record<string, number> = {};
  let maintainer: AppProcess;
  let api: ApiHarness;
  let killed: { restore: () => Promise<void> } | undefined;
  beforeAll(async () => {
    maintainer = await startMaintainer();
    api = await startApi();
  });
  afterEach(async () => {
    await killed?.restore();
    killed = undefined;
    await expectCdcFlows(c);
  }, 300_000);
  afterAll(async () => {
    await api.close();
    await maintainer.kill();
    await c.close();
    mkdirSync(join(repoRoot, "test-artifacts"), { recursive: true });
    writeFileSync(join(repoRoot, "test-artifacts", "cdc-down.json"), `${JSON.stringify(timings, null, 2)}\n`);
  });

  for (const [part, name] of [
    ["connect", "Kafka Connect"],
    ["kafka", "Kafka"],
  ] as const)
    it(`${name} killed: a raw-SQL restock is sold from MySQL's state`, async () => {
      timings[`${part}KilledRestockTo201`] = await restockSoldFromMysql(c, api, maintainer, async () => {
        const stopped = await stackPart(part);
        await stopped.kill();
        killed = stopped;
      });
    }, 300_000);
});
