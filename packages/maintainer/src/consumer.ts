import { setTimeout as sleep } from "node:timers/promises";
import type { FlashgateRedis } from "@flashgate/cache";
import type { Logger } from "@flashgate/logger";
import type { Kafka } from "kafkajs";
import type { Applier } from "./applier.ts";
import type { DeadLetterSink } from "./dead-letters.ts";
import { createGroupOffsets } from "./group-offsets.ts";
import type { MaintainerMetrics } from "./metrics.ts";
import { createOffsetCommits } from "./offset-commits.ts";
import { type KafkaRecord, Subscription } from "./subscription.ts";
import { ensureTopics } from "./topics.ts";
import { createWatermark } from "./watermark.ts";

export const consumerGroup = "flashgate-cache-maintainer";

export interface ConsumerOptions {
  kafka: Kafka;
  groupId?: string;
  applier: Applier;
  redis: FlashgateRedis;
  deadLetters: DeadLetterSink;
  metrics: MaintainerMetrics;
  logger: Logger;
  batchMax?: number;
}

/**
 * Consumes the CDC topics and applies them in batches. Offsets are committed only after Redis holds
 * the batch's effect (and dead letters are in their topic); a crash replays from the last commit,
 * which the position guard turns into no-ops. The group's membership is the subscription's; what is
 * committed, the offset commits' (sending) and the group offsets' (reading, for the watermark and lag).
 */
export async function startConsumer(options: ConsumerOptions) {
  const { applier, deadLetters, metrics, logger } = options;
  const groupId = options.groupId ?? consumerGroup;
  let stopping = false;
  const group = createGroupOffsets(options.kafka, groupId, logger);
  const watermark = createWatermark(group, options.redis, logger);
  const offsets = createOffsetCommits<KafkaRecord>(logger, {
    live: (record) => record.owned(),
    onStuck: (record) =>
      subscription.replace(`the commit of ${record.topic}:${record.partition}@${record.offset} is unsettled`),
  });

  async function applyUntilDone(
    batch: KafkaRecord[],
    keepAlive: () => Promise<void>,
  ): Promise<string | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        const { dead, heartbeat } = await applier.applyBatch(batch);
        await deadLetters.send(dead);
        return heartbeat;
      } catch (error) {
        // Redis or MySQL failing as a whole: not the event's fault. Hold the batch (and the offsets) and
        // retry, a member of the group meanwhile; a rebalance takes the batch to its partition's next owner.
        metrics.applyRetries.inc();
        logger.warn({ err: (error as Error).message, attempt }, "applying a batch failed; retrying");
        if (stopping && attempt > 3) throw error;
        await sleep(Math.min(2000, 50 * 2 ** attempt));
        await keepAlive();
      }
    }
  }

  const subscription = new Subscription({
    kafka: options.kafka,
    groupId,
    batchMax: options.batchMax ?? 2000,
    metrics,
    logger,
    async onBatch(batch, keepAlive) {
      const heartbeat = await applyUntilDone(batch, keepAlive);
      await offsets.commit(batch);
      if (heartbeat) await watermark.heartbeatApplied(heartbeat);
      watermark.advance();
    },
  });
  await ensureTopics(options.kafka);
  await group.connect();
  try {
    await subscription.start();
  } catch (error) {
    await group.disconnect();
    throw error;
  }
  const stopLag = group.followLag(() => subscription.assignment, metrics);

  return {
    get ready() {
      return subscription.joined;
    },
    /** Finishes the batch in hand, commits it and leaves the group. */
    async stop() {
      stopping = true;
      stopLag();
      await subscription.close();
      await watermark.settled();
      await group.disconnect();
    },
  };
}

export type RunningConsumer = Awaited<ReturnType<typeof startConsumer>>;
