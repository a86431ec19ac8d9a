import { topicPartitions, topics } from "@flashgate/cdc";
import { Admin } from "@platformatic/kafka";

/**
 * Creates the CDC topics when missing, with the partitioning the connector config also asks for. On a
 * fresh stack Debezium creates a topic only with its first change, and a consumer cannot subscribe to a
 * topic that does not exist yet.
 */
export async function ensureTopics(brokers: string[], partitions = topicPartitions): Promise<string[]> {
  const admin = new Admin({ clientId: "flashgate-cache-maintainer-admin", bootstrapBrokers: brokers });
  try {
    const existing = new Set(await admin.listTopics());
    const missing = [topics.sale, topics.activity, topics.heartbeat, topics.deadLetters].filter(
      (topic) => !existing.has(topic),
    );
    for (const topic of missing) {
      try {
        // Replicas as the brokers default to: 1 on the single stack, 3 on a cluster.
        await admin.createTopics({ topics: [topic], partitions });
      } catch (error) {
        // Another maintainer (or Connect) may have created it a moment ago.
        if (!(await admin.listTopics()).includes(topic)) throw error;
      }
    }
    return missing;
  } finally {
    await admin.close();
  }
}
