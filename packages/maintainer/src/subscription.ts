import { setTimeout as sleep } from "node:timers/promises";
import { topics } from "@flashgate/cdc";
import type { Logger } from "@flashgate/logger";
import type { Admin, Consumer, EachBatchPayload, Kafka, KafkaMessage } from "kafkajs";
import type { InboundRecord } from "./applier.ts";
import type { MaintainerMetrics } from "./metrics.ts";
import type { Committable } from "./offset-commits.ts";

export type KafkaRecord = InboundRecord & Committable;

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
/** How often the lag of the partitions this instance owns is read. */
const lagEveryMs = 5000;

/**
 * The maintainer's membership of the consumer group (kafkajs): it joins, hands each partition's records
 * over in batches and waits for them to be handled before it fetches that partition again. kafkajs
 * rejoins by itself after a rebalance or a broker lost for a while; when it gives up (an error it does
 * not retry), the subscription joins again with a new consumer rather than hold partitions silently.
 */
export class Subscription {
  readonly #options: SubscriptionOptions;
  readonly #admin: Admin;
  #consumer!: Consumer;
  #closing = false;
  #joined = false;
  /** Bumped on every join: a record delivered under an earlier one is no longer this instance's to commit. */
  #generation = 0;
  #assigned = new Map<string, Set<number>>();
  readonly #deliveredIn = new WeakMap<KafkaRecord, number>();
  #lagTimer: NodeJS.Timeout | undefined;
  #reportingLag: Promise<void> | undefined;
  #adminCalls: Promise<unknown> = Promise.resolve();
  #rejoining: Promise<void> | undefined;

  constructor(options: SubscriptionOptions) {
    this.#options = options;
    this.#admin = options.kafka.admin();
  }

  /**
   * One admin call at a time: kafkajs's admin, asked two things at once, can refresh its metadata under
   * the other call, which then fails with "Topic metadata not loaded".
   */
  #ask<T>(call: (admin: Admin) => Promise<T>): Promise<T> {
    const asked = this.#adminCalls.then(() => call(this.#admin));
    this.#adminCalls = asked.catch(() => {});
    return asked;
  }

  /** Joins the group; throws while Kafka cannot be reached. */
  async start(): Promise<void> {
    await this.#admin.connect();
    try {
      await this.#run();
    } catch (error) {
      await this.#admin.disconnect().catch(() => {});
      throw error;
    }
    // One report at a time: with Kafka away each takes its retries, and reports queued behind them would
    // hold up the watermark's admin calls too.
    this.#lagTimer = setInterval(() => {
      this.#reportingLag ??= this.#reportLag().finally(() => {
        this.#reportingLag = undefined;
      });
    }, lagEveryMs);
  }

  get joined(): boolean {
    return this.#joined && !this.#closing;
  }

  /** The sale topic's end offsets (per partition, the offset its next record will get), whoever consumes them. */
  async saleEndOffsets(): Promise<bigint[]> {
    const ends = await this.#ask((admin) => admin.fetchTopicOffsets(topics.sale));
    return ends.sort((a, b) => a.partition - b.partition).map((end) => BigInt(end.high));
  }

  /** The group's committed offsets on the sale topic, every partition's (-1 where none was committed yet). */
  async saleCommittedOffsets(): Promise<bigint[]> {
    const [sale] = await this.#ask((admin) =>
      admin.fetchOffsets({ groupId: this.#options.groupId, topics: [topics.sale] }),
    );
    return (sale?.partitions ?? [])
      .sort((a, b) => a.partition - b.partition)
      .map((partition) => BigInt(partition.offset));
  }

  /**
   * Whether `record` is still this instance's to commit: delivered since the last join, its partition
   * still assigned here. A commit for a partition another member now owns would move that member's offset.
   */
  delivers(record: KafkaRecord): boolean {
    return (
      this.#deliveredIn.get(record) === this.#generation &&
      (this.#assigned.get(record.topic)?.has(record.partition) ?? false)
    );
  }

  /** Finishes the batch in hand and leaves the group. */
  async close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#lagTimer);
    await this.#rejoining;
    await this.#consumer.disconnect().catch(() => {});
    await this.#admin.disconnect().catch(() => {});
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
    const record: KafkaRecord = {
      topic,
      partition,
      offset,
      key: message.key?.toString(),
      value: message.value?.toString(),
      timestampMs: Number(message.timestamp),
      consumedAtMs,
      commit: () => consumer.commitOffsets([{ topic, partition, offset: String(offset + 1n) }]),
    };
    this.#deliveredIn.set(record, generation);
    return record;
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

  /** Each owned partition's records not yet committed: its end offset less the group's commit. */
  async #reportLag(): Promise<void> {
    const { metrics, groupId, logger } = this.#options;
    try {
      const owned = [topics.sale, topics.activity].filter((topic) => this.#assigned.get(topic)?.size);
      const committed = owned.length
        ? await this.#ask((admin) => admin.fetchOffsets({ groupId, topics: owned }))
        : [];
      const lags: { topic: string; partition: number; lag: number }[] = [];
      for (const topic of owned) {
        const commits = committed.find((entry) => entry.topic === topic)?.partitions ?? [];
        for (const end of await this.#ask((admin) => admin.fetchTopicOffsets(topic))) {
          if (!this.#assigned.get(topic)?.has(end.partition)) continue;
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
}
