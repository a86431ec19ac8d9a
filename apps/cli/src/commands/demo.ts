import { signJwt, signPayload } from "@flashgate/auth";
import { redisClient, withScripts } from "@flashgate/cache";
import { ApiProblem, createClient, type Order } from "@flashgate/client";
import { createPool, skuDatabaseView } from "@flashgate/db";
import type { StackContext } from "@flashgate/stack";
import { reconcile } from "@flashgate/sync";
import { type Command, InvalidArgumentError } from "commander";
import { localStack } from "../local-stack.ts";

const count = (value: string) => {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError("a positive integer");
  return n;
};

interface DemoOptions {
  skus: number;
  units: number;
  buyers: number;
  concurrency: number;
  json?: boolean;
}

/** Units a DBA adds to SKU 1 by raw SQL mid-sale. */
const restockUnits = 10;

/** What each buyer of the storm was told, counted as the live progress line shows it. */
function tally() {
  const answers = new Map<string, number>();
  const startedAt = Date.now();
  return {
    answers,
    add: (label: string) => answers.set(label, (answers.get(label) ?? 0) + 1),
    line() {
      const total = [...answers.values()].reduce((a, b) => a + b, 0);
      const perSecond = Math.round((total / Math.max(1, Date.now() - startedAt)) * 1000);
      return `${total} requests, ${perSecond}/s — sold ${answers.get("201") ?? 0}, sold out ${answers.get("SOLD_OUT") ?? 0}, other ${total - (answers.get("201") ?? 0) - (answers.get("SOLD_OUT") ?? 0)}`;
    },
  };
}

/**
 * A sale on the running stack, through the API as storefronts and the back-office use it: an activity
 * and SKUs created by the admin API, a storm of buyers (the typed client), a DBA's raw-SQL restock and
 * a closure mid-sale, payments through signed callbacks; then what MySQL and Redis hold, and the drift
 * verdict of every SKU.
 */
async function runDemo(
  ctx: StackContext,
  apiUrl: string,
  options: DemoOptions,
  progress: (line: string) => void,
) {
  const { secrets } = ctx;
  const exp = Math.floor(Date.now() / 1000) + 3600;
  const admin = createClient({
    baseUrl: apiUrl,
    token: signJwt(secrets.adminJwtSecret, { sub: "demo", role: "admin", exp }),
  });
  const activityId = Math.floor(Date.now() / 1000);
  const skuIds = Array.from({ length: options.skus }, (_, i) => i + 1);
  await admin.admin.saveActivity(activityId, {
    name: `flashgate demo ${new Date().toISOString()}`,
    startsAt: new Date(Date.now() - 1000).toISOString(),
    endsAt: new Date(Date.now() + 3_600_000).toISOString(),
    paymentTimeoutS: 900,
  });
  for (const skuId of skuIds)
    await admin.admin.saveSku(activityId, skuId, {
      initialStock: options.units,
      priceCents: 1999,
      currency: "EUR",
    });
  progress(
    `activity ${activityId}: ${options.skus} SKUs × ${options.units} units; waiting for the cache (CDC)…`,
  );
  // A SKU is unknown to the public view (404) until CDC has carried its row to the cache's directory.
  const stateOf = (skuId: number) =>
    admin.skuView(activityId, skuId).then(
      (view) => view.state,
      (error) => {
        if (error instanceof ApiProblem && error.code === "NOT_FOUND") return "NOT_FOUND";
        throw error;
      },
    );
  for (const skuId of skuIds)
    while ((await stateOf(skuId)) !== "OPEN") await new Promise((resolve) => setTimeout(resolve, 100));

  const env = (await localStack()).appEnv(ctx);
  const pool = createPool(env.DATABASE_URL, { connectionLimit: 2 });
  const redis = withScripts(redisClient(env.REDIS_URL, { maxRetriesPerRequest: 1 }));
  try {
    const counts = tally();
    const orders: Order[] = [];
    let next = 0;
    let midSale: Promise<void> | undefined;
    const firstUser = activityId * 1000;
    /** SKU 1's units beyond its first stock: the raw-SQL restock's (and the closed order's), sold once CDC has carried them to the cache. */
    const restock = { units: restockUnits, at: 0, sold: 0, firstSoldAfterMs: null as number | null };
    let soldOfFirst = 0;
    const buy = async (i: number, skuId: number) => {
      const client = createClient({
        baseUrl: apiUrl,
        token: signJwt(secrets.authJwtSecret, { sub: String(firstUser + i), exp }),
      });
      try {
        const { order } = await client.purchase({ activityId, skuId });
        orders.push(order);
        counts.add("201");
        if (skuId === 1 && ++soldOfFirst > options.units) {
          restock.sold = soldOfFirst - options.units;
          restock.firstSoldAfterMs ??= Date.now() - restock.at;
        }
        return true;
      } catch (error) {
        counts.add(error instanceof ApiProblem ? error.code : "network");
        return false;
      }
    };
    const buyer = async () => {
      for (let i = next++; i < options.buyers; i = next++) {
        if (i === Math.floor(options.buyers / 2))
          midSale = (async () => {
            // A DBA's restock in raw SQL, and a closure by the back-office: both reach Redis by CDC.
            await pool.query(
              "UPDATE sale_stock SET available = available + ? WHERE activity_id = ? AND sku_id = 1",
              [restockUnits, activityId],
            );
            restock.at = Date.now();
            const closable = orders.find((order) => order.state === "PENDING");
            if (closable) await admin.admin.closeOrder(closable.orderId);
            progress(
              `mid-sale: +${restockUnits} units on SKU 1 by raw SQL${closable ? `, order ${closable.orderId} closed` : ""}`,
            );
          })();
        await buy(i, skuIds[i % skuIds.length]);
      }
    };
    /**
     * The crowd's last buyers can be answered before CDC has carried the restock to the cache: more come
     * for SKU 1 (a pause after each refusal) until the restocked units are sold, 30 s at most.
     */
    const lateBuyer = async (deadline: number) => {
      while (restock.sold < restockUnits && Date.now() < deadline)
        if (!(await buy(next++, 1))) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    const ticker = setInterval(() => progress(counts.line()), 250);
    await Promise.all(Array.from({ length: options.concurrency }, buyer));
    await midSale;
    const deadline = Date.now() + 30_000;
    await Promise.all(Array.from({ length: options.concurrency }, () => lateBuyer(deadline)));
    clearInterval(ticker);
    progress(counts.line());

    // Half the orders are paid, by the payment provider's signed callbacks.
    const paid = orders.filter((_, i) => i % 2 === 0);
    for (const order of paid) {
      const raw = JSON.stringify({
        eventId: `demo-${order.orderId}`,
        orderId: order.orderId,
        status: "SUCCEEDED",
        amountCents: order.amountCents,
        currency: order.currency,
      });
      await fetch(new URL("/v1/payments/callback", apiUrl), {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "flashgate-signature": signPayload(secrets.paymentWebhookSecret, raw),
        },
        body: raw,
      });
    }

    // Redis has caught up with everything once every SKU reads in-sync (the drift check's own fence).
    let check = await reconcile(pool, redis, { activityId, recordIncidents: false });
    for (
      const deadline = Date.now() + 30_000;
      check.skus.some((sku) => sku.verdict !== "in-sync") && Date.now() < deadline;
    ) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      check = await reconcile(pool, redis, { activityId, recordIncidents: false });
    }
    const skus = [];
    for (const sku of check.skus) {
      const database = await skuDatabaseView(pool, activityId, sku.skuId);
      skus.push({
        skuId: sku.skuId,
        database,
        cacheAvailable: sku.cache?.available ?? null,
        verdict: sku.verdict,
      });
    }
    return {
      activityId,
      restock: { units: restock.units, sold: restock.sold, firstSoldAfterMs: restock.firstSoldAfterMs },
      answers: Object.fromEntries(counts.answers),
      orders: orders.length,
      paid: paid.length,
      skus,
    };
  } finally {
    await pool.end();
    redis.disconnect();
  }
}

export function registerDemoCommand(program: Command) {
  program
    .command("demo")
    .description("run a short sale on the running stack through the API, and show what happened")
    .option("--skus <n>", "SKUs in the sale", count, 3)
    .option("--units <n>", "units per SKU", count, 50)
    .option("--buyers <n>", "buyers, one purchase each", count, 600)
    .option("--concurrency <n>", "buyers at once", count, 50)
    .option("--api <url>", "the purchase API (default: the local stack's)")
    .option("--json", "the summary as JSON on stdout")
    .action(async (options: DemoOptions & { api?: string }) => {
      const ctx = (await localStack()).stackContext();
      const apiUrl = options.api ?? `http://127.0.0.1:${ctx.config.FLASHGATE_API_PORT}`;
      const summary = await runDemo(ctx, apiUrl, options, (line) => process.stderr.write(`\r\x1b[K${line}`));
      process.stderr.write("\n");
      if (options.json) {
        process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
        return;
      }
      process.stdout.write(
        `activity ${summary.activityId}: ${summary.orders} orders, ${summary.paid} paid\n`,
      );
      for (const sku of summary.skus)
        process.stdout.write(
          `  SKU ${sku.skuId}: supply ${sku.database?.supply}, available ${sku.database?.available} (cache ${sku.cacheAvailable}), pending ${sku.database?.pending}, paid ${sku.database?.paid}, closed ${sku.database?.closed} — ${sku.verdict}\n`,
        );
      const { restock } = summary;
      process.stdout.write(
        `restock: +${restock.units} units on SKU 1 by raw SQL mid-sale, ${restock.sold} sold${restock.firstSoldAfterMs === null ? "" : `, the first ${restock.firstSoldAfterMs} ms after its COMMIT (CDC to the cache)`}\n`,
      );
      process.stdout.write(`answers: ${JSON.stringify(summary.answers)}\n`);
      process.stdout.write(
        `dashboard: http://127.0.0.1:${ctx.config.FLASHGATE_DASHBOARD_PORT} (user operator, the password "dashboardPassword" in ${ctx.paths.secrets})\n`,
      );
    });
}
