import { setTimeout as sleep } from "node:timers/promises";
import { redisClient, skuKeys, withScripts } from "@flashgate/cache";
import { createPool } from "@flashgate/db";
import { maintainerEnv, type StackContext } from "@flashgate/stack";
import { reconcile } from "@flashgate/sync";
import { addSkus, createActivity } from "@flashgate/testkit/sale-fixture";
import { startTcpProxy } from "@flashgate/testkit/tcp-proxy";
import type { Pool, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import { appProcess } from "./apps.ts";
import { createBuyers, type KeyRecord } from "./buyers.ts";
import { checkSale, type SaleSupply } from "./checks.ts";
import { type FaultKind, type FaultTargets, faults } from "./faults.ts";
import type { ChaosProfile } from "./profiles.ts";
import { type Random, seededRandom } from "./random.ts";
import { type ChaosReport, type FaultRun, summarise } from "./report.ts";

export interface ChaosOptions {
  seed: number;
  profile: ChaosProfile;
  ctx: StackContext;
  /** The stack's app environment (appEnv). */
  env: Record<string, string>;
  ports: { api: number; maintainer: number };
  log?: (line: string) => void;
}

/** One buyer's part of the plan, drawn from the seed so that a failing seed replays the same sale. */
interface Intent {
  userId: number;
  sku: number;
  /** The same key sent this many times at once (a double click, a retrying proxy). */
  sends: 1 | 2;
  /** The same key again once answered (a reload). */
  resend: boolean;
  /** The same user again with a new key. */
  anotherKey: boolean;
  pay: boolean;
}

const priceCents = 1999;

function plan(random: Random, profile: ChaosProfile) {
  const intents = Array.from(
    { length: 200_000 },
    (): Intent => ({
      userId: random.int(1, profile.users),
      sku: random.int(0, profile.skus - 1),
      sends: random.chance(0.08) ? 2 : 1,
      resend: random.chance(0.1),
      anotherKey: random.chance(0.05),
      pay: random.chance(0.5),
    }),
  );
  // Every kind once in a shuffled round, round after round.
  const schedule: { kind: FaultKind; gapMs: number; holdMs: number }[] = [];
  for (let round = 0; round < 50; round++) {
    const kinds = [...profile.kinds].sort(() => random.next() - 0.5);
    for (const kind of kinds)
      schedule.push({
        kind,
        gapMs: random.int(...profile.faultGapMs),
        holdMs: random.int(...profile.faultHoldMs),
      });
  }
  const units = Array.from({ length: profile.skus }, () => random.int(...profile.units));
  return { intents, schedule, units };
}

/** A DBA at work mid-sale: raw-SQL restocks and closures of pending orders (each unit back once). */
async function dbaAction(pool: Pool, random: Random, sales: SaleSupply[], tally: ChaosReport["dbaActions"]) {
  const sale = random.pick(sales);
  if (random.chance(0.5)) {
    const units = random.int(1, 3);
    await pool.query("UPDATE sale_stock SET available = available + ? WHERE activity_id = ? AND sku_id = ?", [
      units,
      sale.activityId,
      sale.skuId,
    ]);
    sale.supply += units;
    tally.restocks += 1;
    return;
  }
  const connection = await pool.getConnection();
  try {
    await connection.query("START TRANSACTION");
    const [closed] = await connection.query<ResultSetHeader>(
      `UPDATE sale_order SET state = 'CLOSED' WHERE activity_id = ? AND sku_id = ? AND state = 'PENDING'
       ORDER BY created_at LIMIT 1`,
      [sale.activityId, sale.skuId],
    );
    if (closed.affectedRows === 1)
      await connection.query(
        "UPDATE sale_stock SET available = available + 1 WHERE activity_id = ? AND sku_id = ?",
        [sale.activityId, sale.skuId],
      );
    await connection.query("COMMIT");
    if (closed.affectedRows === 1) tally.closures += 1;
  } finally {
    connection.release();
  }
}

/**
 * A seeded, randomised sale under faults: buyers (duplicate keys, reloads, second keys, payments),
 * expiries and a DBA, while processes are killed and stopped, Redis is flushed or out of memory and
 * the database link is cut. Then everything is healed, pending orders are paid, the cache must
 * converge, the units left must sell to new buyers, and MySQL must agree with every answer given.
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const { seed, profile, ctx, env, ports } = options;
  const log = options.log ?? (() => {});
  const random = seededRandom(seed);
  const { intents, schedule, units } = plan(random, profile);
  const activityId = (Date.now() % 1_000_000_000) * 1000 + (seed % 1000);

  const pool = createPool(env.DATABASE_URL, { connectionLimit: 4 });
  const redis = withScripts(redisClient(env.REDIS_URL, { maxRetriesPerRequest: 2 }));
  redis.on("error", () => {});
  const databaseLink = await startTcpProxy(ctx.config.FLASHGATE_DB_PORT);
  const api = appProcess("purchase-api", ports.api, {
    ...env,
    DATABASE_URL: env.DATABASE_URL.replace(`:${ctx.config.FLASHGATE_DB_PORT}/`, `:${databaseLink.port}/`),
    RATE_LIMIT: "1000",
  });
  const maintainer = appProcess("cache-maintainer", ports.maintainer, {
    ...maintainerEnv(env),
    EXPIRY_INTERVAL_MS: "500",
  });
  const targets: FaultTargets = { ctx, api, maintainer, redis, databaseLink };
  const buyers = createBuyers({
    apiUrl: api.url,
    authSecret: env.AUTH_JWT_SECRET,
    paymentSecret: env.PAYMENT_WEBHOOK_SECRET,
    retryBudgetMs: profile.retryBudgetMs,
  });
  const sales: SaleSupply[] = units.map((count, i) => ({ activityId, skuId: i + 1, supply: count }));
  const dbaActions = { restocks: 0, closures: 0 };
  const faultRuns: Omit<FaultRun, "unavailableMs">[] = [];

  try {
    await Promise.all([maintainer.start(), api.start()]);
    await createActivity(pool, {
      activityId,
      name: `chaos ${activityId}`,
      endsAt: new Date(Date.now() + 86_400_000),
      paymentTimeoutS: profile.paymentTimeoutS,
    });
    await addSkus(
      pool,
      activityId,
      units.map((count, i) => ({ skuId: i + 1, units: count, priceCents })),
    );
    log(`chaos seed ${seed}: activity ${activityId}, ${profile.skus} SKUs (${units.join(", ")} units)`);
    // A sale opens once it is set up: its SKUs in the cache (before, a buyer is told to come back while
    // it loads — a 503 that is no fault's).
    const loadedBy = Date.now() + 60_000;
    const skuHashes = units.map((_, i) => skuKeys(activityId, i + 1).sku);
    while ((await redis.exists(...skuHashes)) < skuHashes.length) {
      if (Date.now() > loadedBy) throw new Error("the sale's SKUs were not in the cache within 60 s");
      await sleep(50);
    }
    const started = Date.now();
    const until = started + profile.durationMs;

    let next = 0;
    const buy = async (intent: Intent) => {
      const sku = { activityId, skuId: intent.sku + 1 };
      const key = buyers.newKey(`u${intent.userId}`);
      const [record] = await Promise.all(
        Array.from({ length: intent.sends }, () => buyers.purchase(intent.userId, sku, key)),
      );
      if (intent.resend) await buyers.purchase(intent.userId, sku, record.key);
      if (intent.anotherKey) await buyers.purchase(intent.userId, sku);
      if (intent.pay && hasOrder(record)) await buyers.pay(record, priceCents, "EUR");
    };
    const workers = Array.from({ length: profile.clientsInFlight }, async () => {
      while (Date.now() < until) await buy(intents[next++ % intents.length]);
    });
    const dba = (async () => {
      while (Date.now() < until) {
        await sleep(random.int(1000, 3000));
        await dbaAction(pool, random, sales, dbaActions).catch(() => {});
      }
    })();
    const chaos = (async () => {
      for (const step of schedule) {
        await sleep(step.gapMs);
        if (Date.now() + step.holdMs >= until) return;
        const injectedAt = Date.now();
        const fault = faults[step.kind];
        try {
          await fault.inject(targets);
          await sleep(step.holdMs);
        } finally {
          await fault.heal(targets);
        }
        faultRuns.push({ kind: step.kind, injectedAt, healedAt: Date.now() });
        log(`  ${step.kind}: held ${step.holdMs} ms`);
      }
    })();
    await Promise.all([chaos, dba, ...workers]);
    const durationMs = Date.now() - started;

    // Healed: the storefront pays what is pending, so nothing more expires while the rest is checked.
    await payPending(pool, activityId, buyers.keys, buyers.pay);
    const converging = Date.now();
    let convergeMs: number | null = null;
    while (Date.now() - converging < profile.convergeWithinMs) {
      const check = await reconcile(pool, redis, { activityId, recordIncidents: false, settleMs: 1000 });
      if (check.skus.every((sku) => sku.verdict === "in-sync")) {
        convergeMs = Date.now() - converging;
        break;
      }
      await sleep(500);
    }
    log(`  converged: ${convergeMs === null ? "no" : `${convergeMs} ms`}`);

    const unsold = await sweep(pool, sales, buyers, random, profile.users);
    const checked = await checkSale(pool, sales, buyers.keys);
    const report = summarise({
      seed,
      profile: profile.name,
      activityId,
      durationMs,
      requests: buyers.requests,
      keys: buyers.keys,
      faultRuns,
      dbaActions,
      unsold,
      convergeMs,
      checked,
      convergeWithinMs: profile.convergeWithinMs,
    });
    return report;
  } finally {
    // However the run ended, nothing stays broken for whoever uses the stack next.
    await redis.config("SET", "maxmemory", "0").catch(() => {});
    for (const kind of ["stop-connect", "stop-kafka"] as const)
      await faults[kind].heal(targets).catch(() => {});
    await Promise.all([api.kill("SIGTERM"), maintainer.kill("SIGTERM")]);
    await databaseLink.close();
    await pool.end();
    redis.disconnect();
  }
}

const hasOrder = (record: KeyRecord) => record.answers.some((a) => a.status === 201 || a.status === 200);

async function payPending(
  pool: Pool,
  activityId: number,
  keys: Map<string, KeyRecord>,
  pay: (record: KeyRecord, amountCents: number, currency: string) => Promise<void>,
) {
  const [rows] = await pool.query<RowDataPacket[]>(
    "SELECT order_id, request_id FROM sale_order WHERE activity_id = ? AND state = 'PENDING'",
    [activityId],
  );
  for (const row of rows) {
    // Keys are unique across this run's buyers.
    const record = keys.get(row.request_id);
    if (!record) continue;
    record.orderId ??= row.order_id;
    await pay(record, priceCents, "EUR");
  }
}

/**
 * The units left must sell: with the cache caught up, twice as many new buyers as units left come for
 * each SKU (and pay at once). A unit still there after three rounds was left unsold while demand remained.
 */
async function sweep(
  pool: Pool,
  sales: SaleSupply[],
  buyers: ReturnType<typeof createBuyers>,
  random: Random,
  users: number,
): Promise<number> {
  let user = users + 1 + random.int(0, 1000) * 1000;
  const left = async (sale: SaleSupply) => {
    const [rows] = await pool.query<RowDataPacket[]>(
      "SELECT available FROM sale_stock WHERE activity_id = ? AND sku_id = ?",
      [sale.activityId, sale.skuId],
    );
    return Number(rows[0].available);
  };
  for (let round = 0; round < 3; round++) {
    let any = false;
    await Promise.all(
      sales.map(async (sale) => {
        const units = await left(sale);
        if (units <= 0) return;
        any = true;
        await Promise.all(
          Array.from({ length: units * 2 }, async () => {
            const record = await buyers.purchase(user++, sale);
            if (hasOrder(record)) await buyers.pay(record, priceCents, "EUR");
          }),
        );
      }),
    );
    if (!any) return 0;
  }
  let unsold = 0;
  for (const sale of sales) unsold += Math.max(0, await left(sale));
  return unsold;
}
