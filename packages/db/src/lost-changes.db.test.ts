import { randomUUID } from "node:crypto";
import { fastDatabaseUrl, freshIds, testEngine } from "@flashgate/testkit";
import type { Pool } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executedGtids, holdsGtid, type LostChange, lostChanges, recordLostChanges } from "./lost-changes.ts";
import { createPool } from "./pool.ts";

describe("lost changes, on the database alone", () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(fastDatabaseUrl(), { connectionLimit: 2 });
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
    expect(await recordLostChanges(pool, [])).toBe(0);
  });

  it("reads the server's executed GTIDs on MySQL (its last transaction is in them), none on MariaDB", async () => {
    if (testEngine === "mariadb") return expect(await executedGtids(pool)).toBeUndefined();
    const [[row]] = (await pool.query(
      "SELECT @@GLOBAL.gtid_executed AS gtids, @@server_uuid AS uuid",
    )) as unknown as [{ gtids: string; uuid: string }[]];
    const last =
      row.gtids
        .replace(/\s/g, "")
        .split(",")
        .find((part) => part.startsWith(row.uuid)) ?? "";
    const number = last.split(/[:-]/).at(-1);
    const executed = await executedGtids(pool);
    expect(executed && holdsGtid(executed, `${row.uuid}:${number}`)).toBe(true);
  });
});
