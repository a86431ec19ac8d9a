import { adminConnection, databaseName, down, silentProgress, stackContext, up } from "@flashgate/stack";
import { eventually, freshIds, stackEnv } from "@flashgate/testkit";
import { Consumer, stringDeserializers } from "@platformatic/kafka";
import { describe, expect, it } from "vitest";

/** Every sale-topic change of one SKU: waits until `count` have arrived, then a moment more for extras. */
async function changesOf(activityId: number, skuId: number, count: number) {
  const consumer = new Consumer({
    groupId: `restart-${activityId}-${Date.now()}`,
    clientId: "restart-test",
    bootstrapBrokers: [stackEnv().KAFKA_BROKERS],
    deserializers: stringDeserializers,
  });
  const stream = await consumer.consume({
    topics: ["flashgate.sale"],
    mode: "earliest",
    autocommit: false,
    maxWaitTime: 100,
  });
  const mine: { op: string; available: number }[] = [];
  stream.on("data", (message) => {
    const key = JSON.parse(message.key) as { activity_id: number; sku_id: number };
    if (key.activity_id !== activityId || key.sku_id !== skuId || !message.value) return;
    const value = JSON.parse(message.value);
    mine.push({ op: value.op, available: value.after.available });
  });
  await eventually(() => expect(mine.length).toBeGreaterThanOrEqual(count), { timeoutMs: 90_000 });
  // A duplicate or a snapshot read would arrive right behind.
  await new Promise((r) => setTimeout(r, 2000));
  await consumer.close(true);
  return mine;
}

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
    expect(await changesOf(activityId, skuId, 1)).toEqual([{ op: "c", available: 1 }]);

    await down(ctx, { only: ["connect", "kafka"] });
    await db.query("UPDATE sale_stock SET available = 2 WHERE activity_id = ? AND sku_id = ?", [
      activityId,
      skuId,
    ]);
    await db.end();
    await up(ctx, { withApps: false });

    const changes = await changesOf(activityId, skuId, 2);
    expect(changes).toEqual([
      { op: "c", available: 1 },
      { op: "u", available: 2 },
    ]);
  });
});
