import { type ChangeEvent, parseChange, topics } from "@flashgate/cdc";
import { Consumer, stringDeserializers } from "@platformatic/kafka";
import { expect } from "vitest";
import { stackEnv } from "./env.ts";
import { eventually } from "./eventually.ts";

/**
 * Reads the sale topic from the start with a fresh consumer group and returns one SKU's Debezium
 * changes once `count` have arrived; `settleMs` keeps listening a while longer so that a duplicate or
 * an unexpected snapshot read would be caught too.
 */
export async function saleChangesOf(
  sku: { activityId: number; skuId: number },
  count: number,
  options: { settleMs?: number; timeoutMs?: number } = {},
): Promise<ChangeEvent[]> {
  const consumer = new Consumer({
    groupId: `testkit-${sku.activityId}-${sku.skuId}-${Date.now()}`,
    clientId: "testkit-sale-changes",
    bootstrapBrokers: [stackEnv().KAFKA_BROKERS],
    deserializers: stringDeserializers,
  });
  try {
    const stream = await consumer.consume({
      topics: [topics.sale],
      mode: "earliest",
      autocommit: false,
      maxWaitTime: 100,
    });
    const changes: ChangeEvent[] = [];
    stream.on("data", (message) => {
      const key = JSON.parse(message.key) as { activity_id: number; sku_id: number };
      if (key.activity_id !== sku.activityId || key.sku_id !== sku.skuId) return;
      const change = parseChange(message.value);
      if (change) changes.push(change);
    });
    await eventually(() => expect(changes.length).toBeGreaterThanOrEqual(count), {
      timeoutMs: options.timeoutMs ?? 90_000,
    });
    // Absence cannot be awaited: a duplicate or a second snapshot would arrive right behind the rest.
    if (options.settleMs) await new Promise((resolve) => setTimeout(resolve, options.settleMs));
    return changes;
  } finally {
    await consumer.close(true);
  }
}
