import { type FlashgateRedis, skuKeys } from "@flashgate/cache";
import { compareSku } from "@flashgate/sync";
import { eventually } from "@flashgate/testkit";
import type { Pool, RowDataPacket } from "mysql2/promise";
import { machineBusyMs } from "../lib/env.ts";
import { type LoadResult, latencySummary, percentile, runLoad } from "../lib/load.ts";
import { createCatalogue, mintTokens, newSale, purchaseRequest } from "../lib/sale.ts";
import { defineScenario, type Stored } from "../lib/scenario.ts";
import type { RunningSystem, Systems } from "../lib/systems.ts";
import { latencyCell, median, perSystem, roundRatios, roundsOf, seconds, spread } from "../lib/tables.ts";
import { lagBetween, scrape } from "./lag.ts";
import { cachedSale, designRounds } from "./open-sale.ts";
import { transactionsOf } from "./storm.ts";

export interface CatalogueProfile {
  skus: number;
  unitsPerSku: number;
  requests: number;
  users: number;
  connections: number;
  /** Zipf exponent of the demand over SKUs: SKU k (from 1) is asked for in proportion to 1 / k^s. */
  zipf: number;
}

/** A seeded generator (mulberry32): every design gets the same sequence of buyers and SKUs. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** The SKU (1…n) and the buyer (0…users − 1) of every request. */
export function demand(profile: Pick<CatalogueProfile, "skus" | "zipf" | "requests" | "users">) {
  const cumulative: number[] = [];
  let total = 0;
  for (let k = 1; k <= profile.skus; k++) {
    total += 1 / k ** profile.zipf;
    cumulative.push(total);
  }
  const next = random(21);
  const skuOf = new Uint16Array(profile.requests);
  const userOf = new Uint32Array(profile.requests);
  for (let i = 0; i < profile.requests; i++) {
    const target = next() * total;
    let [low, high] = [0, cumulative.length - 1];
    while (low < high) {
      const middle = (low + high) >> 1;
      if (cumulative[middle] < target) low = middle + 1;
      else high = middle;
    }
    skuOf[i] = low + 1;
    userOf[i] = Math.floor(next() * profile.users);
  }
  return { skuOf, userOf };
}

/** Whether every SKU of the catalogue is in flashgate's cache as MySQL has it, within `timeoutMs`. */
export async function allCached(
  pool: Pool,
  redis: FlashgateRedis,
  activityId: number,
  skus: number,
  timeoutMs: number,
) {
  let waiting = Array.from({ length: skus }, (_, i) => i + 1);
  return eventually(
    async () => {
      const still = [];
      for (const skuId of waiting)
        if (!(await compareSku(pool, redis, activityId, skuId)).equal) still.push(skuId);
      waiting = still;
      if (waiting.length) throw new Error(`${waiting.length} SKUs not in the cache as in MySQL`);
    },
    { timeoutMs, intervalMs: 200 },
  ).then(
    () => true,
    () => false,
  );
}

/** Bytes Redis holds for these SKUs' keys (MEMORY USAGE, exact: SAMPLES 0). */
async function skuMemory(redis: FlashgateRedis, activityId: number, skus: number) {
  const pipeline = redis.pipeline();
  for (let skuId = 1; skuId <= skus; skuId++) {
    const keys = skuKeys(activityId, skuId);
    for (const key of [keys.sku, keys.reservations, keys.reservationRequests])
      pipeline.call("MEMORY", "USAGE", key, "SAMPLES", "0");
  }
  return ((await pipeline.exec()) ?? []).reduce((sum, [, bytes]) => sum + Number(bytes ?? 0), 0);
}

/** The catalogue made ready the way each design does it: CDC for flashgate, a copy for Redis-as-truth. */
export async function openCatalogue(system: RunningSystem, redis: FlashgateRedis, profile: CatalogueProfile) {
  const { pool } = system;
  const { activityId } = newSale();
  await createCatalogue(pool, activityId, profile.skus, profile.unitsPerSku);
  if (system.design === "flashgate" && !(await allCached(pool, redis, activityId, profile.skus, 120_000)))
    throw new Error("the catalogue never reached the cache");
  if (system.design === "redis-as-truth")
    for (const url of system.urls)
      for (let skuId = 1; skuId <= profile.skus; skuId++)
        await fetch(`${url}/admin/load/${activityId}/${skuId}`, { method: "POST" });
  return activityId;
}

/**
 * A catalogue sale: 1,000 SKUs of 100 units, demand Zipf-distributed over them, 200,000 requests from
 * 100,000 users, on each design; flashgate's single-SKU storm with as many requests first, as the
 * reference its throughput is held to. Per SKU: when it sold out, and whether it was left with units
 * while buyers of it were refused.
 */
async function catalogue(
  systems: Systems,
  redis: FlashgateRedis,
  secret: string,
  profile: CatalogueProfile & { rounds: number },
) {
  const tokens = mintTokens(secret, profile.users, 50_000_000);
  const { skuOf, userOf } = demand(profile);

  const stormSale = await cachedSale(systems.flashgate.pool, redis, 1000);
  process.stderr.write(`  catalogue: flashgate's single-SKU storm, ${profile.requests} requests…\n`);
  const stormCpuBefore = machineBusyMs();
  const storm = await runLoad(systems.flashgate.urls, profile.requests, profile.connections, (i) =>
    purchaseRequest(stormSale, tokens[userOf[i]], `one-${stormSale.activityId}-${i}`),
  );

  const stormCpuMs = machineBusyMs() - stormCpuBefore;
  // A one-SKU sale with a tenth of the catalogue's requests first, units for a quarter of them.
  const warmUpSize = {
    units: profile.requests / 40,
    requests: profile.requests / 10,
    connections: profile.connections,
  };
  const results: (Awaited<ReturnType<typeof sellCatalogue>> & { round?: number; place?: number })[] = [];
  const run = { systems, redis, profile, tokens, skuOf, userOf };
  for await (const turn of designRounds(systems, redis, secret, warmUpSize, profile.rounds))
    results.push({ round: turn.round, place: turn.place, ...(await sellCatalogue(run, turn.system)) });
  // One account sending a key it used on one SKU to the others, as fast as the rate limit lets it.
  const [looper] = mintTokens(secret, 1, 90_000_000);
  results.push(await sellCatalogue(run, systems.flashgate, looper));
  return {
    profile,
    singleSkuStorm: {
      requestsPerSecond: Math.round(storm.perSecond),
      created: storm.latencies["201"]?.length ?? 0,
      machineCpuMsPerRequest: Math.round((stormCpuMs / profile.requests) * 1000) / 1000,
      latencyMs: latencySummary(storm.latencies),
    },
    results,
  };
}

interface CatalogueRun {
  systems: Systems;
  redis: FlashgateRedis;
  profile: CatalogueProfile;
  tokens: string[];
  skuOf: Uint16Array;
  userOf: Uint32Array;
}

const comCommits = async (pool: Pool) => {
  const [rows] = await pool.query<RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Com_commit'");
  return Number(rows[0].Value);
};

const answerCounts = (load: LoadResult) =>
  Object.fromEntries(Object.entries(load.latencies).map(([label, latencies]) => [label, latencies.length]));

/**
 * The catalogue sold once on one design; with `looper` (a user's token), that user meanwhile buys on
 * SKU 1 and then sends the same key to every other SKU in turn, on two connections, until the sale's
 * load is done: each such request reaches MySQL, which must turn it away without costing its batch.
 */
async function sellCatalogue(run: CatalogueRun, system: RunningSystem, looper?: string) {
  const { systems, redis, profile, tokens, skuOf, userOf } = run;
  const { pool } = system;
  const activityId = await openCatalogue(system, redis, profile);
  const memoryLoaded = system === systems.flashgate ? await skuMemory(redis, activityId, profile.skus) : 0;
  const maintainerBefore = await scrape(systems.flashgate.maintainerUrls);
  const transactionsBefore = await transactionsOf(systems, system);
  const commitsBefore = await comCommits(pool);
  const cpuBefore = machineBusyMs();
  const lastCreatedMs = new Float64Array(profile.skus + 1);
  const refused = new Uint32Array(profile.skus + 1);
  process.stderr.write(
    `  catalogue: ${system.name}, ${profile.requests} requests over ${profile.skus} SKUs…\n`,
  );
  let loadDone = false;
  const loopKey = `loop-${activityId}`;
  const looping =
    looper &&
    runLoad(system.urls, 1, 1, () => purchaseRequest({ activityId, skuId: 1 }, looper, loopKey)).then(() =>
      runLoad(
        system.urls,
        Number.MAX_SAFE_INTEGER,
        2,
        (i) => purchaseRequest({ activityId, skuId: 2 + (i % (profile.skus - 1)) }, looper, loopKey),
        { stop: () => loadDone },
      ),
    );
  const load = await runLoad(
    system.urls,
    profile.requests,
    profile.connections,
    (i) => purchaseRequest({ activityId, skuId: skuOf[i] }, tokens[userOf[i]], `cat-${activityId}-${i}`),
    {
      onAnswer: (i, label, atMs) => {
        if (label === "201") lastCreatedMs[skuOf[i]] = atMs;
        else if (label === "409 SOLD_OUT") refused[skuOf[i]] += 1;
      },
    },
  );
  loadDone = true;
  const looped = looping && (await looping);
  const cpuMs = machineBusyMs() - cpuBefore;
  const commits = (await comCommits(pool)) - commitsBefore;
  // MySQL holds every order answered (Redis-as-truth's writer persists after), and flashgate's cache
  // has applied them, before anything is judged.
  const created = load.latencies["201"]?.length ?? 0;
  const orders = async () => {
    const [rows] = await pool.query<RowDataPacket[]>(
      "SELECT COUNT(*) AS n FROM sale_order WHERE activity_id = ? AND state IN ('PENDING', 'PAID')",
      [activityId],
    );
    return Number(rows[0].n);
  };
  await eventually(
    async () => {
      if ((await orders()) < created) throw new Error("orders still being written");
    },
    { timeoutMs: 180_000, intervalMs: 200 },
  ).catch(() => {});
  const converged =
    system !== systems.flashgate || (await allCached(pool, redis, activityId, profile.skus, 180_000));
  const cdc =
    system === systems.flashgate
      ? lagBetween(maintainerBefore, await scrape(systems.flashgate.maintainerUrls))
      : null;
  const [stock] = await pool.query<RowDataPacket[]>(
    "SELECT sku_id, available FROM sale_stock WHERE activity_id = ?",
    [activityId],
  );
  const soldOut = stock.filter((row) => Number(row.available) === 0).map((row) => Number(row.sku_id));
  // Units left on a SKU whose buyers were told SOLD_OUT: demand the design turned away from stock it had.
  const leftWhileRefused = stock.filter(
    (row) => Number(row.available) > 0 && refused[Number(row.sku_id)] > 0,
  );
  const sellOut = soldOut.map((sku) => lastCreatedMs[sku]).sort((a, b) => a - b);
  const sold = await orders();
  const transactions = (await transactionsOf(systems, system)) - transactionsBefore;
  const memoryAfter = system === systems.flashgate ? await skuMemory(redis, activityId, profile.skus) : 0;
  return {
    system: looper ? `${system.name}, one user looping a reused key` : system.name,
    design: system.design,
    requests: load.requests,
    requestsPerSecond: Math.round(load.perSecond),
    errors: load.errors,
    created,
    unitsSold: sold,
    databaseTransactions: transactions,
    databaseCommits: commits,
    transactionsPerUnitSold: sold ? Math.round((transactions / sold) * 1000) / 1000 : null,
    machineCpuMsPerRequest: Math.round((cpuMs / load.requests) * 1000) / 1000,
    latencyMs: latencySummary(load.latencies),
    skusSoldOut: soldOut.length,
    sellOutMs: {
      p50: sellOut.length ? Math.round(percentile(sellOut, 50)) : null,
      p90: sellOut.length ? Math.round(percentile(sellOut, 90)) : null,
      max: sellOut.length ? Math.round(sellOut[sellOut.length - 1]) : null,
    },
    skusLeftWithUnitsWhileRefused: leftWhileRefused.length,
    unitsLeftWhileRefused: leftWhileRefused.reduce((sum, row) => sum + Number(row.available), 0),
    cacheConverged: system === systems.flashgate ? converged : null,
    cdc,
    memory:
      system === systems.flashgate
        ? {
            bytesPerSku: Math.round(memoryLoaded / profile.skus),
            bytesPerBuyer: sold ? Math.round((memoryAfter - memoryLoaded) / sold) : null,
          }
        : null,
    looper: looped ? { requests: looped.requests, answers: answerCounts(looped) } : null,
  };
}

export const catalogueScenario = defineScenario({
  name: "catalogue",
  title: "catalogue",
  profile: ({ quick, rounds }) => ({
    ...(quick
      ? { skus: 100, unitsPerSku: 30, requests: 6_000, users: 3_000 }
      : { skus: 1000, unitsPerSku: 100, requests: 100_000, users: 50_000 }),
    connections: 100,
    zipf: 1.1,
    rounds,
  }),
  section: catalogueSection,
  run: (b, profile: CatalogueProfile & { rounds: number }) =>
    catalogue(b.systems, b.redis, b.env.AUTH_JWT_SECRET, profile),
});

type CatalogueResult = Stored<Awaited<ReturnType<typeof catalogue>>>;

/** 1,000 SKUs, Zipf demand, on each design, beside flashgate's single-SKU storm of as many requests. */
function catalogueSection(catalogue: CatalogueResult): string[] {
  const { profile, singleSkuStorm: storm } = catalogue;
  const lines = [
    "## Catalogue (closed loop)",
    "",
    `${profile.skus} SKUs × ${profile.unitsPerSku} units of one activity; ${profile.requests} requests from ${profile.users} users, SKUs drawn Zipf (s = ${profile.zipf}) with one seed for every design, over ${profile.connections} connections, 2 server processes per design, ${roundsOf(profile.rounds)} in rotating order, after an uncounted warm-up sale per design. Left while refused: SKUs that ended with units after buyers of theirs were told SOLD_OUT. Machine CPU: every process's busy time over the load, per request.`,
    "",
    "| round | system | req/s | orders | SKUs sold out | sold out after s (p50 / p90 / max) | left while refused (SKUs, units) | 201 p50 / p99 ms | SOLD_OUT p50 / p99 ms | DB tx / unit | MySQL commits | machine CPU ms / request | CDC lag p50 / p99 ms |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of catalogue.results)
    lines.push(
      `| ${r.round ?? "–"} | ${r.system} | ${r.requestsPerSecond} | ${r.unitsSold} | ${r.skusSoldOut} | ${seconds(r.sellOutMs.p50)} / ${seconds(r.sellOutMs.p90)} / ${seconds(r.sellOutMs.max)} | ${r.skusLeftWithUnitsWhileRefused}, ${r.unitsLeftWhileRefused} | ${latencyCell(r.latencyMs["201"])} | ${latencyCell(r.latencyMs["409 SOLD_OUT"])} | ${r.transactionsPerUnitSold ?? "–"} | ${r.databaseCommits ?? "–"} | ${r.machineCpuMsPerRequest} | ${r.cdc ? `${r.cdc.lagP50Ms} / ${r.cdc.lagP99Ms}` : "–"} |`,
    );
  lines.push(
    `| – | flashgate, one SKU of 1000 units (reference) | ${storm.requestsPerSecond} | ${storm.created} | 1 | – | – | ${latencyCell(storm.latencyMs["201"])} | ${latencyCell(storm.latencyMs["409 SOLD_OUT"])} | – | – | ${storm.machineCpuMsPerRequest} | – |`,
  );
  const sale = catalogue.results.filter((r) => !r.looper);
  const rate = (r: CatalogueResult["results"][number]) => r.requestsPerSecond;
  const fg = sale.filter((r) => r.system === "flashgate");
  lines.push(
    "",
    `Requests/s, median (min–max) of the rounds: ${perSystem(sale, rate)}. flashgate over the strongest Redis-as-truth: **${spread(roundRatios(sale, "redis-as-truth", rate), 2)}×**; over the strongest MySQL-only: **${spread(roundRatios(sale, "mysql-only", rate), 2)}×**; over its own single-SKU storm: ${(median(fg.map(rate)) / storm.requestsPerSecond).toFixed(2)}×, machine CPU per request ${(median(fg.map((r) => r.machineCpuMsPerRequest)) / storm.machineCpuMsPerRequest).toFixed(1)}× the storm's; CDC lag p99 ${spread(fg.map((r) => r.cdc?.lagP99Ms ?? Number.NaN))} ms; Redis per SKU ${fg[0]?.memory?.bytesPerSku ?? "–"} bytes, per buyer ${fg[0]?.memory?.bytesPerBuyer ?? "–"} bytes (the SKU hash's listpack encoding, up to 128 fields).`,
  );
  const looping = catalogue.results.find((r) => r.looper);
  const looper = looping?.looper;
  const alone = fg.at(-1);
  if (alone && looping && looper)
    lines.push(
      "",
      `One user sending the key it bought SKU 1 with to every other SKU meanwhile (two connections, ${looper.requests} requests: ${Object.entries(
        looper.answers,
      )
        .map(([label, n]) => `${n} × ${label}`)
        .join(
          ", ",
        )}): MySQL commits **${(looping.databaseCommits / alone.databaseCommits).toFixed(2)}×** the last round's sale without them, 201 p99 **${(looping.latencyMs["201"].p99 / alone.latencyMs["201"].p99).toFixed(2)}×**.`,
    );
  lines.push("");
  return lines;
}
