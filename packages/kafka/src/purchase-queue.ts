import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "@flashgate/logger";
import type { Kafka, KafkaMessage } from "kafkajs";

/**
 * The queue of admitted buyers (ADR 0030): a topic keyed by SKU, so one SKU's buyers stay in order on one
 * partition and a writer decides them together; its writers share one consumer group.
 */
export const purchaseQueue = {
  topic: "flashgate.purchase-queue",
  writerGroup: "flashgate-purchase-writer",
  partitions: 12,
} as const;

/** A buyer the cache admitted and the queue holds: what the writer decides. */
export interface QueuedBuyer {
  activityId: number;
  skuId: number;
  userId: string;
  requestId: string;
  queuedAtMs: number;
  traceId: string;
}

/** The queue did not take a buyer (Kafka unreachable, or failing a moment ago): nothing was queued for sure. */
export class QueueUnavailableError extends Error {
  override name = "QueueUnavailableError";
}

const encode = (buyer: QueuedBuyer) => ({
  key: `${buyer.activityId}:${buyer.skuId}`,
  value: JSON.stringify(buyer),
});

function decode(message: KafkaMessage): QueuedBuyer | undefined {
  try {
    const buyer = JSON.parse(message.value?.toString() ?? "") as QueuedBuyer;
    const valid =
      Number.isSafeInteger(buyer.activityId) &&
      Number.isSafeInteger(buyer.skuId) &&
      typeof buyer.userId === "string" &&
      typeof buyer.requestId === "string" &&
      Number.isFinite(buyer.queuedAtMs);
    return valid ? { ...buyer, traceId: String(buyer.traceId ?? "") } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Creates the queue's topic when missing. Replicas as the brokers default to: 1 on the single stack, 3
 * with two in sync on a cluster, which `acks: -1` then waits for.
 */
export async function ensurePurchaseQueue(kafka: Kafka, partitions: number) {
  const admin = kafka.admin();
  await admin.connect();
  try {
    if (!(await admin.listTopics()).includes(purchaseQueue.topic))
      await admin.createTopics({
        topics: [{ topic: purchaseQueue.topic, numPartitions: partitions }],
        waitForLeaders: true,
      });
  } finally {
    await admin.disconnect();
  }
}

/**
 * Puts admitted buyers on the queue: the buyers of one turn of the event loop in one request, each
 * acknowledged by every in-sync replica. A send that fails or outlasts `sendTimeoutMs` refuses its
 * buyers, and the next `pauseMs` refuse at once: a buyer is never held waiting on a Kafka that is away.
 */
export function createQueueProducer(
  kafka: Kafka,
  options: { sendTimeoutMs: number; pauseMs: number; maxBatch: number; logger: Logger },
) {
  const producer = kafka.producer({
    allowAutoTopicCreation: false,
    retry: { retries: 2, initialRetryTime: 50, maxRetryTime: options.sendTimeoutMs },
  });
  let connected: Promise<void> | undefined;
  const connect = () => {
    connected ??= producer.connect().catch((error) => {
      connected = undefined;
      throw error;
    });
    return connected;
  };
  let downUntil = 0;
  let pending: { buyer: QueuedBuyer; resolve: () => void; reject: (error: Error) => void }[] = [];

  function flush() {
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no acknowledgement in ${options.sendTimeoutMs} ms`)),
        options.sendTimeoutMs,
      );
    });
    const sent = connect().then(() =>
      producer.send({
        topic: purchaseQueue.topic,
        acks: -1,
        timeout: options.sendTimeoutMs,
        messages: batch.map(({ buyer }) => encode(buyer)),
      }),
    );
    Promise.race([sent, deadline]).then(
      () => {
        clearTimeout(timer);
        for (const { resolve } of batch) resolve();
      },
      (error: Error) => {
        clearTimeout(timer);
        downUntil = Date.now() + options.pauseMs;
        options.logger.warn(
          { err: error.message, buyers: batch.length },
          "the purchase queue refused a send",
        );
        for (const { reject } of batch) reject(new QueueUnavailableError(error.message));
      },
    );
    // A send past its deadline may still end either way; its outcome is the writer's to find (idempotent).
    sent.catch(() => {});
  }

  return {
    send(buyer: QueuedBuyer): Promise<void> {
      if (Date.now() < downUntil)
        return Promise.reject(new QueueUnavailableError("the purchase queue failed a moment ago"));
      return new Promise((resolve, reject) => {
        pending.push({ buyer, resolve, reject });
        if (pending.length >= options.maxBatch) flush();
        else if (pending.length === 1) setImmediate(flush);
      });
    },
    /** False for `pauseMs` after a send failed: a buyer then goes to the database at once. */
    accepting: () => Date.now() >= downUntil,
    close: () => producer.disconnect(),
  };
}

export type QueueProducer = ReturnType<typeof createQueueProducer>;

/**
 * How many queued buyers the writers have not decided (the queue's end minus the writers' committed
 * offsets), and how fast buyers arrived on it over the last read, read every `intervalMs`; the last
 * figures read stand while Kafka does not answer.
 */
export function followQueueBacklog(kafka: Kafka, intervalMs: number, logger: Logger) {
  const admin = kafka.admin();
  let backlog = 0;
  let arrivalsPerSecond = 0;
  let lastEnd: { total: number; at: number } | undefined;
  /** Figures older than three reads are unknown, and count as none (Kafka away: no queue to bound). */
  const fresh = () => lastEnd !== undefined && performance.now() - lastEnd.at < 3 * intervalMs;
  let connected = false;
  async function read() {
    if (!connected) {
      await admin.connect();
      connected = true;
    }
    const [ends, [committed]] = await Promise.all([
      admin.fetchTopicOffsets(purchaseQueue.topic),
      admin.fetchOffsets({ groupId: purchaseQueue.writerGroup, topics: [purchaseQueue.topic] }),
    ]);
    const decidedTo = new Map(committed?.partitions.map((p) => [p.partition, Number(p.offset)]));
    backlog = ends.reduce((sum, end) => {
      const from = decidedTo.get(end.partition) ?? -1;
      return sum + Number(end.high) - (from >= 0 ? from : Number(end.low));
    }, 0);
    const end = { total: ends.reduce((sum, e) => sum + Number(e.high), 0), at: performance.now() };
    if (lastEnd) arrivalsPerSecond = ((end.total - lastEnd.total) * 1000) / Math.max(1, end.at - lastEnd.at);
    lastEnd = end;
  }
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await read().catch((error) =>
        logger.warn({ err: error.message }, "the purchase queue's backlog unread"),
      );
      await sleep(intervalMs);
    }
  })();
  return {
    backlog: () => (fresh() ? backlog : 0),
    arrivalsPerSecond: () => (fresh() ? arrivalsPerSecond : 0),
    async stop() {
      stopped = true;
      await loop;
      if (connected) await admin.disconnect();
    },
  };
}

export type QueueBacklog = ReturnType<typeof followQueueBacklog>;

/**
 * Whether a writer holds a fetched batch (its buyers' times in line, oldest first) a while longer: until
 * its newest buyer has been in line `quietMs`, and while buyers arrive faster than `yieldAbove` a second —
 * the batch's own pace, or the queue's — but never once its oldest buyer has waited `maxDeferMs`.
 */
export function holdsBatch(
  queuedAtMs: number[],
  nowMs: number,
  queueArrivalsPerSecond: number,
  rule: { quietMs: number; yieldAbove: number; maxDeferMs: number },
): boolean {
  if (queuedAtMs.length === 0) return false;
  const oldest = queuedAtMs[0];
  const newest = queuedAtMs[queuedAtMs.length - 1];
  if (nowMs - oldest >= rule.maxDeferMs) return false;
  const pace = newest > oldest ? ((queuedAtMs.length - 1) * 1000) / (newest - oldest) : 0;
  const rushing = (perSecond: number) => rule.yieldAbove > 0 && perSecond > rule.yieldAbove;
  return nowMs - newest < rule.quietMs || rushing(pace) || rushing(queueArrivalsPerSecond);
}

/**
 * The queue's writer: its partitions' buyers handed to `decide` at most `maxPerDecide` at a time, which
 * answers how many of them, from the first, are decided and told; only those are committed. The rest are
 * handed again after `retryPauseMs` (the database away, an unknown outcome) while this writer holds the
 * partition, its heartbeats sent meanwhile. A batch waits until its newest buyer has been in line
 * `quietMs`, and while buyers arrive faster than `yieldAbove` a second — the batch's own buyers' pace, or
 * the queue's (`queueArrivals`) — until its first buyer has waited `maxDeferMs`: a rush's admissions keep
 * the machine, and its buyers are decided after it in few, large transactions (ADR 0030). A consumer
 * kafkajs gives up on is reported through `onStopped`.
 */
export async function runQueueWriter(
  kafka: Kafka,
  options: {
    decide: (buyers: QueuedBuyer[]) => Promise<number>;
    maxPerDecide: number;
    partitionsAtOnce: number;
    retryPauseMs: number;
    queueArrivals: () => number;
    yieldAbove: number;
    quietMs: number;
    maxDeferMs: number;
    onStopped: () => void;
    logger: Logger;
  },
) {
  const { logger } = options;
  const consumer = kafka.consumer({
    groupId: purchaseQueue.writerGroup,
    sessionTimeout: 10_000,
    heartbeatInterval: 1000,
    // A fetch waits this long only while the queue is empty: a buyer put on it is fetched at once.
    maxWaitTimeInMs: 1000,
    allowAutoTopicCreation: false,
  });
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    logger.error({ err: payload.error.message, restart: payload.restart }, "the purchase writer crashed");
    if (!payload.restart) options.onStopped();
  });
  await consumer.connect();
  await consumer.subscribe({ topic: purchaseQueue.topic, fromBeginning: true });
  await consumer.run({
    partitionsConsumedConcurrently: options.partitionsAtOnce,
    autoCommitThreshold: 1,
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning }) => {
      const buyers: { buyer: QueuedBuyer; offset: string }[] = [];
      for (const message of batch.messages) {
        const buyer = decode(message);
        if (buyer) buyers.push({ buyer, offset: message.offset });
        else
          logger.error(
            { partition: batch.partition, offset: message.offset },
            "a malformed queued buyer skipped",
          );
      }
      const times = buyers.map(({ buyer }) => buyer.queuedAtMs);
      while (holdsBatch(times, Date.now(), options.queueArrivals(), options) && isRunning()) {
        await sleep(50);
        await heartbeat();
      }
      // kafkajs sends heartbeats only when asked: a long decision must not cost this writer its partitions.
      // A heartbeat refused (the group rebalancing) ends the batch: its buyers go to whoever holds them next.
      let lost: unknown;
      const beating = setInterval(() => {
        heartbeat().catch((error) => {
          lost ??= error;
        });
      }, 1000);
      try {
        let done = 0;
        while (done < buyers.length && isRunning() && lost === undefined) {
          const next = buyers.slice(done, done + options.maxPerDecide);
          const decided = await options.decide(next.map(({ buyer }) => buyer)).catch((error: Error) => {
            logger.error(
              { err: error.message, partition: batch.partition },
              "queued buyers undecided; retrying",
            );
            return 0;
          });
          if (decided > 0) {
            done += decided;
            resolveOffset(buyers[done - 1].offset);
            await commitOffsetsIfNecessary();
          }
          if (decided < next.length) await sleep(options.retryPauseMs);
        }
        if (lost !== undefined) throw lost;
        // Skipped malformed messages after the last buyer are passed with the batch.
        if (done === buyers.length) resolveOffset(batch.lastOffset());
      } finally {
        clearInterval(beating);
      }
    },
  });
  return { stop: () => consumer.disconnect() };
}
