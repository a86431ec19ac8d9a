import { topicPartitions, topics } from "@flashgate/cdc";
import type { Kafka } from "kafkajs";

/**
 * Creates the CDC topics when missing, with the partitioning the connector config also asks for. On a
 * fresh stack Debezium creates a topic only with its first change, and a consumer cannot subscribe to a
 * topic that does not exist yet.
 */
export async function ensureTopics(kafka: Kafka, partitions = topicPartitions): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = [topics.sale, topics.activity, topics.heartbeat, topics.deadLetters].filter(
      (topic) => !existing.has(topic),
    );
    // Replicas as the brokers default to: 1 on the single stack, 3 on a cluster. A topic another
    // maintainer (or Connect) created a moment ago is left as it is.
    if (missing.length)
      await admin.createTopics({
        topics: missing.map((topic) => ({ topic, numPartitions: partitions })),
        waitForLeaders: true,
      });
    return missing;
  } finally {
    await admin.disconnect();
  }
}
