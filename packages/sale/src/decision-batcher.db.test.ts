import { createPool, placeOrder } from "@flashgate/db";
import {
  createSale,
  fastDatabaseUrl,
  freshIds,
  skuInDatabase,
  sold,
  untilLockWait,
} from "@flashgate/testkit";
import type { Pool } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TransactionOutcome } from "./decision-batcher.ts";
import { createDecisionBatcher } from "./decision-batcher.ts";
import { createOverloadGuard, OverloadedError } from "./overload-guard.ts";

describe("decision batcher (group commit on the hot row, real database)", () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(fastDatabaseUrl(), { connectionLimit: 4, multipleStatements: true });
  });
  afterAll(async () => pool.end());

  const batcher = (maxBatch = 50, gatherMs = 0, maxConcurrent = 8) => {
    const transactions: TransactionOutcome[] = [];
    const decisions = createDecisionBatcher({
      pool,
      guard: createOverloadGuard({ maxInFlight: 8, maxQueue: 256, maxWaitMs: 2000 }),
      maxBatch,
      maxConcurrent,
      maxWaitMs: 5000,
      gatherMs,
      onTransaction: (outcome) => transactions.push(outcome),
    });
    return { decisions, transactions };
  };
  const buyer = (sale: { activityId: number; skuId: number }, user: number) => ({
    ...sale,
    userId: String(user),
    requestId: `batch-${sale.activityId}-${user}`,
  });

  it("60 buyers at once for 40 units: exactly 40 orders, 20 sold out, fewer transactions than buyers", async () => {
    const sale = freshIds();
    await createSale(pool, { ...sale, units: 40 });
    const { decisions, transactions } = batcher(25);
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => decisions.decide(buyer(sale, 7_000_000 + i))),
    );
    const kinds = results.map((decision) => decision.kind);
    expect(kinds.filter((kind) => kind === "created")).toHaveLength(40);
    expect(kinds.filter((kind) => kind === "sold_out")).toHaveLength(20);
    results.forEach((decision, i) => {
      if (decision.kind === "created") expect(decision.order.userId).toBe(String(7_000_000 + i));
    });
    const ledger = await skuInDatabase(pool, sale.activityId, sale.skuId);
    expect(ledger.available).toBe(0);
    expect(sold(ledger)).toBe(40);
    // A lone first buyer, a full batch of 25, then 34 buyers for 14 units: that batch is decided alone.
    expect(transactions.length).toBeLessThan(60);
  });

  it("a batch holding a buyer who already bought: that one is refused, the others get their units", async () => {
    const sale = freshIds();
    await createSale(pool, { ...sale, units: 10 });
    expect((await placeOrder(pool, buyer(sale, 42))).kind).toBe("created");
    const { decisions } = batcher();
    const results = await Promise.all([
      decisions.decide(buyer(sale, 1)),
      decisions.decide(buyer(sale, 2)),
      decisions.decide({ ...buyer(sale, 42), requestId: `batch-${sale.activityId}-42-again` }),
      decisions.decide(buyer(sale, 3)),
      decisions.decide(buyer(sale, 42)), // the first purchase's key again: a replay
    ]);
    expect(results.map((decision) => decision.kind)).toEqual([
      "created",
      "created",
      "already_purchased",
      "created",
      "replayed",
    ]);
    const ledger = await skuInDatabase(pool, sale.activityId, sale.skuId);
    expect(ledger.available).toBe(6);
    expect(sold(ledger)).toBe(4);
  });

  it("the same user and key twice while undecided (a double click, a retry after a timeout) share one decision, and their batch commits once: the first request is told it created the order, the second that it exists", async () => {
    const sale = freshIds();
    await createSale(pool, { ...sale, units: 10 });
    // One transaction at a time: while the first buyer's runs, the others wait for the next one.
    const { decisions, transactions } = batcher(10, 0, 1);
    const first = decisions.decide(buyer(sale, 1));
    const rest = [2, 3, 3, 4].map((user) => decisions.decide(buyer(sale, user)));
    const results = [await first, ...(await Promise.all(rest))];
    expect(results.map((decision) => decision.kind)).toEqual([
      "created",
      "created",
      "created",
      "replayed",
      "created",
    ]);
    const [, , a, b] = results as Extract<(typeof results)[number], { order: unknown }>[];
    expect(a.order.orderId).toBe(b.order.orderId);
    expect(transactions).toEqual(["committed", "committed"]);
    expect((await skuInDatabase(pool, sale.activityId, sale.skuId)).available).toBe(6);
  });

  it("one key sent at once to two instances (two batchers, two transactions): one is told created, the other its order", async () => {
    const sale = freshIds();
    await createSale(pool, { ...sale, units: 10 });
    const [one, two] = [batcher(), batcher()];
    const keys = [1, 2, 3, 4, 5, 6, 7, 8];
    const results = await Promise.all(
      keys.flatMap((user) => [
        one.decisions.decide(buyer(sale, user)),
        two.decisions.decide(buyer(sale, user)),
      ]),
    );
    for (const [i] of keys.entries()) {
      const pair = [results[2 * i], results[2 * i + 1]];
      expect(pair.map((decision) => decision.kind).sort()).toEqual(["created", "replayed"]);
      const [x, y] = pair as Extract<(typeof results)[number], { order: unknown }>[];
      expect(x.order.orderId).toBe(y.order.orderId);
    }
    expect(sold(await skuInDatabase(pool, sale.activityId, sale.skuId))).toBe(keys.length);
  });

  it("a closed sale refuses the whole batch and sells nothing", async () => {
    const sale = freshIds();
    await createSale(pool, { ...sale, units: 10, endsAt: new Date(Date.now() - 1000) });
    const { decisions } = batcher();
    const results = await Promise.all([1, 2, 3].map((user) => decisions.decide(buyer(sale, user))));
    expect(results.map((decision) => decision.kind)).toEqual(["not_open", "not_open", "not_open"]);
    expect((await skuInDatabase(pool, sale.activityId, sale.skuId)).available).toBe(10);
  });

  it("right after a batch, the buyers coming back are gathered into one transaction, which goes once full", async () => {
    const sale = freshIds();
    await createSale(pool, { ...sale, units: 10 });
    const { decisions, transactions } = batcher(2, 3_000);
    expect((await decisions.decide(buyer(sale, 1))).kind).toBe("created"); // alone, at once
    // The next buyers come back a client round trip later, one after the other (the stimulus, not a wait).
    const later = (ms: number, user: number) =>
      new Promise<void>((resolve) => setTimeout(resolve, ms)).then(() => decisions.decide(buyer(sale, user)));
    const started = performance.now();
    const results = await Promise.all([later(20, 2), later(60, 3)]);
    expect(results.map((decision) => decision.kind)).toEqual(["created", "created"]);
    expect(transactions).toEqual(["committed", "committed"]);
    // A full batch does not wait out the gathering window.
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it("decides buyers of different SKUs in batches of their own SKU, at the same time", async () => {
    const [a, b] = [freshIds(), freshIds()];
    for (const sale of [a, b]) await createSale(pool, { ...sale, units: 5 });
    const { decisions, transactions } = batcher(10);
    const results = await Promise.all(
      [1, 2, 3].flatMap((user) => [decisions.decide(buyer(a, user)), decisions.decide(buyer(b, user))]),
    );
    expect(results.map((decision) => decision.kind)).toEqual(Array(6).fill("created"));
    expect(transactions.every((outcome) => outcome === "committed")).toBe(true);
  });

  it("decides buyers of an activity's many SKUs together: a catalogue shares transactions", async () => {
    const first = freshIds();
    const skus = Array.from({ length: 20 }, (_, i) => ({
      activityId: first.activityId,
      skuId: first.skuId + i,
    }));
    for (const sku of skus) await createSale(pool, { ...sku, units: 2 });
    // One transaction at a time: while the first buyer's runs, the other 39 wait for the next one.
    const { decisions, transactions } = batcher(50, 0, 1);
    const round = (user: number) =>
      Promise.all(
        skus.map((sku) =>
          decisions.decide({ ...buyer(sku, user), requestId: `cat-${sku.activityId}-${sku.skuId}-${user}` }),
        ),
      );
    const bought = [...(await Promise.all([round(1), round(2)]))].flat();
    expect(bought.map((decision) => decision.kind)).toEqual(Array(40).fill("created"));
    expect(transactions).toEqual(["committed", "committed"]);
    expect((await round(3)).map((decision) => decision.kind)).toEqual(Array(20).fill("sold_out"));
    for (const sku of skus) expect((await skuInDatabase(pool, sku.activityId, sku.skuId)).available).toBe(0);
  });

  it("while a transaction runs, buyers of an activity's many SKUs gather into the next one rather than each taking a slot", async () => {
    const first = freshIds();
    const skus = Array.from({ length: 20 }, (_, i) => ({
      activityId: first.activityId,
      skuId: first.skuId + i,
    }));
    for (const sku of skus) await createSale(pool, { ...sku, units: 1 });
    // Eight slots free: without the gathering each buyer after the first would take one of them.
    const { decisions, transactions } = batcher(50, 200, 8);
    const bought = await Promise.all(
      skus.map((sku) =>
        decisions.decide({ ...buyer(sku, 1), requestId: `gather-${sku.activityId}-${sku.skuId}` }),
      ),
    );
    expect(bought.map((decision) => decision.kind)).toEqual(Array(20).fill("created"));
    // The first alone, to an idle database; the other 19 together.
    expect(transactions).toEqual(["committed", "committed"]);
  });

  it("after a batch, a lone buyer goes once the gathering window has passed", async () => {
    const sale = freshIds();
    await createSale(pool, { ...sale, units: 5 });
    const { decisions, transactions } = batcher(10, 50);
    expect((await decisions.decide(buyer(sale, 1))).kind).toBe("created");
    expect((await decisions.decide(buyer(sale, 2))).kind).toBe("created");
    expect(transactions).toEqual(["committed", "committed"]);
  });

  it("buyers who waited longer than maxWaitMs behind a held row are answered overloaded, without a transaction", async () => {
    const sale = freshIds();
    await createSale(pool, { ...sale, units: 5 });
    const transactions: TransactionOutcome[] = [];
    const decisions = createDecisionBatcher({
      pool,
      guard: createOverloadGuard({ maxInFlight: 8, maxQueue: 256, maxWaitMs: 2000 }),
      maxBatch: 10,
      maxConcurrent: 8,
      maxWaitMs: 1,
      gatherMs: 0,
      onTransaction: (outcome) => transactions.push(outcome),
    });
    const blocker = await pool.getConnection();
    await blocker.query("START TRANSACTION");
    await blocker.query("SELECT * FROM sale_stock WHERE activity_id = ? AND sku_id = ? FOR UPDATE", [
      sale.activityId,
      sale.skuId,
    ]);
    const first = decisions.decide(buyer(sale, 1));
    const queued = [2, 3].map((user) => decisions.decide(buyer(sale, user)).catch((error: unknown) => error));
    // The first buyer's transaction waits on the row; the others wait behind it, longer than 1 ms.
    try {
      await untilLockWait();
    } finally {
      await blocker.query("ROLLBACK");
      blocker.release();
    }
    expect((await first).kind).toBe("created");
    for (const refused of await Promise.all(queued)) {
      expect(refused).toBeInstanceOf(OverloadedError);
      expect((refused as Error).message).toBe("waited too long for a database slot");
    }
    expect(transactions).toEqual(["committed"]);
    expect(sold(await skuInDatabase(pool, sale.activityId, sale.skuId))).toBe(1);
  });
});
