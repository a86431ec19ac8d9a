import { databaseName } from "@flashgate/db";
import { adminConnection, down, silentProgress, stackContext, up } from "@flashgate/stack";
import { freshIds, saleChangesOf, stackEnv } from "@flashgate/testkit";
import { describe, expect, it } from "vitest";

const changesOf = async (sku: { activityId: number; skuId: number }, count: number) =>
  (await saleChangesOf(sku, count, { settleMs: 2000 })).map((change) => ({
    op: change.op,
    available: change.after?.available,
  }));

describe("state survives down/up", () => {
  it("the connector resumes from its offset: each change once, no second snapshot", async () => {
    const ctx = stackContext({ env: stackEnv(), progress: silentProgress });
    const { activityId, skuId } = freshIds();
    const db = await adminConnection(ctx);
    await db.query(`USE ${databaseName}`);
    await db.query(
      "INSERT INTO sale_stock (activity_id, sku_id, available, price_cents, currency) VALUES (?, ?, 1, 100, 'EUR')",
      [activityId, skuId],
    );
    expect(await changesOf({ activityId, skuId }, 1)).toEqual([{ op: "c", available: 1 }]);

    await down(ctx, { only: ["connect", "kafka"] });
    await db.query("UPDATE sale_stock SET available = 2 WHERE activity_id = ? AND sku_id = ?", [
      activityId,
      skuId,
    ]);
    await db.end();
    await up(ctx, { withApps: false });

    const changes = await changesOf({ activityId, skuId }, 2);
    expect(changes).toEqual([
      { op: "c", available: 1 },
      { op: "u", available: 2 },
    ]);
  });
});
