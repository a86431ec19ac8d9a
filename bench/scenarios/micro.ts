import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type { FlashgateRedis } from "@flashgate/cache";
import { skuKeys } from "@flashgate/cache";
import { repoRoot } from "@flashgate/stack";
import type { Pool } from "mysql2/promise";
import { runLoad } from "../lib/load.ts";
import { createSale, mintTokens, newSale, purchaseRequest } from "../lib/sale.ts";
import type { Systems } from "../run.ts";

function redisBenchmark(url: URL, requests: number, command: string[]): number {
  const output = execFileSync(
    "redis-benchmark",
    [
      "-h",
      url.hostname,
      "-p",
      url.port,
      "-a",
      decodeURIComponent(url.password),
      "-n",
      String(requests),
      "-c",
      "50",
      "-P",
      "1",
      "-q",
      ...command,
    ],
    { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
  );
  const match = /([\d.]+) requests per second/.exec(output);
  if (!match) throw new Error(`redis-benchmark said: ${output}`);
  return Number(match[1]);
}

/** The fast path's ceilings, each as a ratio to the simplest thing the same machine can do. */
export async function microScenario(
  systems: Systems,
  pool: Pool,
  redis: FlashgateRedis,
  redisUrl: string,
  secret: string,
  requests: number,
) {
  const sale = newSale();
  await createSale(pool, sale, 0);
  await new Promise((r) => setTimeout(r, 2000));
  const keys = skuKeys(sale.activityId, sale.skuId);
  const lua = readFileSync(`${repoRoot}/packages/cache/src/lua/reserve.lua`, "utf8");
  const sha = (await redis.script("LOAD", lua)) as string;
  const url = new URL(redisUrl);
  const ping = redisBenchmark(url, requests * 4, ["PING"]);
  const script = redisBenchmark(url, requests * 4, [
    "EVALSHA",
    sha,
    "5",
    keys.sku,
    keys.buyers,
    keys.reservations,
    keys.reservationRequests,
    `${keys.ratePrefix}1`,
    "1",
    "bench-key",
    String(Date.now()),
    "15000",
    "1000000000000",
    "3600000",
  ]);

  const tokens = mintTokens(secret, 50_000, 40_000_000);
  // The same request (headers and body) to both servers: hello simply ignores it.
  const hello = await runLoad(systems.hello.url, requests, 100, (i) =>
    purchaseRequest(sale, tokens[i % tokens.length], `hello-${i}`),
  );
  const soldOut = await runLoad(systems.flashgate.url, requests, 100, (i) =>
    purchaseRequest(sale, tokens[i % tokens.length], `micro-${sale.activityId}-${i}`),
  );
  const rejected = soldOut.latencies["409 SOLD_OUT"]?.length ?? 0;
  return {
    redis: {
      pingPerSecond: ping,
      reserveScriptPerSecond: script,
      ratio: Math.round((script / ping) * 1000) / 1000,
    },
    http: {
      helloPerSecond: Math.round(hello.perSecond),
      soldOutRejectionsPerSecond: Math.round(soldOut.perSecond),
      soldOutShare: Math.round((rejected / requests) * 1000) / 1000,
      ratio: Math.round((soldOut.perSecond / hello.perSecond) * 1000) / 1000,
    },
  };
}
