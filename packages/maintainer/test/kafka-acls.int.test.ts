import { readFileSync } from "node:fs";
import { topicPartitions, topics } from "@flashgate/cdc";
import { connectClient, isRunning } from "@flashgate/connect";
import { connectorEnv } from "@flashgate/stack";
import {
  type AppProcess,
  cachedAvailable,
  clients,
  createSale,
  eventually,
  expectConverged,
  freshIds,
  startMaintainer,
  testContext,
  testEngine,
} from "@flashgate/testkit";
import type { Message } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { parseAllDocuments } from "yaml";
import { consumerGroup } from "../src/consumer.ts";
import { setAvailable } from "./cdc-faults.ts";
import {
  type KafkaConnectResource,
  type SecuredKafka,
  type StrimziAcl,
  startSecuredConnect,
  startSecuredKafka,
} from "./secured-kafka.ts";

const connectResources = parseAllDocuments(
  readFileSync(new URL("../../../deploy/kubernetes/base/connect.yaml", import.meta.url), "utf8"),
).map((document) => document.toJS());

/** The KafkaUsers deploy/kubernetes gives Strimzi: each one's ACLs. */
const kafkaUsers = Object.fromEntries(
  connectResources
    .filter((object) => object.kind === "KafkaUser")
    .map((user) => [user.metadata.name, user.spec.authorization.acls as StrimziAcl[]]),
);
/** The connector as Strimzi would register it, with its Kubernetes-only settings (the schema history's TLS and SCRAM). */
const kafkaConnector = connectResources.find((object) => object.kind === "KafkaConnector");
/** The workers as Strimzi would configure them from the KafkaConnect. */
const kafkaConnect = connectResources.find(
  (object) => object.kind === "KafkaConnect",
) as KafkaConnectResource;

// The ACLs are the same on either engine; this runs once, on MySQL.
describe.runIf(testEngine === "mysql")(
  "Kafka as deploy/kubernetes secures it: TLS, SCRAM-SHA-512 and the KafkaUsers' ACLs, on a real broker",
  () => {
    const c = clients();
    let kafka: SecuredKafka;
    let maintainer: AppProcess | undefined;
    let connect: Awaited<ReturnType<typeof startSecuredConnect>> | undefined;
    beforeAll(async () => {
      kafka = await startSecuredKafka(Object.keys(kafkaUsers), kafkaUsers);
      // What the KafkaTopics create.
      const admin = kafka.client("admin").admin();
      await admin.connect();
      await admin.createTopics({
        topics: [
          ...[topics.sale, topics.activity, topics.heartbeat, topics.deadLetters].map((topic) => ({
            topic,
            numPartitions: topicPartitions,
          })),
          {
            topic: kafkaConnector.spec.config["schema.history.internal.kafka.topic"],
            numPartitions: 1,
            configEntries: [{ name: "retention.ms", value: "-1" }],
          },
        ],
        waitForLeaders: true,
      });
      await admin.disconnect();
    }, 180_000);
    afterAll(async () => {
      await maintainer?.kill();
      await connect?.stop();
      await kafka?.stop();
      await c.close();
    });

    /** Produces as `user`; the error's type when the broker refuses. */
    async function produceAs(user: string, topic: string, messages: Message[], password?: string) {
      const producer = kafka.client(user, password).producer();
      try {
        await producer.connect();
        await producer.send({ topic, messages });
        return "sent";
      } catch (error) {
        // The broker's own error, under kafkajs's wrappers of it.
        let cause = error as { type?: string; name?: string; cause?: unknown } | undefined;
        while (cause && !cause.type && cause.cause) cause = cause.cause as typeof cause;
        return String(cause?.type ?? cause?.name);
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

    it("Debezium and the maintainer, each as its KafkaUser over TLS: the connector streams MySQL's changes, the maintainer applies them, commits, and dead-letters a malformed record", async () => {
      // Connect and its connector as Strimzi runs them: the worker as flashgate-connect, the connector's
      // own schema-history clients through the ${env:…} the KafkaConnect gives its workers.
      connect = await startSecuredConnect(kafka, kafkaConnect, {
        ...connectorEnv(testContext()),
        FLASHGATE_KAFKA_BOOTSTRAP: kafka.brokers,
        FLASHGATE_KAFKA_USER: "flashgate-connect",
        FLASHGATE_KAFKA_PASSWORD: kafka.password("flashgate-connect"),
        FLASHGATE_KAFKA_CA: readFileSync(kafka.caFile, "utf8"),
      });
      const { class: connectorClass, tasksMax, config } = kafkaConnector.spec;
      const secured = connectClient(connect.url);
      await secured.put({
        name: kafkaConnector.metadata.name,
        config: {
          ...config,
          "connector.class": connectorClass,
          "tasks.max": String(tasksMax),
          // A binlog reader beside the stack's own connector: another replica id.
          "database.server.id": "5499",
        },
      });
      await secured.waitUntil(kafkaConnector.metadata.name, isRunning, { timeoutMs: 120_000 });
      onTestFailed(async () => {
        console.error(
          "connector:",
          JSON.stringify(await secured.statusIfExists(kafkaConnector.metadata.name)),
        );
        console.error("connect worker:", connect?.errors());
        console.error("maintainer:", maintainer?.output().slice(-4000));
      });
      maintainer = await startMaintainer({
        KAFKA_BROKERS: kafka.brokers,
        KAFKA_SASL_MECHANISM: "scram-sha-512",
        KAFKA_USERNAME: "cache-maintainer",
        KAFKA_PASSWORD: kafka.password("cache-maintainer"),
        KAFKA_CA_FILE: kafka.caFile,
        KAFKA_CONNECT_URL: connect.url,
        // The cache learns of MySQL only through this broker.
        CDC_STALL_MS: "0",
      });
      const sale = freshIds();
      await createSale(c.pool, { ...sale, units: 4 });
      await expectConverged(c, sale.activityId, sale.skuId, 120_000);
      await setAvailable(c, sale, 7);
      await eventually(async () =>
        expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(7),
      );
      // A malformed record goes to the dead-letter topic, which the maintainer's user may write.
      const marker = `poison-${Date.now()}`;
      const producer = kafka.client("flashgate-connect").producer();
      await producer.connect();
      const [poison] = await producer.send({
        topic: topics.sale,
        messages: [
          {
            key: JSON.stringify({ activity_id: sale.activityId, sku_id: sale.skuId }),
            value: `{"${marker}":1}`,
          },
        ],
      });
      await producer.disconnect();
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
      // And its group's offset committed past the malformed record: it never blocks the partition.
      const offsets = admin.admin();
      await offsets.connect();
      try {
        await eventually(async () => {
          const [committed] = await offsets.fetchOffsets({ groupId: consumerGroup, topics: [topics.sale] });
          const partition = committed.partitions.find((p) => p.partition === poison.partition);
          expect(Number(partition?.offset)).toBeGreaterThan(Number(poison.baseOffset));
        });
      } finally {
        await offsets.disconnect();
      }
    }, 180_000);
  },
);
