import { setTimeout as sleep } from "node:timers/promises";
import { appliedWatermarkKey, type FlashgateRedis } from "@flashgate/cache";
import { topics } from "@flashgate/cdc";
import type { Logger } from "@flashgate/logger";
import { Consumer, type Message, type MessagesStream, stringDeserializers } from "@platformatic/kafka";
import type { Applier } from "./applier.ts";
import type { DeadLetterSink } from "./dead-letters.ts";
import type { MaintainerMetrics } from "./metrics.ts";
import { ensureTopics } from "./topics.ts";

export const consumerGroup = "flashgate-cache-maintainer";

export interface ConsumerOptions {
  brokers: string[];
  groupId?: string;
  applier: Applier;
  redis: FlashgateRedis;
  deadLetters: DeadLetterSink;
  metrics: MaintainerMetrics;
  logger: Logger;
  batchMax?: number;
}

type KafkaRecord = Message<string, string, string, string>;

/**
 * Consumes the CDC topics and applies them in batches. Offsets are committed only after Redis holds
 * the batch's effect (and dead letters are in their topic); a crash replays from the last commit,
 * which the position guard turns into no-ops.
 */
export async function startConsumer(options: ConsumerOptions) {
  const { applier, deadLetters, metrics, logger } = options;
  const batchMax = options.batchMax ?? 2000;
  await ensureTopics(options.brokers);

  const buffer: KafkaRecord[] = [];
  let wake: (() => void) | undefined;
  let stopping = false;
  // consume() resolves once the group is joined; later rebalances and reconnections flip this.
  let joined = false;
  let salePartitions = 0;
  let consumer!: Consumer<string, string, string, string>;
  let stream!: MessagesStream<string, string, string, string>;

  /** Joins the group and starts the stream; throws while Kafka cannot be reached. */
  async function connect() {
    const next = new Consumer({
      groupId: options.groupId ?? consumerGroup,
      clientId: `flashgate-cache-maintainer-${process.pid}`,
      bootstrapBrokers: options.brokers,
      deserializers: stringDeserializers,
      sessionTimeout: 10_000,
      heartbeatInterval: 1000,
      rebalanceTimeout: 20_000,
    });
    try {
      const nextStream = await next.consume({
        topics: [topics.sale, topics.activity, topics.heartbeat],
        mode: "committed",
        fallbackMode: "earliest",
        autocommit: false,
        maxWaitTime: 500,
      });
      salePartitions =
        (await next.metadata({ topics: [topics.sale] })).topics.get(topics.sale)?.partitionsCount ?? 0;
      next.on("consumer:lag", (lag: Map<string, bigint[]>) => {
        salePartitions = lag.get(topics.sale)?.length ?? salePartitions;
        for (const [topic, partitions] of lag) {
          for (const [partition, value] of partitions.entries())
            metrics.consumerLag.set({ topic, partition }, Math.max(0, Number(value)));
        }
      });
      next.startLagMonitoring({ topics: [topics.sale, topics.activity] }, 5000);
      next.on("consumer:group:join", () => {
        if (consumer === next) joined = true;
      });
      next.on("consumer:group:leave", () => {
        if (consumer === next) joined = false;
      });
      nextStream.on("data", (message: KafkaRecord) => {
        buffer.push(message);
        if (buffer.length > 5 * batchMax) nextStream.pause();
        wake?.();
      });
      // A stream that failed (Kafka gone for longer than its retries) delivers nothing more, while
      // the group may still count this member: start over rather than hold partitions silently.
      nextStream.on("error", (error) => {
        logger.error({ err: error.message }, "consumer stream error; reconnecting");
        void reconnect(next);
      });
      consumer = next;
      stream = nextStream;
      joined = true;
    } catch (error) {
      await next.close(true).catch(() => {});
      throw error;
    }
  }

  let reconnecting: Promise<void> | undefined;
  function reconnect(failed: typeof consumer) {
    if (stopping || failed !== consumer || reconnecting) return;
    joined = false;
    reconnecting = (async () => {
      failed.stopLagMonitoring();
      await stream.close().catch(() => {});
      await failed.close(true).catch(() => {});
      for (let attempt = 1; !stopping; attempt++) {
        try {
          await connect();
          logger.info({ attempt }, "consumer reconnected");
          return;
        } catch (error) {
          logger.warn({ err: (error as Error).message, attempt }, "Kafka unreachable; retrying");
          await sleep(Math.min(5000, 250 * 2 ** attempt));
        }
      }
    })().finally(() => {
      reconnecting = undefined;
    });
  }

  await connect();

  const ownsAllSalePartitions = () =>
    salePartitions > 0 &&
    (consumer.assignments?.find((a) => a.topic === topics.sale)?.partitions.length ?? 0) === salePartitions;

  async function applyUntilDone(batch: KafkaRecord[]): Promise<string | undefined> {
    const records = batch.map((m) => ({
      topic: m.topic,
      partition: m.partition,
      offset: m.offset,
      key: m.key,
      value: m.value,
    }));
    for (let attempt = 1; ; attempt++) {
      try {
        const { dead, heartbeat } = await applier.applyBatch(records);
        await deadLetters.send(dead);
        return heartbeat;
      } catch (error) {
        // Redis or MySQL failing as a whole: not the event's fault. Hold the batch (and the offsets) and retry.
        metrics.applyRetries.inc();
        logger.warn({ err: (error as Error).message, attempt }, "applying a batch failed; retrying");
        if (stopping && attempt > 3) throw error;
        await sleep(Math.min(2000, 50 * 2 ** attempt));
      }
    }
  }

  async function commit(batch: KafkaRecord[]) {
    const last = new Map<string, KafkaRecord>();
    for (const message of batch) last.set(`${message.topic}:${message.partition}`, message);
    await Promise.all(
      [...last.values()].map((message) =>
        Promise.resolve(message.commit()).catch((error: Error) =>
          logger.warn({ err: error.message }, "offset commit failed; will replay"),
        ),
      ),
    );
  }

  const loop = (async () => {
    while (!stopping) {
      if (buffer.length === 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
        continue;
      }
      const batch = buffer.splice(0, batchMax);
      if (stream.isPaused() && buffer.length < batchMax) stream.resume();
      const heartbeat = await applyUntilDone(batch);
      await commit(batch);
      if (heartbeat && buffer.length === 0 && ownsAllSalePartitions()) {
        // Nothing older is in hand and this instance consumes every sale partition: every change
        // committed before this heartbeat has been applied. The drift check fences on it.
        await options.redis.set(appliedWatermarkKey, heartbeat).catch(() => {});
      }
    }
  })();

  return {
    get ready() {
      return joined && !stopping;
    },
    /** Finishes the batch in hand, commits it and leaves the group. */
    async stop() {
      stopping = true;
      wake?.();
      await loop.catch((error) =>
        logger.error({ err: error.message }, "consumer loop failed while stopping"),
      );
      await reconnecting;
      consumer.stopLagMonitoring();
      await stream.close().catch(() => {});
      await consumer.close(true).catch(() => {});
    },
    loop,
  };
}

export type RunningConsumer = Awaited<ReturnType<typeof startConsumer>>;
