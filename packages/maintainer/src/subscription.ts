import { setTimeout as sleep } from "node:timers/promises";
import { topics } from "@flashgate/cdc";
import type { Logger } from "@flashgate/logger";
import { Consumer, type Message, type MessagesStream, stringDeserializers } from "@platformatic/kafka";
import type { MaintainerMetrics } from "./metrics.ts";

export type KafkaRecord = Message<string, string, string, string>;

export interface SubscriptionOptions {
  brokers: string[];
  groupId: string;
  /** Records buffered beyond this many batches pause the stream until the applier catches up. */
  batchMax: number;
  metrics: MaintainerMetrics;
  logger: Logger;
}

/**
 * The maintainer's membership of the consumer group: it joins, buffers what the CDC topics deliver, and
 * when the stream fails (Kafka gone for longer than its retries) it leaves and joins again rather than
 * hold partitions silently.
 */
export class Subscription {
  readonly #options: SubscriptionOptions;
  readonly #buffer: KafkaRecord[] = [];
  #wake: (() => void) | undefined;
  #closing = false;
  // consume() resolves once the group is joined; later rebalances and reconnections flip this.
  #joined = false;
  #salePartitions = 0;
  #consumer!: Consumer<string, string, string, string>;
  #stream!: MessagesStream<string, string, string, string>;
  /** Which consumer delivered each buffered or in-flight record. */
  readonly #deliveredBy = new WeakMap<KafkaRecord, Consumer<string, string, string, string>>();
  #reconnecting: Promise<void> | undefined;

  private constructor(options: SubscriptionOptions) {
    this.#options = options;
  }

  /** Joins the group; throws while Kafka cannot be reached. */
  static async open(options: SubscriptionOptions): Promise<Subscription> {
    const subscription = new Subscription(options);
    await subscription.#connect();
    return subscription;
  }

  get joined(): boolean {
    return this.#joined && !this.#closing;
  }

  /** The sale topic's end offsets (per partition, the offset its next record will get), whoever consumes them. */
  async saleEndOffsets(): Promise<bigint[]> {
    return (await this.#consumer.listOffsets({ topics: [topics.sale] })).get(topics.sale) ?? [];
  }

  /** The group's committed offsets on the sale topic, every partition's (-1 where none was committed yet). */
  async saleCommittedOffsets(): Promise<bigint[]> {
    const partitions = Array.from({ length: this.#salePartitions }, (_, partition) => partition);
    const committed = await this.#consumer.listCommittedOffsets({
      topics: [{ topic: topics.sale, partitions }],
    });
    return committed.get(topics.sale) ?? [];
  }

  /** The next records in delivery order (at most `max`), waiting for some; undefined once closing. */
  async take(max: number): Promise<KafkaRecord[] | undefined> {
    while (this.#buffer.length === 0 && !this.#closing) {
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = undefined;
    }
    if (this.#closing) return undefined;
    const batch = this.#buffer.splice(0, max);
    if (this.#stream.isPaused() && this.#buffer.length < max) this.#stream.resume();
    return batch;
  }

  /**
   * Whether the consumer that delivered `record` is still this subscription's: a replaced consumer's
   * stream never settles a commit, and the new one resumes from the last commit that held.
   */
  delivers(record: KafkaRecord): boolean {
    return this.#deliveredBy.get(record) === this.#consumer;
  }

  /** Stops delivering: a pending take() returns undefined. */
  stopTaking(): void {
    this.#closing = true;
    this.#wake?.();
  }

  async close(): Promise<void> {
    this.stopTaking();
    await this.#reconnecting;
    this.#consumer.stopLagMonitoring();
    await this.#stream.close().catch(() => {});
    await this.#consumer.close(true).catch(() => {});
  }

  async #connect() {
    const { metrics, logger, batchMax } = this.#options;
    const next = new Consumer({
      groupId: this.#options.groupId,
      clientId: `flashgate-cache-maintainer-${process.pid}`,
      bootstrapBrokers: this.#options.brokers,
      deserializers: stringDeserializers,
      sessionTimeout: 10_000,
      heartbeatInterval: 1000,
      rebalanceTimeout: 20_000,
    });
    try {
      const stream = await next.consume({
        topics: [topics.sale, topics.activity, topics.heartbeat],
        mode: "committed",
        fallbackMode: "earliest",
        autocommit: false,
        maxWaitTime: 500,
      });
      this.#salePartitions =
        (await next.metadata({ topics: [topics.sale] })).topics.get(topics.sale)?.partitionsCount ?? 0;
      next.on("consumer:lag", (lag: Map<string, bigint[]>) => {
        this.#salePartitions = lag.get(topics.sale)?.length ?? this.#salePartitions;
        for (const [topic, partitions] of lag) {
          for (const [partition, value] of partitions.entries())
            metrics.consumerLag.set({ topic, partition }, Math.max(0, Number(value)));
        }
      });
      next.startLagMonitoring({ topics: [topics.sale, topics.activity] }, 5000);
      next.on("consumer:group:join", () => {
        if (this.#consumer !== next) return;
        this.#joined = true;
        this.#reportAssignments(next);
      });
      next.on("consumer:group:leave", () => {
        if (this.#consumer !== next) return;
        this.#joined = false;
        this.#reportAssignments(undefined);
      });
      stream.on("data", (message: KafkaRecord) => {
        this.#deliveredBy.set(message, next);
        this.#buffer.push(message);
        if (this.#buffer.length > 5 * batchMax) stream.pause();
        this.#wake?.();
      });
      stream.on("error", (error) => {
        logger.error({ err: error.message }, "consumer stream error; reconnecting");
        this.#reconnect(next);
      });
      this.#consumer = next;
      this.#stream = stream;
      this.#joined = true;
      this.#reportAssignments(next);
    } catch (error) {
      await next.close(true).catch(() => {});
      throw error;
    }
  }

  #reportAssignments(consumer: Consumer<string, string, string, string> | undefined) {
    for (const topic of [topics.sale, topics.activity, topics.heartbeat]) {
      const owned = consumer?.assignments?.find((a) => a.topic === topic)?.partitions.length ?? 0;
      this.#options.metrics.assignedPartitions.set({ topic }, owned);
    }
  }

  #reconnect(failed: Consumer<string, string, string, string>) {
    if (this.#closing || failed !== this.#consumer || this.#reconnecting) return;
    this.#joined = false;
    // The new consumer delivers these again from the group's last commit.
    this.#buffer.length = 0;
    this.#reconnecting = (async () => {
      failed.stopLagMonitoring();
      await this.#stream.close().catch(() => {});
      await failed.close(true).catch(() => {});
      for (let attempt = 1; !this.#closing; attempt++) {
        try {
          await this.#connect();
          this.#options.logger.info({ attempt }, "consumer reconnected");
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
      this.#reconnecting = undefined;
    });
  }
}
