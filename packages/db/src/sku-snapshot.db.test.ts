import { createSale, eventually, fastDatabaseUrl, freshIds, testEngine } from "@flashgate/testkit";
import type { Pool, RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binlogCoordinates, readBinlogSource } from "./binlog-source.ts";
import { closeOrder } from "./lifecycle.ts";
import { createPool } from "./pool.ts";
import { placeOrder } from "./purchase.ts";
import { readSku, readSkuSnapshot } from "./sku-snapshot.ts";

describe("reading a SKU for the cache, fenced by the binlog, on the database alone", () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(fastDatabaseUrl(), { connectionLimit: 4, multipleStatements: true });
  });
  afterAll(async () => pool.end());

  it("reads stock, price, window, rebuy, admission and the blocking buyers in user order, at a position not after the read", async () => {
    const ids = freshIds();
    const startsAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
    const endsAt = new Date(startsAt.getTime() + 3_600_000);
    await createSale(pool, {
      ...ids,
      units: 5,
      priceCents: 4200,
      startsAt,
      endsAt,
      rebuyAfterClose: true,
      admission: "auto",
    });
    const key = (user: number) => `s-${ids.activityId}-${user}`;
    let lastOrderId = "";
    for (const user of [30, 4, 200]) {
      const decision = await placeOrder(pool, { ...ids, userId: String(user), requestId: key(user) });
      if (decision.kind === "created") lastOrderId = decision.order.orderId;
    }
    // Closed with rebuy allowed: no longer a buyer.
    expect((await closeOrder(pool, lastOrderId)).kind).toBe("closed");
    const before = await binlogCoordinates(pool);
    const snapshot = await readSkuSnapshot(pool, ids.activityId, ids.skuId);
    const after = await binlogCoordinates(pool);
    expect(snapshot).toEqual({
      binlogFile: before.file,
      binlogPos: expect.any(Number),
      available: 3,
      priceCents: 4200,
      currency: "EUR",
      startsAt,
      endsAt,
      rebuyAfterClose: true,
      admission: "auto",
      buyers: ["4", "30"],
      buyerKeys: [key(4), key(30)],
    });
    expect(snapshot?.binlogPos).toBeGreaterThanOrEqual(before.pos);
    expect(snapshot?.binlogPos).toBeLessThanOrEqual(after.pos);
    expect(await readSkuSnapshot(pool, ids.activityId, ids.skuId + 1)).toBeUndefined();
  });

  it("says which row a SKU without a sale lacks, at a coordinate no later than any change that adds it", async () => {
    const ids = freshIds();
    await pool.query(
      "INSERT INTO sale_stock (activity_id, sku_id, available, price_cents, currency) VALUES (?, ?, 1, 100, 'EUR')",
      [ids.activityId, ids.skuId],
    );
    const before = await binlogCoordinates(pool);
    const read = await readSku(pool, ids.activityId, ids.skuId);
    expect(read).toEqual({ absent: "activity", binlogFile: before.file, binlogPos: expect.any(Number) });
    expect(read.binlogPos).toBeGreaterThanOrEqual(before.pos);
    expect(await readSku(pool, ids.activityId, ids.skuId + 1)).toMatchObject({ absent: "stock" });
  });

  it("names the server the binlog comes from, and where it stands", async () => {
    const source = await readBinlogSource(pool);
    expect(source.identity).toMatch(testEngine === "mysql" ? /^\d+\/[0-9a-f-]{36}$/ : /^\d+\/$/);
    expect(source.file).toMatch(/\.\d{6}$/);
    expect(source.pos).toBeGreaterThan(0);
  });

  it("waits for a writer of the SKU in flight, then reads its commit under a coordinate that covers it", async () => {
    const ids = freshIds();
    await createSale(pool, { ...ids, units: 5 });
    const dba = await pool.getConnection();
    try {
      await dba.query("START TRANSACTION");
      await dba.query(
        "UPDATE sale_stock SET available = available + 10 WHERE activity_id = ? AND sku_id = ?",
        [ids.activityId, ids.skuId],
      );
      const uncommitted = await binlogCoordinates(dba);
      const reading = readSkuSnapshot(pool, ids.activityId, ids.skuId);
      // The read waits in its share lock of the stock row, which the restock holds (InnoDB's own lock
      // lists miss a wait during the optimizer's read of a row by its key; the process list shows it).
      await eventually(
        async () => {
          const [sessions] = await pool.query<RowDataPacket[]>("SHOW FULL PROCESSLIST");
          const locking = sessions.filter((session) =>
            /FROM sale_stock[\s\S]*LOCK IN SHARE MODE/.test(session.Info ?? ""),
          );
          expect(locking).toHaveLength(1);
        },
        { timeoutMs: 1500, intervalMs: 20 },
      );
      await dba.query("COMMIT");
      const snapshot = await reading;
      expect(snapshot?.available).toBe(15);
      expect(snapshot?.binlogFile).toBe(uncommitted.file);
      expect(snapshot?.binlogPos).toBeGreaterThan(uncommitted.pos);
    } finally {
      dba.release();
    }
  });
});
