import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type DecisionResult, decisionSection } from "../scenarios/decision.ts";
import { type QueuedResult, queuedSection } from "../scenarios/queued.ts";
import { percentile } from "./load.ts";

// biome-ignore lint/suspicious/noExplicitAny: rows of our own result files, written a few lines away
export type ResultRow = Record<string, any>;

/** Each scenario's result of one run. */
export type Results = Record<string, { file: string; data: Record<string, unknown> }>;

/** "median (min–max)" of one figure over the rounds. */
export function spread(values: number[], digits = 0): string {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (!sorted.length) return "–";
  const f = (v: number) => (digits ? v.toFixed(digits) : String(Math.round(v)));
  const median = percentile(sorted, 50);
  return sorted.length === 1 ? f(median) : `${f(median)} (${f(sorted[0])}–${f(sorted.at(-1) as number)})`;
}

export const median = (values: number[]) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length ? percentile(sorted, 50) : Number.NaN;
};

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

const roundsOf = (n: number) => `${n} round${n === 1 ? "" : "s"}`;

/** Each system's rows in a run's order of first appearance. */
const systemsOf = (rows: ResultRow[]) => [...new Set(rows.map((r) => r.system as string))];

/**
 * Per round, flashgate's figure over the strongest variant of a baseline design in the same round (the
 * highest figure, or the lowest where lower is better): a ratio only ever compares figures of one round.
 */
export function roundRatios(
  rows: ResultRow[],
  design: string,
  figure: (row: ResultRow) => number,
  lowerIsBetter = false,
): number[] {
  const rounds = [...new Set(rows.map((r) => r.round ?? 1))];
  return rounds.flatMap((round) => {
    const inRound = rows.filter((r) => (r.round ?? 1) === round);
    const fg = inRound.find((r) => r.system === "flashgate");
    const theirs = inRound
      .filter((r) => r.design === design)
      .map(figure)
      .filter(Number.isFinite);
    if (!fg || !theirs.length) return [];
    const best = lowerIsBetter ? Math.min(...theirs) : Math.max(...theirs);
    return [lowerIsBetter ? best / figure(fg) : figure(fg) / best];
  });
}

/** "system: median (min–max)" of a figure over the rounds, for each system. */
const perSystem = (rows: ResultRow[], figure: (row: ResultRow) => number, digits = 0) =>
  systemsOf(rows)
    .map((system) => `${system} ${spread(rows.filter((r) => r.system === system).map(figure), digits)}`)
    .join("; ");

type StormResult = {
  run?: string;
  profile: Record<string, number>;
  results: ResultRow[];
  facts?: Record<string, unknown>;
};

/** One storm's rows, every round, and flashgate's ratio to the strongest of each baseline round by round. */
function stormTable(results: ResultRow[]): string[] {
  const lines: string[] = [];
  lines.push(
    "| round | system | req/s | units sold | DB tx / unit sold | p50 / p99 / p99.9 ms (all) | p50 / p99 / p99.9 ms (201) | p50 / p99 / p99.9 ms (409 SOLD_OUT) | 503s | final drift | errors |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  );
  for (const r of results) {
    const lat = (label: string) =>
      r.latencyMs[label]
        ? `${r.latencyMs[label].p50} / ${r.latencyMs[label].p99} / ${r.latencyMs[label].p999}`
        : "–";
    lines.push(
      `| ${r.round ?? 1} | ${r.system} | ${r.requestsPerSecond} | ${r.unitsSold}${r.soldExactly ? "" : " ✗"} | ${r.transactionsPerUnitSold ?? "–"} | ${lat("all")} | ${lat("201")} | ${lat("409 SOLD_OUT")} | ${r.latencyMs["503 UNAVAILABLE"]?.count ?? 0} | ${r.finalDrift ?? "n/a"} | ${r.errors} |`,
    );
  }
  const rate = (r: ResultRow) => r.requestsPerSecond;
  const p99 = (r: ResultRow) => r.latencyMs.all?.p99;
  lines.push(
    "",
    `Requests/s, median (min–max) of the rounds: ${perSystem(results, rate)}.`,
    "",
    `flashgate over the strongest MySQL-only, requests/s: **${spread(roundRatios(results, "mysql-only", rate), 2)}×**; over the strongest Redis-as-truth: **${spread(roundRatios(results, "redis-as-truth", rate), 2)}×**; p99 of all answers, the strongest MySQL-only's over flashgate's: ${spread(roundRatios(results, "mysql-only", p99, true), 2)}× (medians of the rounds' ratios).`,
  );
  return lines;
}

/** The storm on MySQL and, beside it, on MariaDB; draws storm.svg (medians of the rounds). */
function stormSections(results: Results, folder: string): string[] {
  const lines: string[] = [];
  const storm = results.storm?.data as StormResult | undefined;
  if (storm) {
    lines.push(
      "## Storm (closed loop)",
      "",
      `${storm.profile.units} units, ${storm.profile.requests} requests from ${storm.profile.users} users, ${storm.profile.connections} connections spread over ${storm.profile.processesPerSystem} server processes per design (one per core, ADR 0008); ${roundsOf(storm.profile.rounds)}, the designs' order rotating each round, the machine settled before each; each design first serves an uncounted warm-up sale a tenth that size (other users).`,
      "",
    );
    lines.push(...stormTable(storm.results));
    writeFileSync(
      join(folder, "storm.svg"),
      barChart(
        "Storm throughput (req/s, median of the rounds, higher is better)",
        systemsOf(storm.results).map((system) => {
          const rows = storm.results.filter((r) => r.system === system);
          return {
            label: system,
            value: Math.round(median(rows.map((r) => r.requestsPerSecond))),
            color: colors[rows[0].design] ?? "#888",
          };
        }),
        "req/s",
      ),
    );
    lines.push("", "![storm throughput](storm.svg)", "");
  }
  const mariadb = results["storm-mariadb"]?.data as StormResult | undefined;
  if (storm && mariadb) {
    const flashgate = (run: StormResult) =>
      median(run.results.filter((r) => r.system === "flashgate").map((r) => r.requestsPerSecond));
    lines.push(
      "### The same storm on MariaDB",
      "",
      `On ${mariadb.facts?.database ?? "MariaDB"}, with the same profile and durability, on a bench stack of its own after the MySQL one was stopped.`,
      "",
      ...stormTable(mariadb.results),
      "",
      `flashgate on MySQL over on MariaDB, requests/s (medians of the rounds): **${(flashgate(storm) / flashgate(mariadb)).toFixed(2)}×**.`,
      "",
    );
  }
  return lines;
}

/** Raw-SQL changes during a sale: how soon returned units sell. */
function driftSection(results: Results): string[] {
  const lines: string[] = [];
  const drift = results.drift?.data as { windowS: number; rounds: number; results: ResultRow[] } | undefined;
  if (drift) {
    lines.push(
      "## Drift",
      "",
      `During a sale: raw-SQL restock of 100, 50 orders closed in SQL, a price edit; window ${drift.windowS} s; ${roundsOf(drift.rounds)}, the designs' order rotating.`,
      "",
    );
    lines.push(
      "| round | system | returned units sold after (ms) | units sold / target | drift after window (available, price) |",
      "|---|---|---|---|---|",
    );
    for (const r of drift.results) {
      const d = r.driftAfterWindow
        ? `${r.driftAfterWindow.available}, ${r.driftAfterWindow.price ?? "n/a"}`
        : "no cache";
      lines.push(
        `| ${r.round} | ${r.system} | ${r.msUntilReturnedUnitsSold ?? "never (within window)"} | ${r.unitsSold} / ${r.target} | ${d} |`,
      );
    }
    lines.push("");
  }
  return lines;
}

const stagesHeader =
  "binlog read: commit → Debezium's envelope; Kafka send: → the broker's append (the record's timestamp); consumed: Kafka's replication and the fetch → the maintainer's receipt; applied: → Redis";

/** A row's stages' p99s (ms), in the order of flashgate_cdc_stage_seconds' stages; "–" from a run before them. */
const stagesCell = (stagesP99Ms: unknown) =>
  stagesP99Ms && typeof stagesP99Ms === "object"
    ? Object.values(stagesP99Ms as Record<string, number | null>)
        .map((ms) => ms ?? "–")
        .join(" / ")
    : "–";

/** CDC lag by write rate; draws bench/lag.svg. */
function lagSection(results: Results, folder: string): string[] {
  const lines: string[] = [];
  const lag = results.lag?.data as { seconds: number; results: ResultRow[] } | undefined;
  if (lag) {
    lines.push(
      "## CDC lag",
      "",
      `Commit (row DATETIME(3)) → Redis apply, ${lag.seconds} s per rate; and each stage's p99 on the way (${stagesHeader}).`,
      "",
    );
    lines.push(
      "| target changes/s | achieved | applied | lag p50 ms | lag p99 ms | stages p99 ms | bounded |",
      "|---|---|---|---|---|---|---|",
    );
    for (const r of lag.results)
      lines.push(
        `| ${r.targetPerSecond} | ${r.achievedPerSecond} | ${r.appliedChanges} | ${r.lagP50Ms ?? "–"} | ${r.lagP99Ms ?? "–"} | ${stagesCell(r.stagesP99Ms)} | ${r.bounded ? "yes" : "no"} |`,
      );
    // The rate the writer reached, not the one it aimed at: with a sync per commit it may fall short.
    const bounded = lag.results.filter((r) => r.bounded).map((r) => r.achievedPerSecond as number);
    lines.push(
      "",
      `Highest achieved rate with p99 < 1 s: **${bounded.length ? Math.max(...bounded) : "none"}** changes/s`,
    );
    writeFileSync(
      join(folder, "lag.svg"),
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
        http: {
          ratio: number;
          costRatio: number;
          viewRatio?: number;
          revalidatedRatio?: number;
          unknownViewRatio?: number;
          rounds: ResultRow[];
        };
      }
    | undefined;
  if (micro?.rounds) {
    lines.push("## Micro ceilings", "");
    lines.push(
      `${micro.rounds} back-to-back rounds per pair (the HTTP pair in alternating order), after a warm-up; the ratio is the median of the rounds' ratios.`,
      "",
      "| what | ops/s per round | baseline | baseline ops/s per round | ratio per round | median ratio | goal |",
      "|---|---|---|---|---|---|---|",
    );
    const perRound = (rows: ResultRow[], field: string) => rows.map((r) => r[field]).join(" / ");
    // The public view three ways, each a row of its own per round.
    const ofView = (key: string, field: string) =>
      perRound(
        micro.http.rounds.map((r: ResultRow) => r[key]),
        field,
      );
    const views = [
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
    "## Purchases beside a flood of SKU views",
    "",
    `flashgate only. ${roundsOf(profile.rounds)}; each round, in an order that rotates, a sale of ${profile.units} units gets ${profile.requests} purchase requests from ${profile.users} users, arriving at ${profile.purchasesPerSecond}/s whatever the answers (open loop, below the machine's ceiling; over ${profile.connections} connections): quiet, beside ${profile.floodConnections} clients each viewing \`GET /v1/activities/:a/skus/:s\` every ${profile.floodThinkMs} ms for the sale's own SKU (served from Redis: the flood's CPU alone), and beside as many viewing random ids no sale has (each answered 404 from the sale directory in Redis; MySQL only while the directory is not loaded whole). The flood runs on a thread of its own in the bench process; an uncounted sale warms the system up first.`,
    "",
    "| condition | 201s | 201 p50 / p99 / p99.9 ms | flood answers/s (by status) | machine busy, per round | bench process, cores, per round |",
    "|---|---|---|---|---|---|",
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
    const rounds = flood.rounds.filter((r) => r.condition === condition);
    const perRound = (field: string) => rounds.map((r) => r[field] ?? "–").join(" / ");
    lines.push(
      `| ${condition} | ${c?.count ?? 0} | ${c ? `${c.p50} / ${c.p99} / ${c.p999}` : "–"} | ${floods.length ? `${rate} (${answers})` : "–"} | ${perRound("machineBusyShare")} | ${perRound("benchCoresUsed")} |`,
    );
  }
  lines.push(
    "",
    `201 p99, unknown-id flood over quiet: **${flood.p99UnknownOverQuiet}×** (goal ≤ 1.5×); known-SKU flood over quiet: **${flood.p99KnownOverQuiet}×** (goal ≤ 2×); unknown over known (what an unknown id costs beside the same CPU): **${flood.p99UnknownOverKnown}×**.`,
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
    "## Single topology beside the cluster topology",
    "",
    `flashgate with the same API processes on both: one Redis, one broker, one Connect worker and one maintainer, against Redis Cluster (3 masters, 3 replicas), 3 brokers (RF 3, min.insync 2), 2 Connect workers and 2 maintainers — both stacks up throughout, on the same two cores. ${roundsOf(profile.rounds)} in rotating order; each a sale of ${profile.units} units, ${profile.requests} requests from ${profile.users} users over ${profile.connections} connections. CPU is the whole machine's busy time over the storm (every process of both stacks and the load generator) per request.`,
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
    `| topology | target changes/s | achieved | applied | CDC lag p50 ms | p99 ms | stages p99 ms (${stagesHeader}) |`,
    "|---|---|---|---|---|---|---|",
  );
  for (const run of topology.lag)
    for (const r of run.results as ResultRow[])
      lines.push(
        `| ${run.topology} | ${r.targetPerSecond} | ${r.achievedPerSecond} | ${r.appliedChanges} | ${r.lagP50Ms ?? "–"} | ${r.lagP99Ms ?? "–"} | ${stagesCell(r.stagesP99Ms)} |`,
      );
  lines.push("");
  return lines;
}

const seconds = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? "–" : (ms / 1000).toFixed(1);

const latencyCell = (latency: ResultRow | undefined) => (latency ? `${latency.p50} / ${latency.p99}` : "–");

/** A fresh SKU and twenty times its units in buyers within one second, on each design. */
function firstSecondSection(results: Results): string[] {
  const first = results.firstsecond?.data as { profile: ResultRow; results: ResultRow[] } | undefined;
  if (!first) return [];
  const { profile } = first;
  const lines = [
    "## The first second of a sale (open loop)",
    "",
    `A fresh SKU with ${profile.units} units and ${profile.arrivals} buyers (each a user of their own) arriving evenly within one second over ${profile.connections} connections, ${profile.processesPerSystem} server processes per design, ${roundsOf(profile.rounds)} in rotating order, after an uncounted warm-up sale per design. Sold out after: the last 201, from the first buyer's arrival; answer times from when each request was due; in MySQL: the units MySQL holds once every answer came (Redis-as-truth's writer persists later).`,
    "",
    "| round | system | sold out after ms | every order in MySQL after ms | p50 / p99 ms, every answer | 5xx | no answer | 201 | in MySQL when answered | DB transactions |",
    "|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of first.results)
    lines.push(
      `| ${r.round} | ${r.system} | ${r.soldOutAfterMs ?? "not sold out"} | ${r.allInMySqlAfterMs ?? "–"} | ${r.p50Ms} / ${r.p99Ms} | ${r.serverErrors} | ${r.timedOut} | ${r.created} | ${r.unitsSoldInMySql} | ${r.databaseTransactions} |`,
    );
  lines.push(
    "",
    `Sold out after (ms), median (min–max) of the rounds: ${perSystem(first.results, (r) => r.soldOutAfterMs ?? Number.NaN)}. Every order in MySQL after (ms): ${perSystem(first.results, (r) => r.allInMySqlAfterMs ?? Number.NaN)}. p99 of every answer (ms): ${perSystem(first.results, (r) => r.p99Ms)}.`,
    "",
  );
  return lines;
}

/** Nine requests in ten from users who already bought, beside new buyers, while stock lasts. */
function botsSection(results: Results): string[] {
  const run = results.bots?.data as { profile: ResultRow; results: ResultRow[] } | undefined;
  if (!run) return [];
  const { profile } = run;
  const lines = [
    "## Bots beside buyers (open loop)",
    "",
    `${profile.rate} requests/s for ${profile.seconds} s over ${profile.connections} connections, ${profile.processesPerSystem} server processes per design, ${roundsOf(profile.rounds)}: one in ten from a new buyer (${profile.newBuyers} of them for ${profile.units - profile.botUsers} units), nine from ${profile.botUsers} users who bought before the window — half buying again with a new key, half repeating their first key. Answer times from when each request was due.`,
    "",
    "| round | system | new buyers' 201 p50 / p99 ms | 201 | SOLD_OUT | already bought: p99 ms (count) | replays: p99 ms (count) | 429 | 5xx | no answer | DB transactions |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  const cell = (latency: ResultRow | undefined) => (latency ? `${latency.p99} (${latency.count})` : "–");
  for (const r of run.results)
    lines.push(
      `| ${r.round} | ${r.system} | ${latencyCell(r.latencyMs["201"])} | ${r.created} | ${r.latencyMs["409 SOLD_OUT"]?.count ?? 0} | ${cell(r.latencyMs["409 ALREADY_PURCHASED"])} | ${cell(r.latencyMs["200"])} | ${r.latencyMs["429 RATE_LIMITED"]?.count ?? 0} | ${r.serverErrors} | ${r.timedOut} | ${r.databaseTransactions} |`,
    );
  lines.push(
    "",
    `New buyers' 201 p99 (ms), median (min–max) of the rounds: ${perSystem(run.results, (r) => r.latencyMs["201"]?.p99 ?? Number.NaN)}.`,
    "",
  );
  return lines;
}

/** One SKU with 100,000 units on each design. */
function bigStockSection(results: Results): string[] {
  const big = results.bigstock?.data as { profile: ResultRow; results: ResultRow[] } | undefined;
  if (!big) return [];
  const { profile } = big;
  const lines = [
    "## Big stock (closed loop)",
    "",
    `One SKU with ${profile.units} units; ${profile.requests} requests from ${profile.users} users (each comes twice, with a new key) over ${profile.connections} connections, 2 server processes per design, ${roundsOf(profile.rounds)} in rotating order, after an uncounted warm-up sale per design. Orders/s is orders created over the time to the last one (for Redis-as-truth: admissions, which MySQL holds only once its writer has caught up).`,
    "",
    "| round | system | orders/s | sold out after s | in MySQL after s | cache converged after s | req/s | 201 p50 / p99 ms | SOLD_OUT p50 / p99 ms | units sold | DB tx / unit | CDC lag p99 ms | Redis bytes / buyer |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of big.results)
    lines.push(
      `| ${r.round} | ${r.system} | ${r.ordersPerSecond} | ${seconds(r.timeToSellOutMs)} | ${seconds(r.persistedAfterMs)} | ${seconds(r.cacheConvergedAfterMs)} | ${r.requestsPerSecond} | ${latencyCell(r.latencyMs["201"])} | ${latencyCell(r.latencyMs["409 SOLD_OUT"])} | ${r.unitsSold}${r.soldExactly ? "" : " ✗"} | ${r.transactionsPerUnitSold ?? "–"} | ${r.cdc?.lagP99Ms ?? "–"} | ${r.redisBytesPerBuyer ?? "–"} |`,
    );
  const orders = (r: ResultRow) => r.ordersPerSecond;
  lines.push(
    "",
    `Orders/s, median (min–max) of the rounds: ${perSystem(big.results, orders)}. flashgate over the strongest Redis-as-truth's admissions/s: **${spread(roundRatios(big.results, "redis-as-truth", orders), 2)}×**; over the strongest MySQL-only's orders/s: **${spread(roundRatios(big.results, "mysql-only", orders), 2)}×**.`,
    "",
  );
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
  const rate = (r: ResultRow) => r.requestsPerSecond;
  const fg = sale.filter((r) => r.system === "flashgate");
  lines.push(
    "",
    `Requests/s, median (min–max) of the rounds: ${perSystem(sale, rate)}. flashgate over the strongest Redis-as-truth: **${spread(roundRatios(sale, "redis-as-truth", rate), 2)}×**; over the strongest MySQL-only: **${spread(roundRatios(sale, "mysql-only", rate), 2)}×**; over its own single-SKU storm: ${(median(fg.map(rate)) / storm.requestsPerSecond).toFixed(2)}×, machine CPU per request ${(median(fg.map((r) => r.machineCpuMsPerRequest)) / storm.machineCpuMsPerRequest).toFixed(1)}× the storm's; CDC lag p99 ${spread(fg.map((r) => r.cdc?.lagP99Ms))} ms; Redis per SKU ${fg[0]?.memory?.bytesPerSku ?? "–"} bytes, per buyer ${fg[0]?.memory?.bytesPerBuyer ?? "–"} bytes (the SKU hash's listpack encoding, up to 128 fields).`,
  );
  const looping = catalogue.results.find((r) => r.looper);
  const alone = fg.at(-1);
  if (alone && looping)
    lines.push(
      "",
      `One user sending the key it bought SKU 1 with to every other SKU meanwhile (two connections, ${looping.looper.requests} requests: ${Object.entries(
        looping.looper.answers,
      )
        .map(([label, n]) => `${n} × ${label}`)
        .join(
          ", ",
        )}): MySQL commits **${(looping.databaseCommits / alone.databaseCommits).toFixed(2)}×** the last round's sale without them, 201 p99 **${(looping.latencyMs["201"].p99 / alone.latencyMs["201"].p99).toFixed(2)}×**.`,
    );
  lines.push("");
  return lines;
}

/** An open-loop ceiling per scenario and round: the last rate that held. */
const ceilingOf = (ceiling: ResultRow | undefined) => ceiling?.sustainedPerSecond ?? Number.NaN;

/** The open loop's rows as "system per round" rows: what roundRatios reads. */
export function openLoopRows(rounds: { round: number; ceilings: Record<string, ResultRow> }[]): ResultRow[] {
  return rounds.flatMap(({ round, ceilings }) =>
    Object.entries(ceilings).map(([system, ceiling]) => ({
      round,
      system,
      design: ceiling.design ?? system.split(",")[0],
      sustainedPerSecond: ceilingOf(ceiling),
    })),
  );
}

/** Each design's sustained arrival rate per scenario and round, and flashgate's over the strongest baselines'. */
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
    "## Open loop",
    "",
    `Requests arrive at a fixed rate whether or not earlier ones were answered (${profile.connections} connections, 2 server processes per design), each answer timed from when its request was due. The rate starts at ${profile.startRate}/s and rises ×${profile.factor} per ${profile.stepMs / 1000} s step (measured after ${(profile.warmupMs ?? 0) / 1000} s of arrivals at the same rate on its fresh sockets and sale, and once the machine has settled from the step before) until the p99 of the measured answers passes 200 ms or more than 0.1 % of requests fail or time out (2 s) ${profile.tries === 1 ? "at one rate (each rate runs once: a smoke check)" : "twice in a row at one rate (a broken step runs once more: one hiccup of the machine does not end the search)"} — or, where the first rate broke, falls ÷${profile.factor} until a rate holds (down to ${profile.minRate ?? profile.startRate}/s); then the rate is bisected between the last that held and the first that broke until they are within ${Math.round((profile.resolution ?? 0.05) * 100)} %. A design's figure is the highest rate that held. Storm: one SKU with a unit for ${Number(profile.stormUnitShare) * 100} % of the step's arrivals, every answer measured (mostly SOLD_OUT). Big stock: one SKU with a unit for every arrival, each from a buyer of their own; catalogue: ${profile.catalogue.skus} SKUs, Zipf s = ${profile.catalogue.zipf}, stock that lasts — both measure 201s, and orders/s is a step's 201s over its duration (Redis-as-truth: admissions, persisted later). A fresh sale per step; the designs' order rotates each round, ratios are within a round.`,
    "",
  ];
  const ordersAt = (ceiling: ResultRow | undefined) => {
    const step = ceiling?.steps
      .filter((s: ResultRow) => s.held)
      .sort((a: ResultRow, b: ResultRow) => a.offeredPerSecond - b.offeredPerSecond)
      .at(-1);
    return step ? Math.round(((step.answers["201"] ?? 0) * 1000) / profile.stepMs) : "–";
  };
  for (const [scenario, rounds] of Object.entries(open.results)) {
    const systems = Object.keys(rounds[0]?.ceilings ?? {});
    lines.push(
      `### ${scenario}`,
      "",
      `| round (order) | ${systems.map((s) => `${s} /s`).join(" | ")} | flashgate / strongest Redis-as-truth | flashgate / strongest MySQL-only |`,
      `|---|${systems.map(() => "---|").join("")}---|---|`,
    );
    for (const { round, order, ceilings } of rounds) {
      const rows = openLoopRows([{ round, ceilings }]);
      const ratio = (design: string) => {
        const [r] = roundRatios(rows, design, (row) => row.sustainedPerSecond);
        return r === undefined || !Number.isFinite(r) ? "–" : `**${r.toFixed(2)}×**`;
      };
      // No step held: the design's ceiling is below the least rate tried.
      const rate = (ceiling: ResultRow | undefined) => {
        if (ceiling === undefined) return "–";
        const orders = scenario === "storm" ? "" : ` (${ordersAt(ceiling)} orders/s)`;
        return ceiling.sustainedPerSecond
          ? `${ceiling.sustainedPerSecond}${orders}`
          : `< ${profile.minRate ?? profile.startRate}`;
      };
      lines.push(
        `| ${round} (${order.join(" → ")}) | ${systems.map((s) => rate(ceilings[s])).join(" | ")} | ${ratio("redis-as-truth")} | ${ratio("mysql-only")} |`,
      );
    }
    lines.push("");
  }
  lines.push(
    "The storm's units sell in each step's warm-up: its steps measure the refusals. A rate below the least one tried counts as 0 in a ratio.",
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
  const cdc = results.cdc?.data as { profile: ResultRow; stages: ResultRow; pipeline: ResultRow } | undefined;
  if (!cdc) return [];
  const { profile, stages, pipeline } = cdc;
  return [
    "## CDC throughput",
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
  ];
}

/** The pipeline held at steady rates: lag and CPU per event at each. */
function cdcSteadySection(results: Results): string[] {
  const steady = results.cdcsteady?.data as { profile: ResultRow; results: ResultRow[] } | undefined;
  if (!steady) return [];
  const { profile } = steady;
  return [
    "## CDC held at steady rates",
    "",
    `Transactions of ${profile.ordersPerTransaction} orders over ${profile.skusPerWriter} SKUs (${profile.eventsPerTransaction} events), ${profile.writers} writers, due at fixed times, ${profile.seconds} s per rate; commit → Redis lag from the maintainers' histograms (${stagesHeader}). Held: the rate achieved and lag p99 under 2 s.`,
    "",
    "| target events/s | achieved | applied (+ in a rebuild) | lag p50 ms | lag p99 ms | stages p99 ms | machine CPU µs / event (database, connect, kafka, maintainers) | held |",
    "|---|---|---|---|---|---|---|---|",
    ...steady.results.map(
      (r) =>
        `| ${r.targetPerSecond} | ${r.achievedPerSecond} | ${r.applied}${r.skipped ? ` (+ ${r.skipped})` : ""} | ${r.lagP50Ms ?? "–"} | ${r.lagP99Ms ?? "–"} | ${stagesCell(r.stagesP99Ms)} | ${r.cpuUsPerEvent.machine} (${r.cpuUsPerEvent.database}, ${r.cpuUsPerEvent.connect}, ${r.cpuUsPerEvent.kafka}, ${r.cpuUsPerEvent.maintainers}) | ${r.held ? "yes" : "no"} |`,
    ),
    "",
  ];
}

/** A sold-out sale's PENDING orders all due at once, and the buyers who get their units. */
function deadlineSection(results: Results): string[] {
  const deadline = results.deadline?.data as ResultRow | undefined;
  if (!deadline) return [];
  return [
    "## A payment deadline",
    "",
    `${deadline.profile.orders} PENDING orders of a sold-out sale (${deadline.profile.skus} SKUs) all due at once, the maintainers started with order expiry on, new buyers arriving at ${deadline.profile.buyersPerSecond}/s (open loop): all expired after **${seconds(deadline.expiredAllAfterMs)} s**, the last returned unit sold again after **${seconds(deadline.lastUnitSoldAgainAfterMs)} s** (${deadline.resold} of ${deadline.profile.orders} re-sold); commit → Redis lag p50 / p99 meanwhile ${deadline.lagP50Ms ?? "–"} / ${deadline.lagP99Ms ?? "–"} ms over ${deadline.applied} changes.`,
    "",
  ];
}

/** Every scenario the run measured, in the report's order; charts drawn into `folder`. */
export const scenarioSections = (results: Results, folder: string): string[] => [
  ...decisionSection(results.decision?.data as DecisionResult | undefined),
  ...openLoopSection(results),
  ...stormSections(results, folder),
  ...firstSecondSection(results),
  ...botsSection(results),
  ...queuedSection(results.queued?.data as QueuedResult | undefined),
  ...bigStockSection(results),
  ...catalogueSection(results),
  ...driftSection(results),
  ...microSection(results),
  ...floodSection(results),
  ...cdcSection(results),
  ...cdcSteadySection(results),
  ...deadlineSection(results),
  ...lagSection(results, folder),
  ...topologySection(results),
];
