// npm run bench:kafka-clients — the maintainer's consume-and-apply on the sale topic with each Kafka
// client, its own (kafkajs) and @platformatic/kafka, side by side in one run on the bench stack (no apps):
// the canary rerun on every upgrade of either. A burst of changes is consumed from the start by a fresh
// group, applied to Redis by the maintainer's own applier, offsets committed only after Redis holds a
// batch; then a burst during which the broker is killed (SIGKILL) and restarted.
import { redisClient, skuKeys, withScripts } from "@flashgate/cache";
import { topics } from "@flashgate/cdc";
import { createPool } from "@flashgate/db";
import { kafkaClient } from "@flashgate/kafka";
import { createLogger } from "@flashgate/logger";
import {
  createApplier,
  createDeadLetterSink,
  createMaintainerMetrics,
  createRebuilder,
  ensureTopics,
  startConsumer,
} from "@flashgate/maintainer";
import { readPid, up } from "@flashgate/stack";
import { loadSkuFromDatabase } from "@flashgate/sync";
import {
  Consumer,
  type Message,
  type MessagesStream,
  Producer,
  stringDeserializers,
  stringSerializers,
} from "@platformatic/kafka";
import { Kafka, logLevel } from "kafkajs";
import { startBenchStack } from "./lib/env.ts";
import { runFolder, writeResult } from "./lib/report.ts";
import { createCatalogue, newSale } from "./lib/sale.ts";

const quick = process.argv.includes("--quick");
const burst = quick ? 20_000 : 200_000;
const skus = 1000;
const batchMax = 2000;

const { ctx, env } = await startBenchStack();
const brokers = env.KAFKA_BROKERS.split(",");
const pool = createPool(env.DATABASE_URL, { connectionLimit: 8 });
const redis = withScripts(redisClient(env.REDIS_URL));
const logger = createLogger("bench-kafka-clients", "warn");
await ensureTopics(kafkaClient(brokers, "bench-topics", logger));
const admin = new Kafka({ clientId: "bench-admin", brokers, logLevel: logLevel.NOTHING }).admin();
await admin.connect();

const { activityId } = newSale();
await createCatalogue(pool, activityId, skus, 1_000_000);
/** Every SKU as MySQL holds it, at MySQL's position: each client applies the same burst to the same state. */
async function loadSkus() {
  for (let skuId = 1; skuId <= skus; skuId++) {
    const keys = skuKeys(activityId, skuId);
    await redis.del(keys.sku, keys.reservations, keys.reservationRequests);
    await loadSkuFromDatabase(pool, redis, activityId, skuId);
  }
}

let position = 0;
/** Each SKU's newest value in the topic: what Redis must hold once a group has caught up. */
const latest = new Map<number, number>();
const producer = new Producer({
  clientId: "bench-burst",
  bootstrapBrokers: brokers,
  serializers: stringSerializers,
});
/** `count` stock changes as Debezium writes them, keyed by SKU, after every real binlog position. */
async function produceBurst(count: number): Promise<void> {
  for (let sent = 0; sent < count; ) {
    const messages = [];
    for (let i = 0; i < 5000 && sent < count; i++, sent++) {
      const skuId = (sent % skus) + 1;
      position += 1;
      const available = 1_000_000 - position;
      latest.set(skuId, available);
      const row = { activity_id: activityId, sku_id: skuId, available, price_cents: 1000, currency: "EUR" };
      messages.push({
        topic: topics.sale,
        key: JSON.stringify({ activity_id: activityId, sku_id: skuId }),
        value: JSON.stringify({
          before: row,
          after: row,
          op: "u",
          source: { table: "sale_stock", file: "binlog.999999", pos: position, row: 0, ts_ms: Date.now() },
          ts_ms: Date.now(),
        }),
      });
    }
    await producer.send({ messages });
  }
}

async function lagOf(groupId: string): Promise<number> {
  const ends = await admin.fetchTopicOffsets(topics.sale);
  const [committed] = await admin.fetchOffsets({ groupId, topics: [topics.sale] });
  return ends.reduce((sum, end) => {
    const at = Number(committed.partitions.find((p) => p.partition === end.partition)?.offset ?? -1);
    return sum + Number(end.offset) - Math.max(0, at);
  }, 0);
}

async function untilCaughtUp(groupId: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await lagOf(groupId)) === 0) return;
    if (Date.now() > deadline) throw new Error(`${groupId} still behind after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Redis holds, for every SKU, the newest value of the topic: nothing lost, nothing applied out of order. */
async function wrongSkus(): Promise<number> {
  let wrong = 0;
  for (const [skuId, available] of latest)
    if (Number(await redis.hget(skuKeys(activityId, skuId).sku, "available")) !== available) wrong += 1;
  return wrong;
}

const applier = () => {
  const metrics = createMaintainerMetrics();
  const rebuilder = createRebuilder({ redis, pool, metrics, logger });
  return { metrics, applier: createApplier({ redis, pool, metrics, logger, isolate: rebuilder.isolate }) };
};

/** The maintainer's own consumer (kafkajs). */
async function kafkajs(groupId: string) {
  const { metrics, applier: apply } = applier();
  const kafka = kafkaClient(brokers, groupId, logger);
  const deadLetters = createDeadLetterSink(kafka);
  const consumer = await startConsumer({
    kafka,
    groupId,
    applier: apply,
    redis,
    deadLetters,
    metrics,
    logger,
    batchMax,
  });
  return async () => {
    await consumer.stop();
    await deadLetters.close();
  };
}

/**
 * The same loop on @platformatic/kafka, the maintainer's client before (ADR 0019): batches of at most
 * batchMax applied, then each partition's last offset committed; a stream that fails (the broker killed)
 * is joined again from the group's commits.
 */
async function platformatic(groupId: string) {
  const { applier: apply } = applier();
  let closing = false;
  let stream: MessagesStream<string, string, string, string> | undefined;
  const loop = (async () => {
    while (!closing) {
      const consumer = new Consumer({
        groupId,
        clientId: groupId,
        bootstrapBrokers: brokers,
        deserializers: stringDeserializers,
      });
      try {
        stream = await consumer.consume({
          topics: [topics.sale, topics.activity, topics.heartbeat],
          mode: "committed",
          fallbackMode: "earliest",
          autocommit: false,
          maxWaitTime: 500,
        });
        const batch: Message<string, string, string, string>[] = [];
        for await (const message of stream) {
          batch.push(message);
          if (batch.length < batchMax && stream.readableLength > 0) continue;
          await apply.applyBatch(batch);
          const last = new Map(batch.map((record) => [`${record.topic}:${record.partition}`, record]));
          await Promise.all([...last.values()].map((record) => record.commit()));
          batch.length = 0;
        }
      } catch {
        if (!closing) await new Promise((resolve) => setTimeout(resolve, 1000));
      } finally {
        await consumer.close(true).catch(() => {});
      }
    }
  })();
  return async () => {
    closing = true;
    await stream?.close().catch(() => {});
    await loop;
  };
}

const killKafka = () => {
  const pid = readPid(ctx.paths.pids, "kafka");
  if (pid === undefined) throw new Error("kafka is not running");
  process.kill(-pid, "SIGKILL");
};

const clients = { "@platformatic/kafka": platformatic, kafkajs };
type Client = keyof typeof clients;
// Two rounds, the order swapped: the second client of a round reads a longer topic on a warmer machine.
const rounds: Client[][] = [
  ["@platformatic/kafka", "kafkajs"],
  ["kafkajs", "@platformatic/kafka"],
];
const results: { round: number; client: Client; [figure: string]: number | string }[] = [];
try {
  // The first burst sits in the topic; each client's fresh group then reads it all from the start.
  await produceBurst(burst);
  for (const [round, order] of rounds.entries())
    for (const name of order) {
      const start = clients[name];
      const groupId = `bench-${name.replaceAll(/\W/g, "")}-${Date.now()}`;
      await loadSkus();
      const backlog = (await admin.fetchTopicOffsets(topics.sale)).reduce(
        (sum, p) => sum + Number(p.offset),
        0,
      );
      const started = performance.now();
      const stop = await start(groupId);
      await untilCaughtUp(groupId, 600_000);
      const seconds = (performance.now() - started) / 1000;
      const wrong = await wrongSkus();
      process.stderr.write(`  ${name}: ${backlog} records in ${seconds.toFixed(1)} s, ${wrong} SKUs wrong\n`);
      // Then a burst while the broker dies and comes back: the group resumes from its commits. A send the
      // dead broker refused is sent again (at newer positions, so the newest values still win) until the
      // restarted broker takes it.
      const resend = async (): Promise<void> => {
        for (let attempt = 1; ; attempt++) {
          try {
            return await produceBurst(quick ? 5_000 : 50_000);
          } catch (error) {
            if (attempt >= 30) throw error;
            await new Promise((resolve) => setTimeout(resolve, 1000));
          }
        }
      };
      const more = produceBurst(quick ? 5_000 : 50_000).catch(resend);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      killKafka();
      const killedAt = performance.now();
      await up(ctx, { withApps: false });
      await more;
      await untilCaughtUp(groupId, 300_000);
      const recoveredS = (performance.now() - killedAt) / 1000;
      const result = {
        round: round + 1,
        client: name,
        recordsInTopic: backlog,
        seconds: Number(seconds.toFixed(2)),
        recordsPerSecond: Math.round(backlog / seconds),
        wrongSkusAfterBurst: wrong,
        brokerKilledToCaughtUpS: Number(recoveredS.toFixed(1)),
        wrongSkusAfterBrokerKill: await wrongSkus(),
      };
      results.push(result);
      process.stderr.write(`  ${name}: ${JSON.stringify(result)}\n`);
      await stop();
    }
  const rate = (round: number, client: Client) =>
    Number(results.find((r) => r.round === round && r.client === client)?.recordsPerSecond);
  const ratios = rounds.map((_, i) =>
    Number((rate(i + 1, "@platformatic/kafka") / rate(i + 1, "kafkajs")).toFixed(2)),
  );
  process.stderr.write(
    `  → ${writeResult(runFolder({ quick: false, only: ["kafka-clients"] }), "kafka-clients", { burst, skus, batchMax, results, platformaticOverKafkajsPerRound: ratios })}\n`,
  );
  const wrong = results.filter((r) => r.wrongSkusAfterBurst || r.wrongSkusAfterBrokerKill);
  if (wrong.length) {
    process.stderr.write(`  ✗ a client lost or reordered changes: ${JSON.stringify(wrong)}\n`);
    process.exitCode = 1;
  }
} finally {
  await producer.close();
  await admin.disconnect().catch(() => {});
  await pool.end();
  redis.disconnect();
}
