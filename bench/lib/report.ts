import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "@flashgate/stack";
import { percentile } from "./load.ts";

const dir = join(repoRoot, "bench", "results");

// biome-ignore lint/suspicious/noExplicitAny: rows of our own result files, written a few lines away
type ResultRow = Record<string, any>;

/** This bench run: a run that goes on in a child process (the storm on MariaDB) hands it on. */
export const benchRun = process.env.FLASHGATE_BENCH_RUN ?? new Date().toISOString();

export function writeResult(scenario: string, data: object): string {
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replaceAll(":", "-").slice(0, 19);
  const file = join(dir, `${stamp}-${scenario}.json`);
  writeFileSync(file, `${JSON.stringify({ run: benchRun, ...data }, null, 2)}\n`);
  return file;
}

/** The newest result file of each scenario. */
type Results = Record<string, { file: string; data: Record<string, unknown> }>;

function latest(): Results {
  const found: Record<string, { file: string; data: Record<string, unknown> }> = {};
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    const scenario = file.slice(20, -5);
    found[scenario] = { file, data: JSON.parse(readFileSync(join(dir, file), "utf8")) };
  }
  return found;
}

function barChart(
  title: string,
  bars: { label: string; value: number; color: string }[],
  unit: string,
): string {
  const width = 560;
  const rowHeight = 28;
  const height = 40 + bars.length * rowHeight;
  const max = Math.max(1, ...bars.map((b) => b.value));
  const rows = bars
    .map((bar, i) => {
      const y = 30 + i * rowHeight;
      const w = Math.max(2, (bar.value / max) * (width - 230));
      return `<text x="10" y="${y + 17}" font-size="13">${bar.label}</text><rect x="150" y="${y + 4}" width="${w.toFixed(1)}" height="18" fill="${bar.color}"/><text x="${(155 + w).toFixed(1)}" y="${y + 17}" font-size="12">${bar.value.toLocaleString("en")} ${unit}</text>`;
    })
    .join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif"><title>${title}</title><text x="10" y="18" font-size="14" font-weight="bold">${title}</text>${rows}</svg>\n`;
}

const colors: Record<string, string> = {
  flashgate: "#2f81f7",
  "redis-as-truth": "#d29922",
  "mysql-only": "#8b949e",
};

type StormResult = {
  run?: string;
  profile: Record<string, number>;
  results: ResultRow[];
  facts?: Record<string, unknown>;
};

/** One storm's table and its ratio to the MySQL-only baseline of the same run. */
function stormTable(results: ResultRow[]): string[] {
  const lines: string[] = [];
  lines.push(
    "| system | req/s | units sold | DB tx / unit sold | p50 / p99 / p99.9 ms (all) | p50 / p99 / p99.9 ms (201) | p50 / p99 / p99.9 ms (409 SOLD_OUT) | 503s | final drift | errors |",
    "|---|---|---|---|---|---|---|---|---|---|",
  );
  for (const r of results) {
    const lat = (label: string) =>
      r.latencyMs[label]
        ? `${r.latencyMs[label].p50} / ${r.latencyMs[label].p99} / ${r.latencyMs[label].p999}`
        : "–";
    lines.push(
      `| ${r.system} | ${r.requestsPerSecond} | ${r.unitsSold}${r.soldExactly ? "" : " ✗"} | ${r.transactionsPerUnitSold ?? "–"} | ${lat("all")} | ${lat("201")} | ${lat("409 SOLD_OUT")} | ${r.latencyMs["503 UNAVAILABLE"]?.count ?? 0} | ${r.finalDrift ?? "n/a"} | ${r.errors} |`,
    );
  }
  const fg = results.find((r) => r.system === "flashgate");
  const my = results.find((r) => r.system === "mysql-only");
  if (fg && my)
    lines.push(
      "",
      `flashgate / MySQL-only throughput: **${(fg.requestsPerSecond / my.requestsPerSecond).toFixed(1)}×** (goal ≥ 10×); p99 over all answers: flashgate ${fg.latencyMs.all?.p99 ?? "–"} ms vs MySQL-only ${my.latencyMs.all?.p99 ?? "–"} ms (goal: equal or better).`,
    );
  return lines;
}

/** Rewrites bench/RESULTS.md (and its SVG charts) from the newest result of each scenario. */
export function writeResultsMarkdown(): void {
  const results = latest();
  const facts = (results.storm?.data.facts ?? results.micro?.data.facts ?? {}) as Record<string, unknown>;
  const lines = [
    "# Benchmark results",
    "",
    "Written by `npm run bench`; every system runs on the same machine in the same run, so compare ratios, not absolute numbers.",
    "",
  ];
  lines.push(
    "Machine: " +
      Object.entries(facts)
        .map(([k, v]) => `${k} ${v}`)
        .join("; "),
    "",
  );

  lines.push(
    ...stormSections(results),
    ...driftSection(results),
    ...lagSection(results),
    ...microSection(results),
    ...floodSection(results),
    ...topologySection(results),
    ...bigStockSection(results),
    ...catalogueSection(results),
    ...cdcSection(results),
    ...openLoopSection(results),
  );
  // What each change for sales at full size did, measured before and after it: written by hand.
  const changes = join(repoRoot, "bench", "changes.md");
  if (existsSync(changes)) lines.push(readFileSync(changes, "utf8").trimEnd());
  writeFileSync(join(repoRoot, "bench", "RESULTS.md"), `${lines.join("\n")}\n`);
}

/** The storm on MySQL and, beside it, on MariaDB; draws bench/storm.svg. */
function stormSections(results: Results): string[] {
  const lines: string[] = [];
  const storm = results.storm?.data as StormResult | undefined;
  if (storm) {
    lines.push(
      `## Storm (${results.storm.file})`,
      "",
      `${storm.profile.units} units, ${storm.profile.requests} requests from ${storm.profile.users} users, ${storm.profile.connections} connections${storm.profile.processesPerSystem ? ` spread over ${storm.profile.processesPerSystem} server processes per system (one per core, ADR 0008)` : ", one server process per system"}; each system first serves an uncounted warm-up sale a tenth that size (other users).`,
      "",
    );
    lines.push(...stormTable(storm.results));
    writeFileSync(
      join(repoRoot, "bench", "storm.svg"),
      barChart(
        "Storm throughput (req/s, higher is better)",
        storm.results.map((r) => ({
          label: r.system,
          value: r.requestsPerSecond,
          color: colors[r.system] ?? "#888",
        })),
        "req/s",
      ),
    );
    lines.push("", "![storm throughput](storm.svg)", "");
  }
  const mariadb = results["storm-mariadb"]?.data as StormResult | undefined;
  if (storm && mariadb) {
    const flashgate = (run: StormResult) =>
      run.results.find((r) => r.system === "flashgate")?.requestsPerSecond;
    const sameRun = storm.run !== undefined && storm.run === mariadb.run;
    lines.push(
      `### The same storm on MariaDB (${results["storm-mariadb"].file})`,
      "",
      `On ${mariadb.facts?.database ?? "MariaDB"}, with the same profile and durability.`,
      "",
      ...stormTable(mariadb.results),
      "",
      sameRun
        ? `flashgate on MySQL / on MariaDB throughput, both in run ${storm.run}: **${((flashgate(storm) ?? 0) / (flashgate(mariadb) ?? 1)).toFixed(2)}×**.`
        : "These figures come from another run than the MySQL storm's: no ratio is taken across runs (`npm run bench -- --only storm` runs both engines in one).",
      "",
    );
  }
  return lines;
}

/** Raw-SQL changes during a sale: how soon returned units sell. */
function driftSection(results: Results): string[] {
  const lines: string[] = [];
  const drift = results.drift?.data as { windowS: number; results: ResultRow[] } | undefined;
  if (drift) {
    lines.push(
      `## Drift (${results.drift.file})`,
      "",
      `During a sale: raw-SQL restock of 100, 50 orders closed in SQL, a price edit; window ${drift.windowS} s.`,
      "",
    );
    lines.push(
      "| system | returned units sold after (ms) | units sold / target | drift after window (available, price) |",
      "|---|---|---|---|",
    );
    for (const r of drift.results) {
      const d = r.driftAfterWindow
        ? `${r.driftAfterWindow.available}, ${r.driftAfterWindow.price ?? "n/a"}`
        : "no cache";
      lines.push(
        `| ${r.system} | ${r.msUntilReturnedUnitsSold ?? "never (within window)"} | ${r.unitsSold} / ${r.target} | ${d} |`,
      );
    }
    lines.push("");
  }
  return lines;
}

/** CDC lag by write rate; draws bench/lag.svg. */
function lagSection(results: Results): string[] {
  const lines: string[] = [];
  const lag = results.lag?.data as { seconds: number; results: ResultRow[] } | undefined;
  if (lag) {
    lines.push(
      `## CDC lag (${results.lag.file})`,
      "",
      `Commit (row DATETIME(3)) → Redis apply, ${lag.seconds} s per rate.`,
      "",
    );
    lines.push(
      "| target changes/s | achieved | applied | lag p50 ms | lag p99 ms | bounded |",
      "|---|---|---|---|---|---|",
    );
    for (const r of lag.results)
      lines.push(
        `| ${r.targetPerSecond} | ${r.achievedPerSecond} | ${r.appliedChanges} | ${r.lagP50Ms ?? "–"} | ${r.lagP99Ms ?? "–"} | ${r.bounded ? "yes" : "no"} |`,
      );
    // The rate the writer reached, not the one it aimed at: with a sync per commit it may fall short.
    const bounded = lag.results.filter((r) => r.bounded).map((r) => r.achievedPerSecond as number);
    lines.push(
      "",
      `Highest achieved rate with p99 < 1 s: **${bounded.length ? Math.max(...bounded) : "none"}** changes/s`,
    );
    writeFileSync(
      join(repoRoot, "bench", "lag.svg"),
      barChart(
        "CDC lag p99 (ms) by write rate",
        lag.results.map((r) => ({
          label: `${r.targetPerSecond}/s`,
          value: r.lagP99Ms ?? 0,
          color: "#2f81f7",
        })),
        "ms",
      ),
    );
    lines.push("", "![lag](lag.svg)", "");
  }
  return lines;
}

/** The micro ceilings: the Lua call against PING, the HTTP rejection against hello. */
function microSection(results: Results): string[] {
  const lines: string[] = [];
  const micro = results.micro?.data as
    | {
        rounds: number;
        redis: { ratio: number; costRatio: number; emptyScriptRatio: number; rounds: ResultRow[] };
        http: { ratio: number; costRatio: number; rounds: ResultRow[] };
      }
    | undefined;
  if (micro?.rounds) {
    lines.push(`## Micro ceilings (${results.micro.file})`, "");
    lines.push(
      `${micro.rounds} back-to-back rounds per pair (the HTTP pair in alternating order), after a warm-up; the ratio is the median of the rounds' ratios.`,
      "",
      "| what | ops/s per round | baseline | baseline ops/s per round | ratio per round | median ratio | goal |",
      "|---|---|---|---|---|---|---|",
    );
    const perRound = (rows: ResultRow[], field: string) => rows.map((r) => r[field]).join(" / ");
    lines.push(
      `| reserve.lua (EVALSHA, sold-out path) | ${perRound(micro.redis.rounds, "reserveScriptPerSecond")} | redis-benchmark PING | ${perRound(micro.redis.rounds, "pingPerSecond")} | ${perRound(micro.redis.rounds, "ratio")} | **${micro.redis.ratio}** | ≥ 0.85 |`,
      `| the floor: a script that only returns, same arguments | ${perRound(micro.redis.rounds, "emptyScriptPerSecond")} | redis-benchmark PING | ${perRound(micro.redis.rounds, "pingPerSecond")} | ${perRound(micro.redis.rounds, "emptyScriptRatio")} | **${micro.redis.emptyScriptRatio}** | (reference) |`,
      `| sold-out rejections over HTTP | ${perRound(micro.http.rounds, "soldOutRejectionsPerSecond")} | bare node:http hello | ${perRound(micro.http.rounds, "helloPerSecond")} | ${perRound(micro.http.rounds, "ratio")} | **${micro.http.ratio}** | ≥ 0.8 |`,
      "",
    );
    lines.push(
      `Redis's own CPU per operation in the same rounds (INFO cpu): script ${perRound(micro.redis.rounds, "scriptCpuUsPerOp")} µs, PING ${perRound(micro.redis.rounds, "pingCpuUsPerOp")} µs; PING's cost over the script's, median **${micro.redis.costRatio}**. Of that, inside the command itself (INFO commandstats): script ${perRound(micro.redis.rounds, "scriptExecUs")} µs, the empty script ${perRound(micro.redis.rounds, "emptyScriptExecUs")} µs, PING ${perRound(micro.redis.rounds, "pingExecUs")} µs — the rest is reading and answering the request, the same for both.`,
      "",
    );
    lines.push(
      `Each server's own CPU per request in the same rounds (/proc, user + system): sold-out ${perRound(micro.http.rounds, "soldOutCpuUsPerRequest")} µs, hello ${perRound(micro.http.rounds, "helloCpuUsPerRequest")} µs; hello's cost over the sold-out path's, median **${micro.http.costRatio}** (contention on the two cores moves it as much as the rates).`,
      "",
    );
  }
  return lines;
}

/** Purchases quiet, beside a flood of views of a known SKU, and beside a flood of unknown ids. */
function floodSection(results: Results): string[] {
  const flood = results.flood?.data as
    | {
        profile: Record<string, number>;
        created201Ms: Record<string, { count: number; p50: number; p99: number; p999: number }>;
        p99UnknownOverQuiet: number;
        p99KnownOverQuiet: number;
        p99UnknownOverKnown: number;
        rounds: ResultRow[];
      }
    | undefined;
  if (!flood) return [];
  const { profile } = flood;
  const lines = [
    `## Purchases beside a flood of SKU views (${results.flood.file})`,
    "",
    `flashgate only. ${profile.rounds} rounds; each round, in an order that rotates, a sale of ${profile.units} units gets ${profile.requests} purchase requests from ${profile.users} users over ${profile.connections} connections: quiet, beside ${profile.floodConnections} clients each viewing \`GET /v1/activities/:a/skus/:s\` every ${profile.floodThinkMs} ms for the sale's own SKU (served from Redis: the flood's CPU alone), and beside as many viewing random ids no sale has (each a MySQL lookup on the read pool, or a 503 when its bounded queue is full). The flood runs on a thread of its own in the bench process; an uncounted sale warms the system up first.`,
    "",
    "| condition | 201s | 201 p50 / p99 / p99.9 ms | flood answers/s (by status) |",
    "|---|---|---|---|",
  ];
  for (const condition of ["quiet", "known", "unknown"]) {
    const c = flood.created201Ms[condition];
    const floods = flood.rounds.filter((r) => r.condition === condition && r.flood);
    const answers = floods
      .map((r) =>
        Object.entries(r.flood.latencyMs as Record<string, { count: number }>)
          .map(([label, v]) => `${label}: ${v.count}`)
          .join(", "),
      )
      .join(" · ");
    const rate = floods.map((r) => r.flood.perSecond).join(" / ");
    lines.push(
      `| ${condition} | ${c?.count ?? 0} | ${c ? `${c.p50} / ${c.p99} / ${c.p999}` : "–"} | ${floods.length ? `${rate} (${answers})` : "–"} |`,
    );
  }
  lines.push(
    "",
    `201 p99, unknown-id flood over quiet: **${flood.p99UnknownOverQuiet}×** (goal ≤ 1.5×); known-SKU flood over quiet: ${flood.p99KnownOverQuiet}×; unknown over known (what the MySQL lookups add beside the same CPU): **${flood.p99UnknownOverKnown}×**.`,
    "",
  );
  return lines;
}

/** The storm and the CDC lag on the single topology and on the cluster topology, in one run. */
function topologySection(results: Results): string[] {
  const topology = results.topology?.data as
    | { profile: ResultRow; rounds: ResultRow[]; lag: ResultRow[]; clusterOverSingle: ResultRow }
    | undefined;
  if (!topology) return [];
  const { profile, clusterOverSingle: ratio } = topology;
  const lines = [
    `## Single topology beside the cluster topology (${results.topology.file})`,
    "",
    `flashgate with the same API processes on both: one Redis, one broker, one Connect worker and one maintainer, against Redis Cluster (3 masters, 3 replicas), 3 brokers (RF 3, min.insync 2), 2 Connect workers and 2 maintainers — both stacks up throughout, on the same two cores. ${profile.rounds} rounds in rotating order; each a sale of ${profile.units} units, ${profile.requests} requests from ${profile.users} users over ${profile.connections} connections. CPU is the whole machine's busy time over the storm (every process of both stacks and the load generator) per request.`,
    "",
    "| topology | round | requests/s | 201 p50 / p99 ms | all p50 / p99 / p99.9 ms | machine CPU ms/request | sold exactly | cache converged |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const r of topology.rounds) {
    const created = r.latencyMs["201"];
    lines.push(
      `| ${r.topology} | ${r.round} | ${r.requestsPerSecond} | ${created ? `${created.p50} / ${created.p99}` : "–"} | ${r.latencyMs.all.p50} / ${r.latencyMs.all.p99} / ${r.latencyMs.all.p999} | ${r.machineCpuMsPerRequest} | ${r.soldExactly ? "yes" : "no"} | ${r.cacheConverged ? "yes" : "no"} |`,
    );
  }
  lines.push(
    "",
    `Cluster over single (medians of the rounds): machine CPU per request **${ratio.machineCpuPerRequest}×**, p99 of all answers **${ratio.p99All}×**, 201 p99 ${ratio.p99Created}×, requests/s ${ratio.requestsPerSecond}×.`,
    "",
    "| topology | target changes/s | achieved | applied | CDC lag p50 ms | p99 ms |",
    "|---|---|---|---|---|---|",
  );
  for (const run of topology.lag)
    for (const r of run.results as ResultRow[])
      lines.push(
        `| ${run.topology} | ${r.targetPerSecond} | ${r.achievedPerSecond} | ${r.appliedChanges} | ${r.lagP50Ms ?? "–"} | ${r.lagP99Ms ?? "–"} |`,
      );
  lines.push("");
  return lines;
}

const seconds = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? "–" : (ms / 1000).toFixed(1);

const latencyCell = (latency: ResultRow | undefined) => (latency ? `${latency.p50} / ${latency.p99}` : "–");

/** One SKU with 100,000 units on each design. */
function bigStockSection(results: Results): string[] {
  const big = results.bigstock?.data as { profile: ResultRow; results: ResultRow[] } | undefined;
  if (!big) return [];
  const { profile } = big;
  const lines = [
    `## Big stock (${results.bigstock.file})`,
    "",
    `One SKU with ${profile.units} units; ${profile.requests} requests from ${profile.users} users (each comes twice, with a new key) over ${profile.connections} connections, 2 server processes per design, after an uncounted warm-up sale. Orders/s is orders created over the time to the last one (for Redis-as-truth: admissions, which MySQL holds only once its writer has caught up).`,
    "",
    "| system | orders/s | sold out after s | in MySQL after s | cache converged after s | req/s | 201 p50 / p99 ms | SOLD_OUT p50 / p99 ms | units sold | DB tx / unit | CDC lag p99 ms | Redis bytes / buyer |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of big.results)
    lines.push(
      `| ${r.system} | ${r.ordersPerSecond} | ${seconds(r.timeToSellOutMs)} | ${seconds(r.persistedAfterMs)} | ${seconds(r.cacheConvergedAfterMs)} | ${r.requestsPerSecond} | ${latencyCell(r.latencyMs["201"])} | ${latencyCell(r.latencyMs["409 SOLD_OUT"])} | ${r.unitsSold}${r.soldExactly ? "" : " ✗"} | ${r.transactionsPerUnitSold ?? "–"} | ${r.cdc?.lagP99Ms ?? "–"} | ${r.redisBytesPerBuyer ?? "–"} |`,
    );
  const fg = big.results.find((r) => r.system === "flashgate");
  const rt = big.results.find((r) => r.system === "redis-as-truth");
  const my = big.results.find((r) => r.system === "mysql-only");
  if (fg && rt && my)
    lines.push(
      "",
      `flashgate orders/s over Redis-as-truth admissions/s: **${(fg.ordersPerSecond / rt.ordersPerSecond).toFixed(2)}×** (goal ≥ 0.5×, with MySQL deciding every order); over MySQL-only orders/s: ${(fg.ordersPerSecond / my.ordersPerSecond).toFixed(1)}×.`,
    );
  lines.push("");
  return lines;
}

/** 1,000 SKUs, Zipf demand, on each design, beside flashgate's single-SKU storm of as many requests. */
function catalogueSection(results: Results): string[] {
  const catalogue = results.catalogue?.data as
    | { profile: ResultRow; singleSkuStorm: ResultRow; results: ResultRow[] }
    | undefined;
  if (!catalogue) return [];
  const { profile, singleSkuStorm: storm } = catalogue;
  const lines = [
    `## Catalogue (${results.catalogue.file})`,
    "",
    `${profile.skus} SKUs × ${profile.unitsPerSku} units of one activity; ${profile.requests} requests from ${profile.users} users, SKUs drawn Zipf (s = ${profile.zipf}) with one seed for every design, over ${profile.connections} connections, 2 server processes per design, after an uncounted warm-up sale. Left while refused: SKUs that ended with units after buyers of theirs were told SOLD_OUT. Machine CPU: every process's busy time over the load, per request.`,
    "",
    "| system | req/s | orders | SKUs sold out | sold out after s (p50 / p90 / max) | left while refused (SKUs, units) | 201 p50 / p99 ms | SOLD_OUT p50 / p99 ms | DB tx / unit | MySQL commits | machine CPU ms / request | CDC lag p50 / p99 ms |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of catalogue.results)
    lines.push(
      `| ${r.system} | ${r.requestsPerSecond} | ${r.unitsSold} | ${r.skusSoldOut} | ${seconds(r.sellOutMs.p50)} / ${seconds(r.sellOutMs.p90)} / ${seconds(r.sellOutMs.max)} | ${r.skusLeftWithUnitsWhileRefused}, ${r.unitsLeftWhileRefused} | ${latencyCell(r.latencyMs["201"])} | ${latencyCell(r.latencyMs["409 SOLD_OUT"])} | ${r.transactionsPerUnitSold ?? "–"} | ${r.databaseCommits ?? "–"} | ${r.machineCpuMsPerRequest} | ${r.cdc ? `${r.cdc.lagP50Ms} / ${r.cdc.lagP99Ms}` : "–"} |`,
    );
  lines.push(
    `| flashgate, one SKU of 1000 units (reference) | ${storm.requestsPerSecond} | ${storm.created} | 1 | – | – | ${latencyCell(storm.latencyMs["201"])} | ${latencyCell(storm.latencyMs["409 SOLD_OUT"])} | – | – | ${storm.machineCpuMsPerRequest} | – |`,
  );
  const fg = catalogue.results.find((r) => r.system === "flashgate");
  if (fg)
    lines.push(
      "",
      `flashgate catalogue over its single-SKU storm, requests/s: **${(fg.requestsPerSecond / storm.requestsPerSecond).toFixed(2)}×** (goal ≥ 0.9×); machine CPU per request ${(fg.machineCpuMsPerRequest / storm.machineCpuMsPerRequest).toFixed(1)}× the storm's; CDC lag p99 **${fg.cdc?.lagP99Ms ?? "–"} ms** (goal < 1 s); Redis per SKU ${fg.memory?.bytesPerSku ?? "–"} bytes, per buyer ${fg.memory?.bytesPerBuyer ?? "–"} bytes (the SKU hash's listpack encoding, up to 128 fields).`,
    );
  const looping = catalogue.results.find((r) => r.looper);
  if (fg && looping)
    lines.push(
      "",
      `One user sending the key it bought SKU 1 with to every other SKU meanwhile (two connections, ${looping.looper.requests} requests: ${Object.entries(
        looping.looper.answers,
      )
        .map(([label, n]) => `${n} × ${label}`)
        .join(
          ", ",
        )}): MySQL commits **${(looping.databaseCommits / fg.databaseCommits).toFixed(2)}×** the sale's without them, 201 p99 **${(looping.latencyMs["201"].p99 / fg.latencyMs["201"].p99).toFixed(2)}×**.`,
    );
  lines.push("");
  return lines;
}

/** Each design's sustained arrival rate per scenario and round, and flashgate's over Redis-as-truth's. */
function openLoopSection(results: Results): string[] {
  const open = results.openloop?.data as
    | {
        profile: ResultRow;
        results: Record<string, { round: number; order: string[]; ceilings: ResultRow }[]>;
      }
    | undefined;
  if (!open) return [];
  const { profile } = open;
  const lines = [
    `## Open loop (${results.openloop.file})`,
    "",
    `Requests arrive at a fixed rate whether or not earlier ones were answered (${profile.connections} connections, 2 server processes per design), each answer timed from when its request was due. The rate starts at ${profile.startRate}/s and rises ×${profile.factor} per ${profile.stepMs / 1000} s step (measured after ${(profile.warmupMs ?? 0) / 1000} s of arrivals at the same rate on its fresh sockets and sale, and once the machine has settled from the step before) until the p99 of the measured answers passes 200 ms or more than 0.1 % of requests fail or time out (2 s) twice in a row at one rate (a broken step runs once more: one hiccup of the machine does not end the search); a design's figure is the last rate that held. Storm: one SKU with a unit for ${Number(profile.stormUnitShare) * 100} % of the step's arrivals, every answer measured (mostly SOLD_OUT). Big stock: one SKU with a unit for every arrival, each from a buyer of their own; catalogue: ${profile.catalogue.skus} SKUs, Zipf s = ${profile.catalogue.zipf}, stock that lasts — both measure 201s, and orders/s is a step's 201s over its duration (Redis-as-truth: admissions, persisted later). A fresh sale per step; the designs' order rotates each round, ratios are within a round.`,
    "",
    "| scenario | round (order) | flashgate /s | Redis-as-truth /s | MySQL-only /s | flashgate / Redis-as-truth | orders/s at the ceiling (flashgate, Redis-as-truth) |",
    "|---|---|---|---|---|---|---|",
  ];
  const ordersAt = (ceiling: ResultRow | undefined) => {
    const step = ceiling?.steps.filter((s: ResultRow) => s.held).at(-1);
    return step ? Math.round(((step.answers["201"] ?? 0) * 1000) / profile.stepMs) : "–";
  };
  for (const [scenario, rounds] of Object.entries(open.results))
    for (const { round, order, ceilings } of rounds) {
      const fg = ceilings.flashgate?.sustainedPerSecond;
      const rt = ceilings["redis-as-truth"]?.sustainedPerSecond;
      // No step held: the design's ceiling is below the first rate tried.
      const rate = (ceiling: ResultRow | undefined) =>
        ceiling === undefined ? "–" : ceiling.sustainedPerSecond || `< ${profile.startRate}`;
      lines.push(
        `| ${scenario} | ${round} (${order.join(", ")}) | ${rate(ceilings.flashgate)} | ${rate(ceilings["redis-as-truth"])} | ${rate(ceilings["mysql-only"])} | ${fg && rt ? `**${(fg / rt).toFixed(2)}×**` : "–"} | ${scenario === "storm" ? "–, –" : `${ordersAt(ceilings.flashgate)}, ${ordersAt(ceilings["redis-as-truth"])}`} |`,
      );
    }
  const medianRatio = (scenario: string) => {
    const ratios = (open.results[scenario] ?? [])
      .map(
        ({ ceilings }) =>
          ceilings.flashgate?.sustainedPerSecond / ceilings["redis-as-truth"]?.sustainedPerSecond,
      )
      .filter(Number.isFinite)
      .sort((a: number, b: number) => a - b);
    return ratios.length ? `${percentile(ratios, 50).toFixed(2)}×` : "–";
  };
  lines.push(
    "",
    `The storm's units sell in each step's warm-up: its steps measure the refusals. Goals, flashgate over Redis-as-truth, median of the rounds: big stock **${medianRatio("bigstock")}** (goal ≥ 1×, every order durable in MySQL when answered), catalogue **${medianRatio("catalogue")}** (goal ≥ 0.7×).`,
    "",
  );
  return lines;
}

/** "database 12, kafka 8, …, machine 90": a stage's CPU µs per event by part. */
const cpuParts = (parts: Record<string, number>) =>
  Object.entries(parts)
    .map(([part, us]) => `${part} ${us}`)
    .join(", ");

/** A burst of order rows through each CDC stage alone, then through the whole pipeline. */
function cdcSection(results: Results): string[] {
  const cdc = results.cdc?.data as
    | { profile: ResultRow; stages: ResultRow; pipeline: ResultRow; deadline?: ResultRow }
    | undefined;
  if (!cdc) return [];
  const { profile, stages, pipeline, deadline } = cdc;
  const expiry = deadline
    ? [
        `A payment deadline: ${deadline.profile.orders} PENDING orders of a sold-out sale (${deadline.profile.skus} SKUs) all due at once, the maintainers started with order expiry on, new buyers arriving at ${deadline.profile.buyersPerSecond}/s (open loop): all expired after **${seconds(deadline.expiredAllAfterMs)} s**, the last returned unit sold again after **${seconds(deadline.lastUnitSoldAgainAfterMs)} s** (${deadline.resold} of ${deadline.profile.orders} re-sold); commit → Redis lag p50 / p99 meanwhile ${deadline.lagP50Ms ?? "–"} / ${deadline.lagP99Ms ?? "–"} ms over ${deadline.applied} changes.`,
        "",
      ]
    : [];
  return [
    `## CDC throughput (${results.cdc.file})`,
    "",
    `${profile.orders} order rows in transactions of ${profile.ordersPerTransaction} (each also takes its units from its ${profile.eventsPerTransaction - profile.ordersPerTransaction} SKUs' stock in one UPDATE: ${profile.events} change events), ${profile.writers} writers side by side, \`sync_binlog=1\`. Each stage alone first: the writers with the connector paused, Debezium draining that binlog into the topic (its end offsets, polled every 50 ms), the maintainers replaying the topic (the group's committed offsets); then a second burst with everything running. Stage lag: per transaction, from its commit until the stage held its events.`,
    "",
    "| stage | events/s | ms |",
    "|---|---|---|",
    `| writers (MySQL, binlog synced) | ${stages.writers.eventsPerSecond} | ${stages.writers.ms} |`,
    `| Debezium into the topic, alone | ${stages.debezium.eventsPerSecond} | ${stages.debezium.ms} |`,
    `| maintainers (${stages.maintainers.processes}) replaying the topic, alone | ${stages.maintainers.eventsPerSecond} | ${stages.maintainers.ms} |`,
    `| whole pipeline (commit of the first → the group committed the last) | **${pipeline.eventsPerSecond}** | ${pipeline.drainedMs} |`,
    "",
    `CPU per event (µs, /proc), Debezium alone: ${cpuParts(stages.debezium.cpuUsPerEvent)}; whole pipeline: ${cpuParts(pipeline.cpuUsPerEvent)} — the machine's ${pipeline.cores} cores give at most **${Math.round((pipeline.cores * 1_000_000) / pipeline.cpuUsPerEvent.machine)}** events/s at the whole pipeline's cost.`,
    "",
    `Whole pipeline: written in ${pipeline.writtenMs} ms; lag p50 / p99 into the topic ${pipeline.debeziumLag.p50Ms} / ${pipeline.debeziumLag.p99Ms} ms, to the group's commit ${pipeline.committedLag.p50Ms} / ${pipeline.committedLag.p99Ms} ms; the maintainer's own commit → Redis lag p50 / p99 ${pipeline.maintainerLagP50Ms ?? "–"} / ${pipeline.maintainerLagP99Ms ?? "–"} ms over ${pipeline.applied} changes applied (goal: ≥ 20,000 events/s with lag p99 < 2 s).`,
    "",
    ...expiry,
  ];
}
