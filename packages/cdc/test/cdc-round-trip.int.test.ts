import { databaseName } from "@flashgate/db";
import { adminConnection } from "@flashgate/stack";
import { freshIds, saleChangesOf, testContext } from "@flashgate/testkit";
import { describe, expect, it } from "vitest";

// Read by the Node client (@platformatic/kafka), parsed by this package's parseChange.
describe(`CDC round trip (${testContext().config.FLASHGATE_DB} → Debezium → Kafka → Node)`, () => {
  it("delivers an insert and an update of sale_stock with before/after/op, keyed by activity and SKU", async () => {
    const ctx = testContext();
    const { activityId, skuId } = freshIds();
    const db = await adminConnection(ctx);
    await db.query(`USE ${databaseName}`);
    await db.query(
      "INSERT INTO sale_stock (activity_id, sku_id, available, price_cents, currency) VALUES (?, ?, 5, 1999, 'EUR')",
      [activityId, skuId],
    );
    await db.query("UPDATE sale_stock SET available = 4 WHERE activity_id = ? AND sku_id = ?", [
      activityId,
      skuId,
    ]);
    await db.end();

    const mine = await saleChangesOf({ activityId, skuId }, 2);
    expect(mine.map((change) => change?.op)).toEqual(["c", "u"]);
    expect(mine[0]).toMatchObject({
      table: "sale_stock",
      before: null,
      after: { activity_id: activityId, sku_id: skuId, available: 5, currency: "EUR" },
    });
    expect(mine[1]).toMatchObject({ before: { available: 5 }, after: { available: 4, price_cents: 1999 } });
    expect(String(mine[0]?.position) < String(mine[1]?.position)).toBe(true);
  });
});
