import { setTimeout as sleep } from "node:timers/promises";
import type { FlashgateRedis } from "@flashgate/cache";
import type { Logger } from "@flashgate/logger";
import type { Kafka } from "kafkajs";
import type { Applier } from "./applier.ts";
import type { DeadLetterSink } from "./dead-letters.ts";
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
 * which the position guard turns into no-ops.
 */
export async function startConsumer(options: ConsumerOptions) {
  const { applier, deadLetters, metrics, logger } = options;
  let stopping = false;

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

  const subscription: Subscription = new Subscription({
    kafka: options.kafka,
    groupId: options.groupId ?? consumerGroup,
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
  const watermark = createWatermark(subscription, options.redis, logger);
  const offsets = createOffsetCommits(logger, {
    live: (record) => subscription.delivers(record as KafkaRecord),
  });
  await ensureTopics(options.kafka);
  await subscription.start();

  return {
    get ready() {
      return subscription.joined;
    },
    /** Finishes the batch in hand, commits it and leaves the group. */
    async stop() {
      stopping = true;
      await subscription.close();
      await watermark.settled();
    },
  };
}

export type RunningConsumer = Awaited<ReturnType<typeof startConsumer>>;
