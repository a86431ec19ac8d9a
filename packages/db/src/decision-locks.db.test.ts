import { adminConnection } from "@flashgate/stack";
import {
  addSkus,
  createActivity,
  fastDatabaseUrl,
  fastTierContext,
  freshIds,
  skuInDatabase,
  testEngine,
  untilLockWait,
} from "@flashgate/testkit";
import type { Pool, PoolConnection, RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool } from "./pool.ts";
import { type PurchaseInput, placeOrder, placeOrders } from "./purchase.ts";

/**
 * The record and table locks of the one transaction now waiting for a lock, as MySQL's performance_schema
 * lists them (live, where information_schema's view of transactions can be 100 ms old).
 */
async function locksOfTheWaitingTransaction() {
  const admin = await adminConnection(fastTierContext());
  try {
    const [waiting] = await admin.query<RowDataPacket[]>(
      "SELECT requesting_engine_transaction_id AS id FROM performance_schema.data_lock_waits",
    );
    expect(waiting).toHaveLength(1);
    const [rows] = await admin.query<RowDataPacket[]>(
      `SELECT object_name, index_name, lock_type, lock_mode, lock_status, lock_data
         FROM performance_schema.data_locks WHERE engine_transaction_id = ?`,
      [waiting[0].id],
    );
    return rows;
  } finally {
    await admin.end();
  }
}

/** An order written by plain SQL (another instance's decision, a DBA's): key, activity, SKU, user. */
const orderBySql = `INSERT INTO sale_order (request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
  VALUES (?, ?, ?, ?, 'PENDING', 1999, 'EUR', NOW(3), NOW(3) + INTERVAL 1 HOUR)`;

describe(`a decision locks only what it decides (${testEngine})`, () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(fastDatabaseUrl(), { connectionLimit: 8, multipleStatements: true });
  });
  afterAll(async () => pool.end());

  /** An activity of `skus` SKUs, each with `units`; the i-th SKU's id is `skuIds[i]`. */
  async function activityOf(skus: number, units = 5) {
    const { activityId } = freshIds();
    await createActivity(pool, { activityId });
    const skuIds = Array.from({ length: skus }, (_, i) => i + 1);
    await addSkus(
      pool,
      activityId,
      skuIds.map((skuId) => ({ skuId, units })),
    );
    const buyer = (skuId: number, user: number): PurchaseInput => ({
      activityId,
      skuId,
      userId: String(user),
      requestId: `locks-${activityId}-${user}`,
    });
    return { activityId, skuIds, buyer };
  }

  /** Another session's transaction, left open until `end`. */
  async function openTransaction(statements: [string, unknown[]][]) {
    const connection: PoolConnection = await pool.getConnection();
    await connection.query("START TRANSACTION");
    for (const [sql, params] of statements) await connection.query(sql, params);
    return {
      connection,
      async end(how: "COMMIT" | "ROLLBACK") {
        await connection.query(how);
        connection.release();
      },
    };
  }

  /**
   * A decision held open in the middle: another transaction inserted, and has not committed, an order
   * under the same user and key, so the decision's insert waits on that key with its stock row locked.
   */
  async function heldDecision(input: PurchaseInput) {
    const other = await openTransaction([
      [orderBySql, [input.requestId, input.activityId, input.skuId, input.userId]],
    ]);
    // Settled either way, so that a failure is the test's to assert when it releases, never unhandled.
    const decision = placeOrder(pool, input).catch((error: unknown) => ({ kind: "failed", error }) as const);
    await untilLockWait(input.requestId);
    return {
      /** The other transaction rolls back: the held decision goes on. */
      release: async () => {
        await other.end("ROLLBACK");
        return decision;
      },
    };
  }

  // Priced: the SKU sold once before in this pool, so its price is known and the batch takes the priced form.
  for (const [skus, priced] of [
    [1, false],
    [2, false],
    [3, false],
    [1000, false],
    [2, true],
  ] as const) {
    it(`in an activity of ${skus} SKU(s), a ${priced ? "priced " : ""}decision held open holds its own stock row and nothing of the activity${skus > 1 ? ", and a decision for another SKU commits meanwhile" : ""}`, async () => {
      const { activityId, skuIds, buyer } = await activityOf(skus);
      if (priced) expect((await placeOrder(pool, buyer(skuIds[0], 9))).kind).toBe("created");
      const held = await heldDecision(buyer(skuIds[0], 1));
      let released = false;
      try {
        if (testEngine === "mysql") {
          const locks = await locksOfTheWaitingTransaction();
          const records = (table: string) =>
            locks.filter((lock) => lock.object_name === table && lock.lock_type === "RECORD");
          // Its stock row, exclusively; nothing on the activity (no read of the window locks it).
          expect(records("sale_stock").map((lock) => [lock.index_name, lock.lock_data])).toEqual([
            ["PRIMARY", `${activityId}, ${skuIds[0]}`],
          ]);
          expect(locks.filter((lock) => lock.object_name === "activity")).toEqual([]);
          // On the orders, only the wait for the key it is inserting.
          const orders = records("sale_order");
          expect(orders.map((lock) => lock.lock_status)).toEqual(["WAITING"]);
          expect(["one_purchase", "idempotency"]).toContain(orders[0].index_name);
        }
        if (skus > 1) {
          const other = await placeOrder(pool, buyer(skuIds[skus - 1], 2));
          expect(other.kind).toBe("created");
          const neighbour = await placeOrder(pool, buyer(skuIds[1], 3));
          expect(neighbour.kind).toBe("created");
        }
        released = true;
        expect((await held.release()).kind).toBe("created");
      } finally {
        if (!released) await held.release().catch(() => {});
      }
      expect((await skuInDatabase(pool, activityId, skuIds[0])).available).toBe(priced ? 3 : 4);
    }, 30_000);
  }

  /** Deadlocks the server has met since it started (each rolls a transaction back). */
  async function deadlocks(): Promise<number> {
    const admin = await adminConnection(fastTierContext());
    try {
      const [rows] = await admin.query<RowDataPacket[]>(
        testEngine === "mysql"
          ? "SELECT `COUNT` AS n FROM information_schema.INNODB_METRICS WHERE NAME = 'lock_deadlocks'"
          : "SELECT VARIABLE_VALUE AS n FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_DEADLOCKS'",
      );
      return Number(rows[0]?.n);
    } finally {
      await admin.end();
    }
  }

  it("batches of several SKUs each, sharing SKUs and listing them in any order, run eight at once: they queue on the rows and never deadlock", async () => {
    const { activityId, skuIds, buyer } = await activityOf(6, 1000);
    const before = await deadlocks();
    expect(Number.isFinite(before)).toBe(true);
    let user = 0;
    // Each batch: four of the six SKUs, in a random order.
    const batch = () =>
      [...skuIds]
        .sort(() => Math.random() - 0.5)
        .slice(0, 4)
        .map((skuId) => {
          user += 1;
          return buyer(skuId, user);
        });
    const lanes = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const decided: (string | undefined)[] = [];
        for (let i = 0; i < 10; i += 1)
          decided.push(...(await placeOrders(pool, batch())).map((d) => d?.kind));
        return decided;
      }),
    );
    expect(lanes.flat()).toEqual(Array(8 * 10 * 4).fill("created"));
    expect(await deadlocks()).toBe(before);
    const [left] = await pool.query<RowDataPacket[]>(
      "SELECT SUM(available) AS units FROM sale_stock WHERE activity_id = ?",
      [activityId],
    );
    expect(Number(left[0].units)).toBe(6 * 1000 - 8 * 10 * 4);
  }, 60_000);

  it("a DBA's restock left open on one SKU's row holds up no decision for another SKU of the activity", async () => {
    const { activityId, skuIds, buyer } = await activityOf(3);
    const restock = await openTransaction([
      [
        "UPDATE sale_stock SET available = available + 10 WHERE activity_id = ? AND sku_id = ?",
        [activityId, skuIds[1]],
      ],
    ]);
    try {
      expect((await placeOrder(pool, buyer(skuIds[0], 1))).kind).toBe("created");
      expect((await placeOrder(pool, buyer(skuIds[2], 2))).kind).toBe("created");
      const batch = await placeOrders(pool, [buyer(skuIds[0], 3), buyer(skuIds[2], 4)]);
      expect(batch.map((decision) => decision?.kind)).toEqual(["created", "created"]);
    } finally {
      await restock.end("COMMIT");
    }
    expect((await skuInDatabase(pool, activityId, skuIds[1])).available).toBe(15);
  }, 30_000);

  it("a transaction left open on the activity row — a DBA's, a window edit's — holds up no decision: it reads the window as committed", async () => {
    const { activityId, skuIds, buyer } = await activityOf(2);
    const dba = await openTransaction([["SELECT * FROM activity WHERE id = ? FOR UPDATE", [activityId]]]);
    try {
      expect((await placeOrder(pool, buyer(skuIds[0], 1))).kind).toBe("created");
      // The SKU's price now known, its next buyer is decided in the priced form: it waits for nothing either.
      expect((await placeOrder(pool, buyer(skuIds[0], 5))).kind).toBe("created");
    } finally {
      await dba.end("COMMIT");
    }
    // A window edit not yet committed (the sale closed): the committed window, open, still decides.
    const edit = await openTransaction([
      ["UPDATE activity SET ends_at = NOW(3) - INTERVAL 1 SECOND WHERE id = ?", [activityId]],
    ]);
    try {
      const batch = await placeOrders(pool, [buyer(skuIds[0], 2), buyer(skuIds[1], 3)]);
      expect(batch.map((decision) => decision?.kind)).toEqual(["created", "created"]);
      expect((await placeOrder(pool, buyer(skuIds[0], 6))).kind).toBe("created");
    } finally {
      await edit.end("COMMIT");
    }
    // Committed, the closed window refuses.
    expect(await placeOrder(pool, buyer(skuIds[1], 4))).toEqual({ kind: "not_open" });
  }, 30_000);

  it("a decision that loses a deadlock is run again, not failed: a DBA's order by SQL for the same buyer wins, the decision tells the buyer so", async () => {
    const { activityId, skuIds, buyer } = await activityOf(1);
    const input = buyer(skuIds[0], 1);
    // A DBA's transaction that has written much (so InnoDB picks the decision as the victim): an order
    // for the buyer under another key, then its unit taken from the stock row the decision holds.
    const dba = await openTransaction([
      ...Array.from({ length: 40 }, (_, i): [string, unknown[]] => [
        "INSERT INTO stock_ledger (activity_id, sku_id, delta, available_after, reason, operator) VALUES (?, ?, 0, 5, ?, 'dba')",
        [activityId, skuIds[0], `note ${i}`],
      ]),
      [orderBySql, [`dba-${activityId}`, activityId, skuIds[0], input.userId]],
    ]);
    const decision = placeOrder(pool, input).catch((error: unknown) => error);
    try {
      await untilLockWait(input.requestId); // the decision waits on the buyer's order, holding the stock row
      await dba.connection.query(
        "UPDATE sale_stock SET available = available - 1 WHERE activity_id = ? AND sku_id = ?",
        [activityId, skuIds[0]],
      );
    } finally {
      await dba.end("COMMIT");
    }
    expect(await decision).toEqual({ kind: "already_purchased" });
    expect((await skuInDatabase(pool, activityId, skuIds[0])).available).toBe(4);
  }, 30_000);

  it("a batch that meets a duplicate key is run again without the buyer who already bought, and sells to the rest together", async () => {
    const { activityId, skuIds, buyer } = await activityOf(2);
    const buyers = [buyer(skuIds[0], 1), buyer(skuIds[0], 2), buyer(skuIds[1], 3)];
    // Another instance's decision for buyer 2's key, not yet committed when this batch reads who is new,
    // committed while its insert waits on that key.
    const other = await openTransaction([
      [orderBySql, [buyers[1].requestId, activityId, skuIds[0], buyers[1].userId]],
    ]);
    const decisions = placeOrders(pool, buyers);
    await untilLockWait(buyers[1].requestId);
    await other.end("COMMIT");
    expect((await decisions).map((decision) => decision?.kind)).toEqual(["created", "replayed", "created"]);
    expect((await skuInDatabase(pool, activityId, skuIds[0])).available).toBe(4);
    expect((await skuInDatabase(pool, activityId, skuIds[1])).available).toBe(4);
  }, 30_000);
});
