import { execFileSync } from "node:child_process";
import type { FlashgateRedis } from "@flashgate/cache";
import { reserveArguments, reserveKeyCount, scriptSource, skuKeys } from "@flashgate/cache";
import { eventually } from "@flashgate/testkit";
import type { Pool } from "mysql2/promise";
import { type LoadRequest, runLoad } from "../lib/load.ts";
import { createSale, mintTokens, newSale, purchaseRequest } from "../lib/sale.ts";
import { defineScenario, type Stored } from "../lib/scenario.ts";
import type { RunningServer, Systems } from "../lib/systems.ts";

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

/** Redis's CPU seconds so far and, per command, calls and microseconds spent in it (INFO). */
async function redisCounters(redis: FlashgateRedis) {
  const info = `${await redis.info("cpu")}\n${await redis.info("commandstats")}`;
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, "m").exec(info)?.[1] ?? 0);
  const calls: Record<string, number> = {};
  const usec: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_(\w+):calls=(\d+),usec=(\d+)/gm)) {
    calls[match[1]] = Number(match[2]);
    usec[match[1]] = Number(match[3]);
  }
  return { cpuS: field("used_cpu_sys") + field("used_cpu_user"), calls, usec };
}

const round1 = (n: number) => Math.round(n * 10) / 10;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;

/**
 * The fast path's ceilings, each as a ratio to the simplest thing the same machine can do. This
 * machine is shared and noisy, so each pair runs `rounds` times back to back (HTTP: in alternating
 * order), after a warm-up pass, and the median of the per-round ratios is reported, with every
 * round's numbers beside it.
 */
async function microScenario(
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
  const sha = (await redis.script("LOAD", scriptSource("fgReserve"))) as string;
  const url = new URL(redisUrl);
  // Exactly what the API sends for a buyer of this sold-out SKU (no rate limit in the way).
  const scriptArguments = reserveArguments(
    { activityId: sale.activityId, skuId: sale.skuId, userId: "1", requestId: "bench-key" },
    { reservationTtlMs: 15_000, rateLimit: 1e12, rateWindowMs: 3_600_000 },
  ).map(String);
  const answer = await redis.evalsha(sha, reserveKeyCount, ...scriptArguments);
  if (answer !== "SOLD_OUT")
    throw new Error(`reserve.lua answered ${answer}: the micro would time another path`);
  const scriptCall = ["EVALSHA", sha, String(reserveKeyCount), ...scriptArguments];
  // The floor of any script called with these arguments: one that only returns the answer.
  const emptySha = (await redis.script("LOAD", "return 'SOLD_OUT'")) as string;
  const emptyScriptCall = ["EVALSHA", emptySha, String(reserveKeyCount), ...scriptArguments];
  // Beside the rates, what each operation costs Redis (INFO): its CPU per operation, and of that the
  // time in the command itself, so the script's own cost is seen apart from the machine's I/O cost.
  const redisCost = async (command: string[]) => {
    const before = await redisCounters(redis);
    const perSecond = redisBenchmark(url, requests * 4, command);
    const after = await redisCounters(redis);
    const name = command[0].toLowerCase();
    const calls = (after.calls[name] ?? 0) - (before.calls[name] ?? 0);
    return {
      perSecond,
      cpuUsPerOp: round1(((after.cpuS - before.cpuS) * 1e6) / calls),
      execUsPerCall: round1(((after.usec[name] ?? 0) - (before.usec[name] ?? 0)) / calls),
    };
  };
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
    const ping = await redisCost(["PING"]);
    const script = await redisCost(scriptCall);
    const empty = await redisCost(emptyScriptCall);
    redisRounds.push({
      emptyScriptPerSecond: empty.perSecond,
      emptyScriptRatio: ratio(empty.perSecond, ping.perSecond),
      emptyScriptExecUs: empty.execUsPerCall,
      pingPerSecond: ping.perSecond,
      reserveScriptPerSecond: script.perSecond,
      ratio: ratio(script.perSecond, ping.perSecond),
      pingCpuUsPerOp: ping.cpuUsPerOp,
      scriptCpuUsPerOp: script.cpuUsPerOp,
      costRatio: ratio(ping.cpuUsPerOp, script.cpuUsPerOp),
      pingExecUs: ping.execUsPerCall,
      scriptExecUs: script.execUsPerCall,
    });
    // The same request (headers and body) to both servers: hello simply ignores it. Who goes first
    // alternates, so a drift in the machine's speed does not always favour the same one.
    // Beside the rates, each server's own CPU per request (from /proc): what a request costs it.
    const measured = async (system: RunningServer, next: (i: number) => LoadRequest) => {
      const cpuBefore = system.cpuMs();
      const load = await runLoad(system.url, requests, 100, next);
      return { load, cpuUsPerRequest: ((system.cpuMs() - cpuBefore) * 1000) / requests };
    };
    let hello: Awaited<ReturnType<typeof measured>>;
    let soldOut: Awaited<ReturnType<typeof measured>>;
    if (round % 2 === 0) {
      hello = await measured(systems.hello, request(`hello-${round}`));
      soldOut = await measured(systems.flashgate, request(`micro-${round}`));
    } else {
      soldOut = await measured(systems.flashgate, request(`micro-${round}`));
      hello = await measured(systems.hello, request(`hello-${round}`));
    }
    // The public view, three ways: read from Redis and answered in full; revalidated (the client holds
    // the current ETag: 304, no body); an id no sale has (the sale directory's 404).
    const viewPath = `/v1/activities/${sale.activityId}/skus/${sale.skuId}`;
    const viewed = async (next: (i: number) => LoadRequest) => {
      const { load, cpuUsPerRequest } = await measured(systems.flashgate, next);
      return {
        perSecond: Math.round(load.perSecond),
        ratio: ratio(load.perSecond, hello.load.perSecond),
        cpuUsPerRequest: Math.round(cpuUsPerRequest),
        statuses: Object.fromEntries(
          Object.entries(load.latencies).map(([status, all]) => [status, all.length]),
        ),
      };
    };
    const etag = (await fetch(`${systems.flashgate.url}${viewPath}`)).headers.get("etag") ?? "";
    const views = {
      view: await viewed(() => ({ method: "GET", path: viewPath })),
      revalidated: await viewed(() => ({
        method: "GET",
        path: viewPath,
        headers: { "if-none-match": etag },
      })),
      unknownView: await viewed((i) => ({
        method: "GET",
        path: `/v1/activities/${900_000_000 + i}/skus/${i + 1}`,
      })),
    };
    httpRounds.push({
      ...views,
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
    redis: {
      ratio: median(redisRounds.map((r) => r.ratio)),
      costRatio: median(redisRounds.map((r) => r.costRatio)),
      emptyScriptRatio: median(redisRounds.map((r) => r.emptyScriptRatio)),
      rounds: redisRounds,
    },
    http: {
      ratio: median(httpRounds.map((r) => r.ratio)),
      viewRatio: median(httpRounds.map((r) => r.view.ratio)),
      revalidatedRatio: median(httpRounds.map((r) => r.revalidated.ratio)),
      unknownViewRatio: median(httpRounds.map((r) => r.unknownView.ratio)),
      costRatio: median(httpRounds.map((r) => r.costRatio)),
      rounds: httpRounds,
    },
  };
}

export const microCeilingsScenario = defineScenario({
  name: "micro",
  title: "micro ceilings",
  profile: ({ quick }) => ({ requests: quick ? 3_000 : 60_000 }),
  section: microSection,
  goals: (micro) => [
    {
      what: "sold-out path over HTTP ÷ bare node:http",
      values: (micro?.http.rounds ?? []).map((r) => r.ratio),
      target: 0.85,
    },
  ],
  run: (b, { requests }: { requests: number }) =>
    microScenario(
      b.systems,
      b.systems.flashgate.pool,
      b.redis,
      b.env.REDIS_URL,
      b.env.AUTH_JWT_SECRET,
      requests,
    ),
});

/** The micro ceilings: the Lua call against PING, the HTTP rejection against hello. */
type HttpRound = Awaited<ReturnType<typeof microScenario>>["http"]["rounds"][number];

function microSection(micro: Stored<Awaited<ReturnType<typeof microScenario>>>): string[] {
  const lines = [
    "## Micro ceilings",
    "",
    `${micro.rounds} back-to-back rounds per pair (the HTTP pair in alternating order), after a warm-up; the ratio is the median of the rounds' ratios.`,
    "",
    "| what | ops/s per round | baseline | baseline ops/s per round | ratio per round | median ratio | goal |",
    "|---|---|---|---|---|---|---|",
  ];
  const perRound = <T>(rows: T[], field: keyof T) => rows.map((r) => r[field]).join(" / ");
  // The public view three ways, each a row of its own per round.
  type View = "view" | "revalidated" | "unknownView";
  const ofView = (key: View, field: keyof HttpRound[View]) =>
    perRound(
      micro.http.rounds.map((r) => r[key]),
      field,
    );
  const views: { key: View; what: string; cpu: string; median: number }[] = [
    {
      key: "view",
      what: "the public SKU view (200, from Redis)",
      cpu: "in full",
      median: micro.http.viewRatio,
    },
    {
      key: "revalidated",
      what: "the view revalidated (If-None-Match: 304)",
      cpu: "revalidated",
      median: micro.http.revalidatedRatio,
    },
    {
      key: "unknownView",
      what: "a view of an id no sale has (the directory's 404)",
      cpu: "unknown id",
      median: micro.http.unknownViewRatio,
    },
  ];
  lines.push(
    `| reserve.lua (EVALSHA, sold-out path) | ${perRound(micro.redis.rounds, "reserveScriptPerSecond")} | redis-benchmark PING | ${perRound(micro.redis.rounds, "pingPerSecond")} | ${perRound(micro.redis.rounds, "ratio")} | **${micro.redis.ratio}** | ≥ 0.85 |`,
    `| the floor: a script that only returns, same arguments | ${perRound(micro.redis.rounds, "emptyScriptPerSecond")} | redis-benchmark PING | ${perRound(micro.redis.rounds, "pingPerSecond")} | ${perRound(micro.redis.rounds, "emptyScriptRatio")} | **${micro.redis.emptyScriptRatio}** | (reference) |`,
    `| sold-out rejections over HTTP | ${perRound(micro.http.rounds, "soldOutRejectionsPerSecond")} | bare node:http hello | ${perRound(micro.http.rounds, "helloPerSecond")} | ${perRound(micro.http.rounds, "ratio")} | **${micro.http.ratio}** | ≥ 0.85 |`,
    ...(micro.http.viewRatio === undefined
      ? []
      : views.map(
          ({ what, key, median }) =>
            `| ${what} | ${ofView(key, "perSecond")} | bare node:http hello | ${perRound(micro.http.rounds, "helloPerSecond")} | ${ofView(key, "ratio")} | **${median}** | (reference) |`,
        )),
    "",
  );
  lines.push(
    `Redis's own CPU per operation in the same rounds (INFO cpu): script ${perRound(micro.redis.rounds, "scriptCpuUsPerOp")} µs, PING ${perRound(micro.redis.rounds, "pingCpuUsPerOp")} µs; PING's cost over the script's, median **${micro.redis.costRatio}**. Of that, inside the command itself (INFO commandstats): script ${perRound(micro.redis.rounds, "scriptExecUs")} µs, the empty script ${perRound(micro.redis.rounds, "emptyScriptExecUs")} µs, PING ${perRound(micro.redis.rounds, "pingExecUs")} µs — the rest is reading and answering the request, the same for both.`,
    "",
  );
  lines.push(
    `Each server's own CPU per request in the same rounds (/proc, user + system): sold-out ${perRound(micro.http.rounds, "soldOutCpuUsPerRequest")} µs, hello ${perRound(micro.http.rounds, "helloCpuUsPerRequest")} µs; hello's cost over the sold-out path's, median **${micro.http.costRatio}** (contention on the two cores moves it as much as the rates).${
      micro.http.viewRatio === undefined
        ? ""
        : ` The views': ${views.map(({ cpu, key }) => `${cpu} ${ofView(key, "cpuUsPerRequest")} µs`).join(", ")}.`
    }`,
    "",
  );
  return lines;
}
