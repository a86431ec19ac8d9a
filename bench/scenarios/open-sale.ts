import type { FlashgateRedis } from "@flashgate/cache";
import { compareSku } from "@flashgate/sync";
import { eventually } from "@flashgate/testkit";
import type { Pool } from "mysql2/promise";
import { runLoad } from "../lib/load.ts";
import { createSale, mintTokens, newSale, purchaseRequest } from "../lib/sale.ts";
import type { Systems } from "../lib/systems.ts";

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

/** A fresh sale in MySQL, made ready the way each design does it: CDC for flashgate, a copy for Redis-as-truth. */
export async function openSale(
  systems: Systems,
  system: { urls: string[] },
  pool: Pool,
  redis: FlashgateRedis,
  units: number,
) {
  if (system === systems.flashgate) return cachedSale(pool, redis, units);
  const sale = newSale();
  await createSale(pool, sale, units);
  // Every process's writer watches the sale's queue.
  if (system === systems.redisTruth)
    for (const url of system.urls)
      await fetch(`${url}/admin/load/${sale.activityId}/${sale.skuId}`, { method: "POST" });
  return sale;
}

/**
 * A small sale first (not counted) warms a design and the stack behind it (JIT, pools, the CDC path),
 * as a system in service is warm when a sale opens; its buyers are its own.
 */
async function warmUp(
  systems: Systems,
  system: { urls: string[] },
  pool: Pool,
  redis: FlashgateRedis,
  secret: string,
  size: { units: number; requests: number; connections: number },
) {
  // Users of their own (each comes twice): the measured sale still meets every one of its users first.
  const tokens = mintTokens(secret, Math.ceil(size.requests / 2), 30_000_000);
  const sale = await openSale(systems, system, pool, redis, size.units);
  await runLoad(system.urls, size.requests, size.connections, (i) =>
    purchaseRequest(sale, tokens[i % tokens.length], `warm-${sale.activityId}-${i}`),
  );
}

/** Each design in turn, flashgate first, once it has served its warm-up sale. */
export async function* warmedDesigns(
  systems: Systems,
  pool: Pool,
  redis: FlashgateRedis,
  secret: string,
  size: { units: number; requests: number; connections: number },
) {
  for (const system of [systems.flashgate, systems.redisTruth, systems.mysqlOnly]) {
    await warmUp(systems, system, pool, redis, secret, size);
    yield system;
  }
}
