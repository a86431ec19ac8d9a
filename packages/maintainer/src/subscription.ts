import { setTimeout as sleep } from "node:timers/promises";
import { topics } from "@flashgate/cdc";
import type { Logger } from "@flashgate/logger";
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from "kafkajs";
import type { InboundRecord } from "./applier.ts";
import type { Assignment } from "./group-offsets.ts";
import type { MaintainerMetrics } from "./metrics.ts";
import type { Committable } from "./offset-commits.ts";

export type KafkaRecord = InboundRecord &
  Committable & {
    /**
     * Whether the record is still this instance's to commit: delivered since the last join, its partition
     * still assigned here. A commit for a partition another member now owns would move that member's offset.
     */
    owned(): boolean;
  };

/** Handles one partition's records, in offset order; `keepAlive` holds the group membership while it waits. */
type BatchHandler = (records: KafkaRecord[], keepAlive: () => Promise<void>) => Promise<void>;

export interface SubscriptionOptions {
  kafka: Kafka;
  groupId: string;
  /** The most records handed over at once. */
  batchMax: number;
  onBatch: BatchHandler;
  metrics: MaintainerMetrics;
  logger: Logger;
}

const consumed = [topics.sale, topics.activity, topics.heartbeat];

/**
 * The maintainer's membership of the consumer group (kafkajs): it joins, hands each partition's records
 * over in batches and waits for them to be handled before it fetches that partition again. kafkajs
 * rejoins by itself after a rebalance or a broker lost for a while; when it gives up (an error it does
 * not retry), the subscription joins again with a new consumer rather than hold partitions silently.
 */
export class Subscription {
  readonly #options: SubscriptionOptions;
  #consumer!: Consumer;
  #closing = false;
  #joined = false;
  /** Bumped on every join: a record delivered under an earlier one is no longer this instance's to commit. */
  #generation = 0;
  #assigned = new Map<string, Set<number>>();
  #rejoining: Promise<void> | undefined;

  constructor(options: SubscriptionOptions) {
    this.#options = options;
  }

  /** Joins the group; throws while Kafka cannot be reached. */
  async start(): Promise<void> {
    await this.#run();
  }

  get joined(): boolean {
    return this.#joined && !this.#closing;
  }

  /**
   * Leaves the group and joins it again with a new consumer: a commit its client still holds can then
   * never land after a later one (the broker refuses an earlier generation's), and its records are no
   * longer owned.
   */
  replace(reason: string): void {
    if (this.#closing || this.#rejoining) return;
    this.#options.logger.warn({ reason }, "replacing the consumer");
    this.#left();
    this.#rejoin(this.#consumer);
  }

  /** The partitions this instance owns now, by topic. */
  get assignment(): Assignment {
    return this.#assigned;
  }

  /** Finishes the batch in hand and leaves the group. */
  async close(): Promise<void> {
    this.#closing = true;
    await this.#rejoining;
    await this.#consumer.disconnect().catch(() => {});
  }

  async #run(): Promise<void> {
    const { kafka, groupId, logger, metrics } = this.#options;
    const consumer = kafka.consumer({
      groupId,
      sessionTimeout: 10_000,
      heartbeatInterval: 1000,
      rebalanceTimeout: 20_000,
      // A fetch that finds nothing new waits this long on the broker: kafkajs's fetch returned what was
      // appended during that wait up to a wait later (CDC lag p99 230–420 ms at 250–2,000 changes/s with
      // 500; bench/changes.md).
      maxWaitTimeInMs: 100,
      maxBytesPerPartition: 4 * 1024 * 1024,
    });
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      this.#generation += 1;
      this.#assigned = new Map(
        Object.entries(payload.memberAssignment).map(([topic, partitions]) => [topic, new Set(partitions)]),
      );
      this.#joined = true;
      for (const topic of consumed)
        metrics.assignedPartitions.set({ topic }, this.#assigned.get(topic)?.size ?? 0);
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      this.#left();
      logger.error(
        { err: payload.error.message, restart: payload.restart },
        payload.restart ? "consumer crashed; kafkajs rejoins" : "consumer crashed; joining again",
      );
      if (!payload.restart) this.#rejoin(consumer);
    });
    this.#consumer = consumer;
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: consumed, fromBeginning: true });
      await consumer.run({
        // Several partitions' batches in flight at once, each partition's in order: one batch's Redis and
        // commit round trips no longer hold up every other partition.
        partitionsConsumedConcurrently: 3,
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: (payload) => this.#deliver(payload),
      });
    } catch (error) {
      await consumer.disconnect().catch(() => {});
      throw error;
    }
  }

  async #deliver({ batch, heartbeat, isRunning, isStale, resolveOffset }: EachBatchPayload): Promise<void> {
    const { batchMax, onBatch } = this.#options;
    const generation = this.#generation;
    const consumedAtMs = Date.now();
    for (let start = 0; start < batch.messages.length; start += batchMax) {
      if (!isRunning() || isStale()) return;
      const messages = batch.messages.slice(start, start + batchMax);
      await onBatch(
        messages.map((message) =>
          this.#record(batch.topic, batch.partition, message, generation, consumedAtMs),
        ),
        heartbeat,
      );
      // The partition's next fetch starts after it (kafkajs fetches from its resolved offset, not from
      // the commit: unresolved, the same records would come again with every fetch).
      resolveOffset(messages[messages.length - 1].offset);
      await heartbeat();
    }
  }

  #record(
    topic: string,
    partition: number,
    message: KafkaMessage,
    generation: number,
    consumedAtMs: number,
  ): KafkaRecord {
    const offset = BigInt(message.offset);
    const consumer = this.#consumer;
    return {
      topic,
      partition,
      offset,
      key: message.key?.toString(),
      value: message.value?.toString(),
      timestampMs: Number(message.timestamp),
      consumedAtMs,
      commit: () => consumer.commitOffsets([{ topic, partition, offset: String(offset + 1n) }]),
      owned: () => this.#generation === generation && (this.#assigned.get(topic)?.has(partition) ?? false),
    };
  }

  #left() {
    this.#joined = false;
    this.#assigned = new Map();
    for (const topic of consumed) this.#options.metrics.assignedPartitions.set({ topic }, 0);
  }

  #rejoin(failed: Consumer) {
    if (this.#closing || failed !== this.#consumer || this.#rejoining) return;
    this.#rejoining = (async () => {
      await failed.disconnect().catch(() => {});
      for (let attempt = 1; !this.#closing; attempt++) {
        try {
          await this.#run();
          this.#options.logger.info({ attempt }, "consumer joined again");
          return;
        } catch (error) {
          this.#options.logger.warn(
            { err: (error as Error).message, attempt },
            "Kafka unreachable; retrying",
          );
          await sleep(Math.min(5000, 250 * 2 ** attempt));
        }
      }
    })().finally(() => {
      this.#rejoining = undefined;
    });
  }
}
