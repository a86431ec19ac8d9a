import type { FlashgateRedis } from "@flashgate/cache";
import { compareSku } from "@flashgate/sync";
import { eventually } from "@flashgate/testkit";
import type { Pool } from "mysql2/promise";
import { machineSettled } from "../lib/env.ts";
import { runLoad } from "../lib/load.ts";
import { createSale, mintTokens, newSale, purchaseRequest, retireSales } from "../lib/sale.ts";
import type { RunningSystem, Systems } from "../lib/systems.ts";

/** A fresh sale in MySQL, once flashgate's cache holds it (through CDC). */
export async function cachedSale(pool: Pool, redis: FlashgateRedis, units: number) {
  const sale = newSale();
  await createSale(pool, sale, units);
  await eventually(
    async () => {
      if (!(await compareSku(pool, redis, sale.activityId, sale.skuId)).equal)
        throw new Error("not loaded yet");
    },
    { timeoutMs: 30_000 },
  );
  return sale;
}

/**
 * A fresh sale in the design's database, made ready the way each design does it: CDC for flashgate, a
 * copy for Redis-as-truth.
 */
export async function openSale(system: RunningSystem, redis: FlashgateRedis, units: number) {
  if (system.design === "flashgate") return cachedSale(system.pool, redis, units);
  const sale = newSale();
  await createSale(system.pool, sale, units);
  // Every process's writer watches the sale's queue.
  if (system.design === "redis-as-truth")
    for (const url of system.urls)
      await fetch(`${url}/admin/load/${sale.activityId}/${sale.skuId}`, { method: "POST" });
  return sale;
}

/**
 * A small sale first (not counted) warms a design and the stack behind it (JIT, pools, the CDC path),
 * as a system in service is warm when a sale opens; its buyers are its own.
 */
async function warmUp(
  system: RunningSystem,
  redis: FlashgateRedis,
  secret: string,
  size: { units: number; requests: number; connections: number },
) {
  // Users of their own (each comes twice): the measured sale still meets every one of its users first.
  const tokens = mintTokens(secret, Math.ceil(size.requests / 2), 30_000_000);
  const sale = await openSale(system, redis, size.units);
  await runLoad(system.urls, size.requests, size.connections, (i) =>
    purchaseRequest(sale, tokens[i % tokens.length], `warm-${sale.activityId}-${i}`),
  );
}

/** A design's turn in a round: round `round` (from 1), and where the design came in it (from 1). */
export interface Turn {
  round: number;
  place: number;
  system: RunningSystem;
}

/**
 * Every design in each of `rounds` rounds, the order rotated by one place each round, so that no design
 * is always the first (the freshest machine) or the last; each serves its warm-up sale before its first
 * turn, and every turn starts with the earlier sales retired, once the machine has settled.
 */
export async function* designRounds(
  systems: Systems,
  redis: FlashgateRedis,
  secret: string,
  size: { units: number; requests: number; connections: number },
  rounds: number,
  designs: RunningSystem[] = systems.designs,
): AsyncGenerator<Turn> {
  const warm = new Set<RunningSystem>();
  for (let round = 1; round <= rounds; round++)
    for (let place = 1; place <= designs.length; place++) {
      const system = designs[(place - 1 + round - 1) % designs.length];
      await retireSales(systems.flashgate.pool);
      await machineSettled();
      if (!warm.has(system)) {
        await warmUp(system, redis, secret, size);
        warm.add(system);
        await machineSettled();
      }
      yield { round, place, system };
    }
}
