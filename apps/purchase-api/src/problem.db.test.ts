import { createPool } from "@flashgate/db";
import { adminConnection } from "@flashgate/stack";
import { failureOf, fastDatabaseUrl, fastTierContext, freshIds } from "@flashgate/testkit";
import type { Pool } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorReply } from "./problem.ts";

describe("a database that refuses for now is a 503 on every route, not a 500", () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(fastDatabaseUrl(), { connectionLimit: 2 });
  });
  afterAll(async () => pool.end());

  const reply = (error: unknown) => {
    const logged: unknown[] = [];
    return { ...errorReply(error, "trace-1", (e) => logged.push(e)), logged };
  };

  it("a write on a read-only server (a demoted primary)", async () => {
    const admin = await adminConnection(fastTierContext());
    // Alone on this server (the database tier runs no Debezium), so nothing else is refused meanwhile.
    await admin.query("SET GLOBAL read_only = ON");
    const { activityId } = freshIds();
    const error = await failureOf(
      pool.query("INSERT INTO activity (id, name, starts_at, ends_at) VALUES (?, 'ro', NOW(3), NOW(3))", [
        activityId,
      ]),
    ).finally(() => admin.query("SET GLOBAL read_only = OFF").finally(() => admin.end()));
    expect(error).toBeDefined();
    expect(reply(error)).toMatchObject({ status: 503, headers: { "retry-after": "2" }, logged: [] });
  });

  it("a statement that waited too long for a lock", async () => {
    const { activityId } = freshIds();
    await pool.query(
      "INSERT INTO activity (id, name, starts_at, ends_at) VALUES (?, 'lock', NOW(3), NOW(3) + INTERVAL 1 HOUR)",
      [activityId],
    );
    const [holder, waiter] = [await pool.getConnection(), await pool.getConnection()];
    try {
      await holder.query("START TRANSACTION");
      await holder.query("UPDATE activity SET name = 'held' WHERE id = ?", [activityId]);
      await waiter.query("SET SESSION innodb_lock_wait_timeout = 1");
      const error = await failureOf(
        waiter.query("UPDATE activity SET name = 'late' WHERE id = ?", [activityId]),
      );
      expect(reply(error)).toMatchObject({ status: 503, logged: [] });
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
      waiter.release();
    }
  });
});
