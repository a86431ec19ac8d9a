import { topics } from "@flashgate/cdc";
import type { Logger } from "@flashgate/logger";
import type { Admin, Kafka } from "kafkajs";
import type { MaintainerMetrics } from "./metrics.ts";

/** The partitions this instance owns, by topic: what the lag is reported for. */
export type Assignment = ReadonlyMap<string, ReadonlySet<number>>;

/** How often the lag of the partitions this instance owns is read. */
const lagEveryMs = 5000;

/**
 * What the group has committed and how far the topics reach, read through the admin API: the applied
 * watermark fences on it, and the consumer lag of the partitions this instance owns is reported from it.
 * (What this instance commits is offset-commits.ts's; whom the partitions belong to, subscription.ts's.)
 */
export function createGroupOffsets(kafka: Kafka, groupId: string, logger: Logger) {
  const admin: Admin = kafka.admin();
  let calls: Promise<unknown> = Promise.resolve();
  /**
   * One admin call at a time: kafkajs's admin, asked two things at once, can refresh its metadata under
   * the other call, which then fails with "Topic metadata not loaded".
   */
  function ask<T>(call: (admin: Admin) => Promise<T>): Promise<T> {
    const asked = calls.then(() => call(admin));
    calls = asked.catch(() => {});
    return asked;
  }

  /** Each owned partition's records not yet committed: its end offset less the group's commit. */
  async function reportLag(assignment: Assignment, metrics: MaintainerMetrics): Promise<void> {
    try {
      const owned = [topics.sale, topics.activity].filter((topic) => assignment.get(topic)?.size);
      const committed = owned.length ? await ask((a) => a.fetchOffsets({ groupId, topics: owned })) : [];
      const lags: { topic: string; partition: number; lag: number }[] = [];
      for (const topic of owned) {
        const commits = committed.find((entry) => entry.topic === topic)?.partitions ?? [];
        for (const end of await ask((a) => a.fetchTopicOffsets(topic))) {
          if (!assignment.get(topic)?.has(end.partition)) continue;
          const at = Number(commits.find((commit) => commit.partition === end.partition)?.offset ?? -1);
          lags.push({
            topic,
            partition: end.partition,
            lag: Math.max(0, Number(end.high) - Math.max(at, Number(end.low))),
          });
        }
      }
      // Replaced at once: a scrape never sees the partitions half reported.
      metrics.consumerLag.reset();
      for (const { topic, partition, lag } of lags) metrics.consumerLag.set({ topic, partition }, lag);
    } catch (error) {
      logger.warn({ err: (error as Error).message }, "reading the consumer's lag failed");
    }
  }

  return {
    connect: () => admin.connect(),
    disconnect: () => admin.disconnect().catch(() => {}),
    /** The sale topic's end offsets (per partition, the offset its next record will get), whoever consumes them. */
    async saleEndOffsets(): Promise<bigint[]> {
      const ends = await ask((a) => a.fetchTopicOffsets(topics.sale));
      return ends.sort((a, b) => a.partition - b.partition).map((end) => BigInt(end.high));
    },
    /** The group's committed offsets on the sale topic, every partition's (-1 where none was committed yet). */
    async saleCommittedOffsets(): Promise<bigint[]> {
      const [sale] = await ask((a) => a.fetchOffsets({ groupId, topics: [topics.sale] }));
      return (sale?.partitions ?? [])
        .sort((a, b) => a.partition - b.partition)
        .map((partition) => BigInt(partition.offset));
    },
    /**
     * Reports the lag of what `assignment()` names every 5 s, one report at a time: with Kafka away each
     * takes its retries, and reports queued behind them would hold up the watermark's calls too.
     */
    followLag(assignment: () => Assignment, metrics: MaintainerMetrics): () => void {
      let reporting = false;
      const timer = setInterval(() => {
        if (reporting) return;
        reporting = true;
        void reportLag(assignment(), metrics).finally(() => {
          reporting = false;
        });
      }, lagEveryMs);
      return () => clearInterval(timer);
    },
  };
}
