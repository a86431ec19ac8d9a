import { randomUUID } from "node:crypto";
import { adminConnection } from "@flashgate/stack";
import { fastDatabaseUrl, fastTierContext, freshIds, testEngine } from "@flashgate/testkit";
import type { Pool, RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executedGtids, holdsGtid, type LostChange, lostChanges, recordLostChanges } from "./lost-changes.ts";
import { createPool } from "./pool.ts";

describe("lost changes, on the database alone", () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(fastDatabaseUrl("maintainer"), { connectionLimit: 2 });
  });
  afterAll(async () => pool.end());

  it("records each change once however often it is found, and lists it back whole", async () => {
    const { activityId, skuId } = freshIds();
    const gtid = `${randomUUID()}:${Date.now()}`;
    const order: LostChange = {
      gtid,
      binlogPosition: "00000003:0000000010054:000001",
      table: "sale_order",
      op: "c",
      activityId,
      skuId,
      orderId: randomUUID(),
      userId: 42,
      committedAtMs: Date.now() - 1000,
      after: { state: "PENDING", user_id: 42 },
    };
    const stock: LostChange = {
      ...order,
      binlogPosition: "00000003:0000000010054:000000",
      table: "sale_stock",
      op: "u",
      orderId: null,
      userId: null,
      after: { available: 3 },
    };
    expect(await recordLostChanges(pool, [order, stock])).toBe(2);
    expect(await recordLostChanges(pool, [order])).toBe(0);
    const listed = (await lostChanges(pool)).filter((change) => change.gtid === gtid);
    expect(listed.sort((x, y) => x.binlogPosition.localeCompare(y.binlogPosition))).toEqual([stock, order]);
    const recorded = (await lostChanges(pool, { limit: 100_000 })).length;
    expect(await recordLostChanges(pool, [])).toBe(0);
    expect((await lostChanges(pool, { limit: 100_000 })).length).toBe(recorded);
  });

  it("reads the server's executed GTIDs on MySQL as the server judges them (its last transaction in them), none on MariaDB", async () => {
    if (testEngine === "mariadb") return expect(await executedGtids(pool)).toBeUndefined();
    const admin = await adminConnection(fastTierContext());
    try {
      // A transaction of this session, and its GTID as the server stamped it (not read from gtid_executed).
      const probe = randomUUID();
      await admin.query(
        "INSERT INTO flashgate.lost_change (gtid, binlog_position, table_name, op, committed_at) VALUES (?, '', 'probe', 'c', NOW(3))",
        [probe],
      );
      await admin.query("DELETE FROM flashgate.lost_change WHERE gtid = ?", [probe]);
      const [[last]] = await admin.query<RowDataPacket[]>(
        "SELECT GTID AS gtid FROM performance_schema.events_transactions_history WHERE THREAD_ID = PS_CURRENT_THREAD_ID() AND GTID LIKE '%:%' ORDER BY EVENT_ID DESC LIMIT 1",
      );
      const committed = String(last.gtid);
      const [uuid, number] = committed.split(":");
      const executed = await executedGtids(pool);
      const candidates = [
        committed,
        `${uuid}:1`,
        `${uuid}:${BigInt(number) + 1_000_000n}`,
        `${randomUUID()}:1`,
      ];
      for (const gtid of candidates) {
        const [[server]] = await admin.query<RowDataPacket[]>(
          "SELECT GTID_SUBSET(?, @@GLOBAL.gtid_executed) AS held",
          [gtid],
        );
        expect(executed && holdsGtid(executed, gtid), gtid).toBe(Number(server.held) === 1);
      }
      expect(executed && holdsGtid(executed, committed)).toBe(true);
    } finally {
      await admin.end();
    }
  });
});
