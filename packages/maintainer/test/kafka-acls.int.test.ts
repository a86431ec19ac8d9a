import { readFileSync } from "node:fs";
import { topicPartitions, topics } from "@flashgate/cdc";
import {
  type AppProcess,
  cachedAvailable,
  clients,
  createSale,
  eventually,
  expectConverged,
  freshIds,
  stackEnv,
  startMaintainer,
  testEngine,
} from "@flashgate/testkit";
import { Kafka, type Message } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { consumerGroup } from "../src/consumer.ts";
import { setAvailable } from "./cdc-faults.ts";
import { type SecuredKafka, type StrimziAcl, startSecuredKafka } from "./secured-kafka.ts";

/** The KafkaUsers deploy/kubernetes gives Strimzi: each one's ACLs. */
const kafkaUsers = Object.fromEntries(
  parseAllDocuments(
    readFileSync(new URL("../../../deploy/kubernetes/base/connect.yaml", import.meta.url), "utf8"),
  )
    .map((document) => document.toJS())
    .filter((object) => object.kind === "KafkaUser")
    .map((user) => [user.metadata.name, user.spec.authorization.acls as StrimziAcl[]]),
);

interface Carried {
  topic: string;
  partition: number;
  message: Message;
}

const stackKafka = () => new Kafka({ brokers: [stackEnv().KAFKA_BROKERS], clientId: "acl-test-copy" });
const cdcTopics = [topics.sale, topics.activity];

/** Where the stack's CDC topics end now: what Debezium writes next lies past it. */
async function endOffsets(): Promise<Map<string, number>> {
  const admin = stackKafka().admin();
  await admin.connect();
  try {
    const ends = new Map<string, number>();
    for (const topic of cdcTopics)
      for (const { partition, high } of await admin.fetchTopicOffsets(topic))
        ends.set(`${topic}/${partition}`, Number(high));
    return ends;
  } finally {
    await admin.disconnect();
  }
}

/** Debezium's records in the stack's CDC topics past `since`, as it wrote them, once `enough` holds. */
async function recordsSince(
  since: Map<string, number>,
  enough: (records: Carried[]) => boolean,
): Promise<Carried[]> {
  const consumer = stackKafka().consumer({ groupId: `acl-test-copy-${Date.now()}-${Math.random()}` });
  const found: Carried[] = [];
  await consumer.connect();
  try {
    for (const topic of cdcTopics) await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        if (Number(message.offset) >= (since.get(`${topic}/${partition}`) ?? 0))
          found.push({
            topic,
            partition,
            message: { key: message.key, value: message.value, headers: message.headers },
          });
      },
    });
    await eventually(() => expect(enough(found)).toBe(true), { timeoutMs: 60_000 });
  } finally {
    await consumer.disconnect();
  }
  return found;
}

const ofSku = (sale: { activityId: number; skuId: number }) => (record: Carried) => {
  const key = JSON.parse(String(record.message.key)) as { activity_id?: number; sku_id?: number };
  return record.topic === topics.sale && key.activity_id === sale.activityId && key.sku_id === sale.skuId;
};

// The ACLs are the same on either engine; this runs once, on MySQL.
describe.runIf(testEngine === "mysql")(
  "Kafka as deploy/kubernetes secures it: TLS, SCRAM-SHA-512 and the KafkaUsers' ACLs, on a real broker",
  () => {
    const c = clients();
    let kafka: SecuredKafka;
    let maintainer: AppProcess | undefined;
    beforeAll(async () => {
      kafka = await startSecuredKafka(Object.keys(kafkaUsers), kafkaUsers);
      // What the KafkaTopics create.
      const admin = kafka.client("admin").admin();
      await admin.connect();
      await admin.createTopics({
        topics: [topics.sale, topics.activity, topics.heartbeat, topics.deadLetters].map((topic) => ({
          topic,
          numPartitions: topicPartitions,
        })),
        waitForLeaders: true,
      });
      await admin.disconnect();
    }, 180_000);
    afterAll(async () => {
      await maintainer?.kill();
      await kafka?.stop();
      await c.close();
    });

    /** Produces as `user`; the error's type when the broker refuses. */
    async function produceAs(user: string, topic: string, messages: Message[], password?: string) {
      return carryAs(
        user,
        messages.map((message) => ({ topic, partition: 0, message })),
        password,
      );
    }

    /** Writes the records as `user` would, each to its topic and partition; the error's type when refused. */
    async function carryAs(user: string, records: Carried[], password?: string) {
      const producer = kafka.client(user, password).producer();
      try {
        await producer.connect();
        for (const { topic, partition, message } of records)
          await producer.send({ topic, messages: [{ ...message, partition }] });
        return "sent";
      } catch (error) {
        return String((error as { type?: string }).type ?? (error as Error).name);
      } finally {
        await producer.disconnect().catch(() => {});
      }
    }

    it("refuses a wrong password, and lets only Connect's user write the CDC topics", async () => {
      const probe = [{ key: "{}", value: "probe" }];
      expect(await produceAs("cache-maintainer", topics.sale, probe, "not-its-password")).toBe(
        "KafkaJSSASLAuthenticationError",
      );
      expect(await produceAs("cache-maintainer", topics.sale, probe)).toBe("TOPIC_AUTHORIZATION_FAILED");
      expect(await produceAs("cache-maintainer", topics.activity, probe)).toBe("TOPIC_AUTHORIZATION_FAILED");
      expect(await produceAs("flashgate-connect", topics.deadLetters, probe)).toBe(
        "TOPIC_AUTHORIZATION_FAILED",
      );
    });

    it("the maintainer, as its KafkaUser over TLS: joins its group, applies Debezium's changes, commits, dead-letters a malformed record", async () => {
      maintainer = await startMaintainer({
        KAFKA_BROKERS: kafka.brokers,
        KAFKA_SASL_MECHANISM: "scram-sha-512",
        KAFKA_USERNAME: "cache-maintainer",
        KAFKA_PASSWORD: kafka.password("cache-maintainer"),
        KAFKA_CA_FILE: kafka.caFile,
        // The cache learns of MySQL only through this broker; the stack's connector is not this broker's.
        CDC_STALL_MS: "0",
        CONNECTOR_CHECK_INTERVAL_MS: "0",
      });
      // Real changes: Debezium's records of a new sale (its activity's and its SKU's), carried over to
      // their topics and partitions as Connect's user would write them.
      const sale = freshIds();
      const start = await endOffsets();
      await createSale(c.pool, { ...sale, units: 4 });
      const created = await recordsSince(start, (records) => records.some(ofSku(sale)));
      expect(await carryAs("flashgate-connect", created)).toBe("sent");
      await expectConverged(c, sale.activityId, sale.skuId);
      const next = await endOffsets();
      await setAvailable(c, sale, 7);
      const restocked = await recordsSince(next, (records) => records.some(ofSku(sale)));
      expect(await carryAs("flashgate-connect", restocked)).toBe("sent");
      await eventually(async () =>
        expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(7),
      );
      const all = [...created, ...restocked];
      // A malformed record goes to the dead-letter topic, which the maintainer's user may write.
      const marker = `poison-${Date.now()}`;
      expect(
        await produceAs("flashgate-connect", topics.sale, [
          {
            key: JSON.stringify({ activity_id: sale.activityId, sku_id: sale.skuId }),
            value: `{"${marker}":1}`,
          },
        ]),
      ).toBe("sent");
      const admin = kafka.client("admin");
      const reader = admin.consumer({ groupId: `dlq-reader-${marker}` });
      let dead: string | undefined;
      await reader.connect();
      try {
        await reader.subscribe({ topic: topics.deadLetters, fromBeginning: true });
        await reader.run({
          eachMessage: async ({ message }) => {
            if (String(message.value).includes(marker)) dead = String(message.headers?.["source-topic"]);
          },
        });
        await eventually(() => expect(dead).toBe(topics.sale), { timeoutMs: 30_000 });
      } finally {
        await reader.disconnect();
      }
      // And its group's offsets committed past what it applied.
      const offsets = admin.admin();
      await offsets.connect();
      try {
        await eventually(async () => {
          const committed = await offsets.fetchOffsets({ groupId: consumerGroup, topics: cdcTopics });
          const total = committed
            .flatMap((topic) => topic.partitions)
            .reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
          // Every record carried over, and the malformed one.
          expect(total).toBe(all.length + 1);
        });
      } finally {
        await offsets.disconnect();
      }
    }, 180_000);
  },
);
