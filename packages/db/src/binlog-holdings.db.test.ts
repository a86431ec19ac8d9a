import { randomUUID } from "node:crypto";
import { fastDatabaseUrl, testEngine } from "@flashgate/testkit";
import type { Pool, RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gtidsWithoutLostCommits } from "./binlog-holdings.ts";
import { createPool } from "./pool.ts";

describe("a reader's GTID set after a failover, on the database alone", () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(fastDatabaseUrl(), { connectionLimit: 2 });
  });
  afterAll(async () => pool.end());

  it("takes out only another server's transactions this one lacks; its own missing ones are no failover's", async () => {
    if (testEngine === "mariadb")
      return expect(await gtidsWithoutLostCommits(pool, "0-1-42")).toBeUndefined();
    const [[server]] = await pool.query<RowDataPacket[]>(
      "SELECT REPLACE(@@GLOBAL.gtid_executed, '\\n', '') AS executed, @@server_uuid AS uuid",
    );
    const executed = String(server.executed);
    const oldPrimary = randomUUID();
    // What a reader holds after streaming from the old primary: its lost transactions 7-9 beside this server's.
    const read = `${executed},${oldPrimary}:7-9`;
    expect(await gtidsWithoutLostCommits(pool, read)).toEqual({
      trimmed: executed,
      lost: `${oldPrimary}:7-9`,
    });
    expect(await gtidsWithoutLostCommits(pool, executed)).toBeUndefined();
    // This server's own transaction it does not have: a reset binlog, which trimming would not repair.
    expect(await gtidsWithoutLostCommits(pool, `${read},${server.uuid}:999999999`)).toBeUndefined();
  });
});
