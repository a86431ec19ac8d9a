import { buyerField, lookupDirectory, readCachedSku, skuKeys } from "@flashgate/cache";
import { topics } from "@flashgate/cdc";
import { kafkaClient } from "@flashgate/kafka";
import { createLogger } from "@flashgate/logger";
import {
  type AppProcess,
  cachedAvailable,
  clients,
  createSale,
  dbaConnection,
  eventually,
  expectConverged,
  freshIds,
  stackEnv,
  startMaintainer,
  testContext,
} from "@flashgate/testkit";
import { type ApiHarness, soldOutSale, startApi } from "@flashgate/testkit/purchase-api";
import { Consumer, Producer, stringDeserializers, stringSerializers } from "@platformatic/kafka";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

describe("cache-maintainer applies every committed change", () => {
  let maintainer: AppProcess;
  let api: ApiHarness;
  const c = clients();
  beforeAll(async () => {
    maintainer = await startMaintainer();
    api = await startApi();
  });
  afterAll(async () => {
    await api.close();
    await maintainer.kill();
    await c.close();
  });

  it("a raw-SQL restock makes a sold-out SKU sellable again", async () => {
    const sale = await soldOutSale(c, api);

    await c.pool.query(
      "UPDATE sale_stock SET available = available + 5 WHERE activity_id = ? AND sku_id = ?",
      [sale.activityId, sale.skuId],
    );
    const admitted = await eventually(async () => {
      const result = await api.purchase(2, sale);
      expect(result.status).toBe(201);
      return result;
    });
    expect(admitted.body.state).toBe("PENDING");
  });

  it.each([
    [false, "keeps"],
    [true, "releases"],
  ])("a raw-SQL closure returns the unit; rebuy_after_close=%s %s the buyer", async (rebuy) => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 3, rebuyAfterClose: rebuy });
    await expectConverged(c, sale.activityId, sale.skuId);
    const bought = await api.purchase(9, sale);
    expect(bought.status).toBe(201);
    await expectConverged(c, sale.activityId, sale.skuId);
    expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(2);

    const db = await c.pool.getConnection();
    await db.query("START TRANSACTION");
    await db.query("UPDATE sale_order SET state = 'CLOSED' WHERE request_id = ? AND state = 'PENDING'", [
      bought.key,
    ]);
    await db.query("UPDATE sale_stock SET available = available + 1 WHERE activity_id = ? AND sku_id = ?", [
      sale.activityId,
      sale.skuId,
    ]);
    await db.query("COMMIT");
    db.release();

    await expectConverged(c, sale.activityId, sale.skuId);
    expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(3);
    expect(await c.redis.hexists(skuKeys(sale.activityId, sale.skuId).sku, buyerField("9"))).toBe(
      rebuy ? 0 : 1,
    );
    expect((await readCachedSku(c.redis, sale.activityId, sale.skuId))?.buyers).toBe(rebuy ? 0 : 1);
    const again = await api.purchase(9, sale);
    expect(again.status).toBe(rebuy ? 201 : 409);
  });

  it("a purchase records the buyer, drops the reservation and decrements stock (each step: apply.redis.test.ts)", async () => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 2 });
    await expectConverged(c, sale.activityId, sale.skuId);
    const keys = skuKeys(sale.activityId, sale.skuId);
    const bought = await api.purchase(11, sale);
    expect(bought.status).toBe(201);

    await eventually(async () => {
      const [available, reservations, buyer] = await Promise.all([
        c.redis.hget(keys.sku, "available"),
        c.redis.zcount(keys.reservations, Date.now(), "+inf"),
        c.redis.hget(keys.sku, buyerField("11")),
      ]);
      // The buyer's field holds their order's key, as the binlog carried it.
      expect([Number(available), reservations, buyer]).toEqual([1, 0, bought.key]);
    });
    expect((await api.purchase(12, sale)).status).toBe(201);

    // Sold out now, locally short-cut too: a buyer repeating their key still gets their order back.
    await expectConverged(c, sale.activityId, sale.skuId);
    expect((await api.purchase(13, sale)).body.code).toBe("SOLD_OUT");
    expect((await api.purchase(14, sale)).body.code).toBe("SOLD_OUT");
    const replay = await api.purchase(11, sale, bought.key);
    expect([replay.status, replay.body.requestId]).toEqual([200, bought.key]);
  });

  it("deleting a SKU row removes its keys", async () => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 4 });
    await expectConverged(c, sale.activityId, sale.skuId);
    const dba = await dbaConnection(testContext());
    await dba.query("DELETE FROM sale_stock WHERE activity_id = ? AND sku_id = ?", [
      sale.activityId,
      sale.skuId,
    ]);
    await dba.end();
    const keys = skuKeys(sale.activityId, sale.skuId);
    await eventually(async () => expect(await c.redis.exists(keys.sku, keys.reservations)).toBe(0));
  });

  it("an activity's admission follows a DBA's SQL: set to queued, its admitted buyers are answered 202 and the queue makes their orders; set back to NULL, they are decided at once", async () => {
    const queueing = await startApi({ env: { KAFKA_BROKERS: stackEnv().KAFKA_BROKERS } });
    const dba = await dbaConnection(testContext());
    try {
      const sale = freshIds();
      const admission = async () => c.redis.hget(skuKeys(sale.activityId, sale.skuId).sku, "admission");
      await createSale(c.pool, { ...sale, units: 10 });
      await expectConverged(c, sale.activityId, sale.skuId);
      expect((await queueing.purchase(21, sale)).status).toBe(201);
      await dba.query("UPDATE activity SET admission = 'queued' WHERE id = ?", [sale.activityId]);
      await eventually(async () => expect(await admission()).toBe("queued"));
      const queued = await queueing.purchase(22, sale);
      expect([queued.status, queued.body.state]).toEqual([202, "QUEUED"]);
      expect((await queueing.outcome(22, queued.key)).state).toBe("CREATED");
      await dba.query("UPDATE activity SET admission = NULL WHERE id = ?", [sale.activityId]);
      await eventually(async () => expect(await admission()).toBe(""));
      expect((await queueing.purchase(23, sale)).status).toBe(201);
    } finally {
      await dba.end();
      await queueing.close();
    }
  }, 120_000);

  it("the sale directory follows a DBA's SQL: a SKU inserted is known, ended ENDED, deleted unknown", async () => {
    const sale = freshIds();
    const view = async () =>
      (await fetch(`${api.url}/v1/activities/${sale.activityId}/skus/${sale.skuId}`)).status;
    const dba = await dbaConnection(testContext());
    try {
      await dba.query(
        "INSERT INTO activity (id, name, starts_at, ends_at) VALUES (?, 'dba', NOW(3) - INTERVAL 1 HOUR, NOW(3) + INTERVAL 1 HOUR)",
        [sale.activityId],
      );
      await dba.query(
        "INSERT INTO sale_stock (activity_id, sku_id, available, price_cents, currency) VALUES (?, ?, 4, 1999, 'EUR')",
        [sale.activityId, sale.skuId],
      );
      await eventually(async () =>
        expect(await lookupDirectory(c.redis, sale.activityId, sale.skuId)).toBe("LIVE"),
      );
      expect(await view()).toBe(200);
      await dba.query("UPDATE activity SET ends_at = NOW(3) - INTERVAL 1 SECOND WHERE id = ?", [
        sale.activityId,
      ]);
      await eventually(async () =>
        expect(await lookupDirectory(c.redis, sale.activityId, sale.skuId)).toBe("ENDED"),
      );
      await dba.query("DELETE FROM sale_stock WHERE activity_id = ? AND sku_id = ?", [
        sale.activityId,
        sale.skuId,
      ]);
      await eventually(async () =>
        expect(await lookupDirectory(c.redis, sale.activityId, sale.skuId)).toBe("NOT_FOUND"),
      );
      expect(await view()).toBe(404);
      expect((await api.purchase(14, sale)).status).toBe(404);
    } finally {
      await dba.end();
    }
  });

  it("an activity edit moves the sale window in the cache", async () => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 4 });
    await expectConverged(c, sale.activityId, sale.skuId);
    await c.pool.query("UPDATE activity SET ends_at = NOW(3) - INTERVAL 1 SECOND WHERE id = ?", [
      sale.activityId,
    ]);
    await eventually(async () => expect((await api.purchase(13, sale)).body.code).toBe("ACTIVITY_NOT_OPEN"));
  });

  it("a CDC record carries the broker's append time, not its producer's: the lag's send stage ends in Kafka", async () => {
    const kafka = kafkaClient(
      stackEnv().KAFKA_BROKERS.split(","),
      "append-time-test",
      createLogger("append-time-test", "silent"),
    );
    const admin = kafka.admin();
    await admin.connect();
    const ends = await admin.fetchTopicOffsets(topics.sale);
    await admin.disconnect();
    // A tombstone (the maintainer skips it) of a SKU no sale has, its producer's timestamp 1970's.
    const key = JSON.stringify({ activity_id: freshIds().activityId, sku_id: 1 });
    const producer = kafka.producer();
    await producer.connect();
    const sentAt = Date.now();
    await producer.send({ topic: topics.sale, messages: [{ key, value: null, timestamp: "1000" }] });
    await producer.disconnect();
    const consumer = kafka.consumer({ groupId: `append-time-${Date.now()}`, maxWaitTimeInMs: 100 });
    await consumer.connect();
    let stamped: number | undefined;
    try {
      await consumer.subscribe({ topic: topics.sale });
      await consumer.run({
        eachMessage: async ({ message }) => {
          if (message.key?.toString() === key) stamped = Number(message.timestamp);
        },
      });
      for (const { partition, offset } of ends) consumer.seek({ topic: topics.sale, partition, offset });
      await eventually(() => expect(stamped).toBeDefined(), { timeoutMs: 30_000 });
    } finally {
      await consumer.disconnect();
    }
    // The broker's clock, on this machine: within the send's own time, never the producer's 1970.
    expect(stamped).toBeGreaterThanOrEqual(sentAt - 1000);
    expect(stamped).toBeLessThanOrEqual(Date.now());
  });

  it("a malformed record goes to the dead-letter topic and later changes still flow", async () => {
    const producer = new Producer({
      clientId: "dlq-test",
      bootstrapBrokers: [stackEnv().KAFKA_BROKERS],
      serializers: stringSerializers,
    });
    const marker = `poison-${Date.now()}`;
    await producer.send({
      messages: [
        {
          topic: topics.sale,
          key: JSON.stringify({ activity_id: 1, sku_id: 1 }),
          value: `{"${marker}": true}`,
        },
      ],
    });
    await producer.close();

    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 2 });
    await expectConverged(c, sale.activityId, sale.skuId);

    const consumer = new Consumer({
      groupId: `dlq-reader-${marker}`,
      clientId: "dlq-reader",
      bootstrapBrokers: [stackEnv().KAFKA_BROKERS],
      deserializers: stringDeserializers,
    });
    const stream = await consumer.consume({
      topics: [topics.deadLetters],
      mode: "earliest",
      autocommit: false,
      maxWaitTime: 100,
    });
    let found: { reason?: string; sourceTopic?: string } | undefined;
    stream.on("data", (message) => {
      if (!found && message.value?.includes(marker))
        found = {
          reason: String(message.headers.get("reason")),
          sourceTopic: String(message.headers.get("source-topic")),
        };
    });
    try {
      await eventually(() => expect(found).toBeDefined(), { timeoutMs: 30_000 });
    } finally {
      await consumer.close(true);
    }
    expect(found?.sourceTopic).toBe(topics.sale);
    expect(found?.reason).toMatch(/not a Debezium change/);
    const metrics = await (await fetch(`${maintainer.url}/metrics`)).text();
    expect(metrics).toMatch(/flashgate_cdc_dead_letters_total [1-9]/);
  });
});
