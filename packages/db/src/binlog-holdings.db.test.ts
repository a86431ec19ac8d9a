import { randomUUID } from "node:crypto";
import { fastDatabaseUrl, testEngine } from "@flashgate/testkit";
import type { Pool, RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binlogPositionLost, gtidsWithoutLostCommits } from "./binlog-holdings.ts";
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

  it("judges a reader's position by the server's own binlog: held at the server's position, lost ahead of it or in a file it lacks", async () => {
    const [logs] = await pool.query<RowDataPacket[]>("SHOW BINARY LOGS");
    const newest = logs[logs.length - 1];
    const held = { file: String(newest.Log_name), pos: Number(newest.File_size) };
    expect(await binlogPositionLost(pool, held)).toBeUndefined();
    expect(await binlogPositionLost(pool, { ...held, pos: held.pos + 1 })).toMatch(/bytes, the reader is at/);
    expect(await binlogPositionLost(pool, { file: `${held.file}9`, pos: 4 })).toMatch(/is not on the server/);

    if (testEngine === "mariadb") {
      // Debezium's MariaDB position: a domain-server-sequence list, judged by each domain's sequence.
      const [[server]] = await pool.query<RowDataPacket[]>("SELECT @@GLOBAL.gtid_binlog_pos AS pos");
      const position = String(server.pos);
      expect(position).toMatch(/^\d+-\d+-\d+/);
      expect(await binlogPositionLost(pool, { gtids: position })).toBeUndefined();
      const ahead = position.replace(/-(\d+)(,|$)/g, (_, seq, end) => `-${BigInt(seq) + 1000n}${end}`);
      expect(await binlogPositionLost(pool, { gtids: ahead })).toMatch(/ahead of the server's/);
      // A failover's lost transactions are no MariaDB notion here: nothing to take out of its list.
      expect(await gtidsWithoutLostCommits(pool, position)).toBeUndefined();
      return;
    }
    const [[server]] = await pool.query<RowDataPacket[]>(
      "SELECT REPLACE(@@GLOBAL.gtid_executed, '\\n', '') AS executed, @@server_uuid AS uuid",
    );
    expect(await binlogPositionLost(pool, { gtids: String(server.executed) })).toBeUndefined();
    expect(await binlogPositionLost(pool, { gtids: `${server.executed},${server.uuid}:999999999` })).toMatch(
      /not within the server's/,
    );
  });
});
