import { adminConnection, databaseName } from "@flashgate/stack";
import { freshIds, stackEnv, testContext } from "@flashgate/testkit";
import { Consumer, stringDeserializers } from "@platformatic/kafka";
import { afterAll, describe, expect, it } from "vitest";
import { parseChange, topics } from "../src/index.ts";

describe("CDC round trip (MariaDB → Debezium → Kafka → Node)", () => {
  const consumers: Consumer<string, string, string, string>[] = [];
  afterAll(async () => {
    for (const consumer of consumers) await consumer.close(true);
  });

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

    const consumer = new Consumer({
      groupId: `cdc-round-trip-${activityId}`,
      clientId: "cdc-round-trip",
      bootstrapBrokers: [stackEnv().KAFKA_BROKERS],
      deserializers: stringDeserializers,
    });
    consumers.push(consumer);
    const stream = await consumer.consume({
      topics: [topics.sale],
      mode: "earliest",
      autocommit: false,
      maxWaitTime: 200,
    });
    const mine = [];
    const deadline = Date.now() + 60_000;
    for await (const message of stream) {
      const key = JSON.parse(message.key) as { activity_id: number; sku_id: number };
      if (key.activity_id === activityId && key.sku_id === skuId) mine.push(parseChange(message.value));
      if (mine.length === 2 || Date.now() > deadline) break;
    }
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
