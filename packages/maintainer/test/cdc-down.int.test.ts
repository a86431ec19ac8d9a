import { clients, stackPart } from "@flashgate/testkit";
import { describe, it } from "vitest";
import { cdcOutageFixture, restockSoldFromMysql } from "./cdc-faults.ts";

/**
 * Kafka or Connect down: what fails is not the database, so this runs on MySQL only (`npm run
 * test:engine` leaves it out); the fallback's SQL runs on both engines in cdc-fallback.service.test.ts,
 * and a failed task on both in cdc-healing.int.test.ts.
 */
describe("buyers are served what MySQL holds while Kafka or Connect is down", () => {
  const c = clients();
  const timings: Record<string, number> = {};
  const fixture = cdcOutageFixture(c, timings, "cdc-down.json");

  for (const [part, name] of [
    ["connect", "Kafka Connect"],
    ["kafka", "Kafka"],
  ] as const)
    it(`${name} killed: a raw-SQL restock is sold from MySQL's state`, async () => {
      timings[`${part}KilledRestockTo201`] = await restockSoldFromMysql(
        c,
        fixture.api,
        fixture.maintainer,
        async () => {
          const killed = await stackPart(part);
          await killed.kill();
          fixture.broken = killed;
        },
      );
    }, 300_000);
});
