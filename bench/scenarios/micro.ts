import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type { FlashgateRedis } from "@flashgate/cache";
import { skuKeys } from "@flashgate/cache";
import { repoRoot } from "@flashgate/stack";
import { eventually } from "@flashgate/testkit";
import type { Pool } from "mysql2/promise";
import { runLoad } from "../lib/load.ts";
import { createSale, mintTokens, newSale, purchaseRequest } from "../lib/sale.ts";
import type { RunningSystem } from "../lib/systems.ts";
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

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;

/**
 * The fast path's ceilings, each as a ratio to the simplest thing the same machine can do. This
 * machine is shared and noisy, so each pair runs `rounds` times back to back (HTTP: in alternating
 * order), after a warm-up pass, and the median of the per-round ratios is reported, with every
 * round's numbers beside it.
 */
export async function microScenario(
  systems: Systems,
  pool: Pool,
  redis: FlashgateRedis,
  redisUrl: string,
  secret: string,
  requests: number,
  rounds = 5,
) {
  const sale = newSale();
  await createSale(pool, sale, 0);
  const keys = skuKeys(sale.activityId, sale.skuId);
  await eventually(
    async () => {
      if ((await redis.hget(keys.sku, "available")) !== "0") throw new Error("sale not applied yet");
    },
    { timeoutMs: 30_000 },
  );
  const lua = readFileSync(`${repoRoot}/packages/cache/src/lua/reserve.lua`, "utf8");
  const sha = (await redis.script("LOAD", lua)) as string;
  const url = new URL(redisUrl);
  const scriptCall = [
    "EVALSHA",
    sha,
    "5",
    keys.sku,
    keys.reservations,
    keys.reservationRequests,
    `${keys.ratePrefix}1`,
    "1",
    "bench-key",
    String(Date.now()),
    "15000",
    "1000000000000",
    "3600000",
  ];
  // The storm's population: 20,000 users, each retrying, so tokens repeat as they do in a sale.
  const tokens = mintTokens(secret, 20_000, 40_000_000);
  const request = (prefix: string) => (i: number) =>
    purchaseRequest(sale, tokens[i % tokens.length], `${prefix}-${sale.activityId}-${i}`);
  // A warm-up pass each (JIT, connection pools, the verified-token cache), as in the middle of a sale.
  await runLoad(systems.hello.url, tokens.length, 100, request("warm-hello"));
  await runLoad(systems.flashgate.url, tokens.length, 100, request("warm-micro"));
  const redisRounds = [];
  const httpRounds = [];
  for (let round = 0; round < rounds; round++) {
    const ping = redisBenchmark(url, requests * 4, ["PING"]);
    const script = redisBenchmark(url, requests * 4, scriptCall);
    redisRounds.push({ pingPerSecond: ping, reserveScriptPerSecond: script, ratio: ratio(script, ping) });
    // The same request (headers and body) to both servers: hello simply ignores it. Who goes first
    // alternates, so a drift in the machine's speed does not always favour the same one.
    // Beside the rates, each server's own CPU per request (from /proc): what a request costs it.
    const measured = async (system: RunningSystem, prefix: string) => {
      const cpuBefore = system.cpuMs();
      const load = await runLoad(system.url, requests, 100, request(`${prefix}-${round}`));
      return { load, cpuUsPerRequest: ((system.cpuMs() - cpuBefore) * 1000) / requests };
    };
    let hello: Awaited<ReturnType<typeof measured>>;
    let soldOut: Awaited<ReturnType<typeof measured>>;
    if (round % 2 === 0) {
      hello = await measured(systems.hello, "hello");
      soldOut = await measured(systems.flashgate, "micro");
    } else {
      soldOut = await measured(systems.flashgate, "micro");
      hello = await measured(systems.hello, "hello");
    }
    httpRounds.push({
      helloPerSecond: Math.round(hello.load.perSecond),
      soldOutRejectionsPerSecond: Math.round(soldOut.load.perSecond),
      soldOutShare: ratio(soldOut.load.latencies["409 SOLD_OUT"]?.length ?? 0, requests),
      ratio: ratio(soldOut.load.perSecond, hello.load.perSecond),
      helloCpuUsPerRequest: Math.round(hello.cpuUsPerRequest),
      soldOutCpuUsPerRequest: Math.round(soldOut.cpuUsPerRequest),
      costRatio: ratio(hello.cpuUsPerRequest, soldOut.cpuUsPerRequest),
    });
    process.stderr.write(
      `  micro round ${round + 1}/${rounds}: lua/PING ${redisRounds[round].ratio}, sold-out/hello ${httpRounds[round].ratio} (CPU cost ratio ${httpRounds[round].costRatio})\n`,
    );
  }
  return {
    rounds,
    redis: { ratio: median(redisRounds.map((r) => r.ratio)), rounds: redisRounds },
    http: {
      ratio: median(httpRounds.map((r) => r.ratio)),
      costRatio: median(httpRounds.map((r) => r.costRatio)),
      rounds: httpRounds,
    },
  };
}
