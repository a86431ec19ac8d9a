import { createPool, type PurchaseInput, placeOrders } from "@flashgate/db";
import {
  adminConnection,
  appEnv,
  type DatabaseEngine,
  databaseEngines,
  down,
  readPid,
  type StackContext,
  sideStackHome,
  silentProgress,
  stackContext,
  up,
} from "@flashgate/stack";
import { freePort } from "@flashgate/testkit";
import type { Pool, RowDataPacket } from "mysql2/promise";
import { databaseFacts } from "../lib/env.ts";
import { percentile } from "../lib/load.ts";
import { createCatalogue } from "../lib/sale.ts";
import { cpuMsOf } from "../lib/systems.ts";
import { demand } from "./catalogue.ts";

/**
 * The floor of a durable decision: the same buyers decided with the least work a transaction can do for
 * them on the same server — the stock rows locked in key order, a multi-row INSERT of the orders, each
 * stock row decremented by primary key, COMMIT (two round trips) — on an order table with an integer
 * clustered key, the two unique keys every design needs (one purchase per user and key, one live purchase
 * per user and SKU), the expiry index, and no trigger.
 */
const floorSchema = [
  `CREATE TABLE IF NOT EXISTS bench_floor_stock (
     activity_id BIGINT NOT NULL, sku_id BIGINT NOT NULL, available INT NOT NULL,
     price_cents BIGINT NOT NULL, currency CHAR(3) NOT NULL, PRIMARY KEY (activity_id, sku_id)) ENGINE=InnoDB`,
  `CREATE TABLE IF NOT EXISTS bench_floor_order (
     id BIGINT AUTO_INCREMENT PRIMARY KEY,
     request_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
     activity_id BIGINT NOT NULL, sku_id BIGINT NOT NULL, user_id BIGINT NOT NULL,
     state ENUM('PENDING','PAID','CLOSED') NOT NULL, amount_cents BIGINT NOT NULL, currency CHAR(3) NOT NULL,
     created_at DATETIME(3) NOT NULL, expires_at DATETIME(3) NOT NULL,
     closed_seq BIGINT UNSIGNED NOT NULL DEFAULT 0,
     UNIQUE KEY idempotency (user_id, request_id),
     UNIQUE KEY one_purchase (activity_id, sku_id, user_id, closed_seq),
     KEY pending_expiry (state, expires_at)) ENGINE=InnoDB`,
];

async function floorDecision(pool: Pool, buyers: PurchaseInput[]): Promise<number> {
  const { activityId } = buyers[0];
  const demand = new Map<number, number>();
  for (const buyer of buyers) demand.set(buyer.skuId, (demand.get(buyer.skuId) ?? 0) + 1);
  const skus = [...demand.keys()].sort((a, b) => a - b);
  const connection = await pool.getConnection();
  try {
    const [results] = (await connection.query(
      `START TRANSACTION; SELECT sku_id, available, price_cents, currency FROM bench_floor_stock
        WHERE activity_id = ? AND sku_id IN (${skus.map(() => "?").join(", ")}) ORDER BY sku_id FOR UPDATE`,
      [activityId, ...skus],
    )) as unknown as [unknown[]];
    const rows = new Map((results[1] as RowDataPacket[]).map((row) => [Number(row.sku_id), row]));
    const sold = buyers.filter(
      (buyer) => Number(rows.get(buyer.skuId)?.available) >= Number(demand.get(buyer.skuId)),
    );
    const soldSkus = skus.filter((sku) => Number(rows.get(sku)?.available) >= Number(demand.get(sku)));
    const statements = [
      ...(sold.length > 0
        ? [
            `INSERT INTO bench_floor_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at) VALUES ${sold
              .map(() => "(?, ?, ?, ?, 'PENDING', ?, ?, NOW(3), NOW(3) + INTERVAL 900 SECOND)")
              .join(", ")}`,
          ]
        : []),
      ...soldSkus.map(
        () => "UPDATE bench_floor_stock SET available = available - ? WHERE activity_id = ? AND sku_id = ?",
      ),
      "COMMIT",
    ];
    await connection.query(statements.join("; "), [
      ...sold.flatMap((buyer) => {
        const row = rows.get(buyer.skuId) as RowDataPacket;
        return [buyer.requestId, activityId, buyer.skuId, buyer.userId, row.price_cents, row.currency];
      }),
      ...soldSkus.flatMap((sku) => [demand.get(sku), activityId, sku]),
    ]);
    return sold.length;
  } catch (error) {
    await connection.query("ROLLBACK");
    throw error;
  } finally {
    connection.release();
  }
}

async function flashgateDecision(pool: Pool, buyers: PurchaseInput[]): Promise<number> {
  const decisions = await placeOrders(pool, buyers);
  return decisions.filter((decision) => decision?.kind === "created").length;
}

interface DecisionCase {
  name: string;
  skus: number;
  buyersPerTransaction: number;
  /** Transactions at once (flashgate's batcher keeps one SKU in one transaction at a time). */
  atOnce: number;
}

const decisionCases: DecisionCase[] = [
  { name: "one SKU, 1 buyer per tx, 2 at once", skus: 1, buyersPerTransaction: 1, atOnce: 2 },
  { name: "one SKU, 10 buyers per tx", skus: 1, buyersPerTransaction: 10, atOnce: 1 },
  { name: "one SKU, 50 buyers per tx", skus: 1, buyersPerTransaction: 50, atOnce: 1 },
  { name: "1,000 SKUs (Zipf), 2 buyers per tx, 8 at once", skus: 1000, buyersPerTransaction: 2, atOnce: 8 },
  { name: "1,000 SKUs (Zipf), 10 buyers per tx, 4 at once", skus: 1000, buyersPerTransaction: 10, atOnce: 4 },
];

interface DecisionRow {
  engine: DatabaseEngine;
  case: string;
  design: "flashgate" | "floor";
  round: number;
  transactions: number;
  orders: number;
  ordersPerSecond: number;
  mysqldUsPerTransaction: number;
  mysqldUsPerOrder: number;
}

let nextUser = Date.now() * 1000;
let nextActivity = Math.floor(Date.now() / 1000) * 100;

/** One case for one design: `atOnce` loops, each deciding fresh buyers back to back for `ms`. */
async function runCase(
  pool: Pool,
  pid: number,
  design: DecisionRow["design"],
  testCase: DecisionCase,
  ms: number,
) {
  nextActivity += 1;
  const activityId = nextActivity;
  const units = 1_000_000_000;
  if (design === "flashgate") await createCatalogue(pool, activityId, testCase.skus, units);
  else
    await pool.query(
      `INSERT INTO bench_floor_stock (activity_id, sku_id, available, price_cents, currency) VALUES ${Array.from(
        { length: testCase.skus },
        (_, i) => `(${activityId}, ${i + 1}, ${units}, 1000, 'EUR')`,
      ).join(", ")}`,
    );
  // The catalogue's demand (Zipf, exponent 1.1, seeded: both designs get the same SKUs in turn).
  const { skuOf } = demand({ skus: testCase.skus, zipf: 1.1, requests: 100_000, users: 1 });
  let drawn = 0;
  const sku = () => skuOf[drawn++ % skuOf.length];
  const decide = design === "flashgate" ? flashgateDecision : floorDecision;
  const batch = (): PurchaseInput[] => {
    // A batch holds one buyer per user; in the catalogue, each SKU drawn by its demand.
    const skuId = sku();
    return Array.from({ length: testCase.buyersPerTransaction }, () => {
      nextUser += 1;
      return {
        activityId,
        skuId: testCase.skus === 1 || testCase.buyersPerTransaction <= 2 ? skuId : sku(),
        userId: String(nextUser),
        requestId: `d-${nextUser}`,
      };
    });
  };
  let transactions = 0;
  let orders = 0;
  const cpuBefore = cpuMsOf(pid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: testCase.atOnce }, async () => {
      while (performance.now() - started < ms) {
        // Read after the await: `orders += await …` would add to the count as it was before the wait.
        const sold = await decide(pool, batch());
        orders += sold;
        transactions += 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuUs = (cpuMsOf(pid) - cpuBefore) * 1000;
  return {
    transactions,
    orders,
    ordersPerSecond: Math.round(orders / seconds),
    mysqldUsPerTransaction: Math.round(cpuUs / transactions),
    mysqldUsPerOrder: Math.round(cpuUs / orders),
  };
}

/** A database alone, migrated, with production durability, on a free port of the bench's side home. */
async function startDatabase(engine: DatabaseEngine): Promise<StackContext> {
  const ctx = stackContext({
    env: {
      FLASHGATE_HOME: sideStackHome("bench-decision", engine),
      FLASHGATE_DB: engine,
      FLASHGATE_DB_PORT: String(await freePort()),
    },
    progress: silentProgress,
  });
  await up(ctx, { only: ["database"] });
  return ctx;
}

/**
 * flashgate's decision beside the floor of the same buyers, on the same server, rounds alternating which
 * goes first: mysqld's CPU per transaction and per order (from /proc, over each case), and orders/s.
 */
export async function decisionScenario(
  engines: DatabaseEngine[],
  profile: { seconds: number; rounds: number; cases?: DecisionCase[] },
  log: (line: string) => void,
) {
  const rows: DecisionRow[] = [];
  const facts: Record<string, string> = {};
  for (const engine of engines) {
    const ctx = await startDatabase(engine);
    const pool = createPool(appEnv(ctx).DATABASE_URL, { connectionLimit: 16, multipleStatements: true });
    try {
      // The floor's tables are the bench's: made by root, written by the apps' account.
      const admin = await adminConnection(ctx);
      try {
        const [[account]] = await pool.query<RowDataPacket[]>(
          "SELECT CURRENT_USER() AS name, DATABASE() AS db",
        );
        const [user, host] = String(account.name).split("@");
        for (const statement of floorSchema)
          await admin.query(
            statement.replaceAll("TABLE IF NOT EXISTS ", `TABLE IF NOT EXISTS ${account.db}.`),
          );
        for (const table of ["bench_floor_stock", "bench_floor_order"])
          await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${account.db}.${table} TO ?@?`, [
            user,
            host,
          ]);
      } finally {
        await admin.end();
      }
      facts[engine] = await databaseFacts(pool, engine);
      const pid = readPid(ctx.paths.pids, "database");
      if (pid === undefined) throw new Error(`the ${engine} database is not running`);
      for (const testCase of profile.cases ?? decisionCases)
        for (let round = 1; round <= profile.rounds; round += 1) {
          const designs: DecisionRow["design"][] =
            round % 2 ? ["flashgate", "floor"] : ["floor", "flashgate"];
          for (const design of designs) {
            const figures = await runCase(pool, pid, design, testCase, profile.seconds * 1000);
            rows.push({ engine, case: testCase.name, design, round, ...figures });
            log(`  ${engine} ${testCase.name} ${design} round ${round}: ${JSON.stringify(figures)}`);
          }
        }
    } finally {
      await pool.end();
      await down(ctx, { only: ["database"] });
    }
  }
  return { facts, profile, rows };
}

export type DecisionResult = Awaited<ReturnType<typeof decisionScenario>>;

/** Per engine and case, flashgate's mysqld CPU per transaction over the floor's, each round on its own. */
function decisionRatios(result: DecisionResult) {
  const ratios = new Map<string, number[]>();
  for (const row of result.rows.filter((r) => r.design === "flashgate")) {
    const floor = result.rows.find(
      (r) => r.design === "floor" && r.engine === row.engine && r.case === row.case && r.round === row.round,
    );
    if (!floor) continue;
    const key = `${row.engine}\t${row.case}`;
    ratios.set(key, [...(ratios.get(key) ?? []), row.mysqldUsPerTransaction / floor.mysqldUsPerTransaction]);
  }
  return ratios;
}

/** The goal: ≤ 1.25× the floor in every case, on each engine (its worst case's median over the rounds). */
export function decisionGoals(result: DecisionResult | undefined) {
  const ratios = result ? decisionRatios(result) : new Map<string, number[]>();
  return databaseEngines.map((engine) => {
    const cases = [...ratios]
      .filter(([key]) => key.startsWith(`${engine}\t`))
      .map(([, values]) =>
        percentile(
          [...values].sort((a, b) => a - b),
          50,
        ),
      );
    return {
      what: `decision (${engine}): flashgate ÷ the floor, mysqld CPU per transaction, its worst case`,
      values: cases.length ? [Math.max(...cases)] : [],
      target: 1.25,
      atMost: true,
    };
  });
}

export function decisionSection(result: DecisionResult | undefined): string[] {
  if (!result) return [];
  const ratios = decisionRatios(result);
  const figures = (engine: string, name: string, design: DecisionRow["design"]) =>
    result.rows.filter((r) => r.engine === engine && r.case === name && r.design === design);
  const range = (values: number[], digits = 0) => {
    const [low, high] = [Math.min(...values), Math.max(...values)];
    const f = (v: number) =>
      v.toLocaleString("en", { maximumFractionDigits: digits, minimumFractionDigits: digits });
    return low === high ? f(low) : `${f(low)}–${f(high)}`;
  };
  const lines = [
    "## The decision at the database's floor",
    "",
    `The same new buyers decided by flashgate's decision (\`placeOrders\`, its schema, triggers and all) and by the floor — the least a durable decision of them can cost on the same server: the stock rows locked in key order, a multi-row INSERT, each stock row decremented by primary key, COMMIT, on an order table with an integer key, the two unique keys and the expiry index, no trigger. Each case ${result.profile.seconds} s per design, ${result.profile.rounds} round(s), the designs' order alternating; mysqld's CPU from /proc over each case. Databases alone, started for this scenario: ${Object.values(result.facts).join("; ")}.`,
    "",
    "| engine | case | flashgate µs/tx | floor µs/tx | flashgate ÷ floor | flashgate orders/s | floor orders/s |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const [key, values] of ratios) {
    const [engine, name] = key.split("\t");
    const [ours, floor] = [figures(engine, name, "flashgate"), figures(engine, name, "floor")];
    lines.push(
      `| ${engine} | ${name} | ${range(ours.map((r) => r.mysqldUsPerTransaction))} | ${range(floor.map((r) => r.mysqldUsPerTransaction))} | ${range(values, 2)}× | ${range(ours.map((r) => r.ordersPerSecond))} | ${range(floor.map((r) => r.ordersPerSecond))} |`,
    );
  }
  lines.push("");
  return lines;
}
