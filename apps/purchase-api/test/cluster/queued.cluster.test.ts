import { kafkaClient, purchaseQueue } from "@flashgate/kafka";
import { createLogger } from "@flashgate/logger";
import { readPid, up } from "@flashgate/stack";
import {
  createSale,
  eventually,
  freshIds,
  skuInDatabase,
  sold,
  stackEnv,
  testContext,
} from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Queued admission (ADR 0030) on the production topology: three brokers, the queue's topic replicated on
 * all three with two in sync, the stack's two purchase APIs its writers. An API that only admits queues a
 * sale's buyers while the broker leading the sale's partition is killed with SIGKILL.
 */
describe("queued admission on the cluster topology", () => {
  const env = stackEnv();
  const ctx = testContext();
  let api: ApiHarness;
  const kafka = kafkaClient(
    env.KAFKA_BROKERS.split(","),
    "queued-cluster-test",
    createLogger("test", "silent"),
  );
  const admin = kafka.admin();

  beforeAll(async () => {
    api = await startApi({
      env: {
        KAFKA_BROKERS: env.KAFKA_BROKERS,
        PURCHASE_ADMISSION: "queued",
        QUEUE_WRITER: "off",
        QUEUE_SEND_TIMEOUT_MS: "2000",
      },
    });
    await admin.connect();
  }, 120_000);
  afterAll(async () => {
    await admin.disconnect();
    await api?.close();
  });

  const buy = (userId: number, sale: { activityId: number; skuId: number }) =>
    api.purchase(userId, sale).then((answer) => ({ userId, ...answer }));
  const outcome = async (userId: number, key: string) => (await api.outcome(userId, key)).state;
  const queueEnds = async () =>
    new Map((await admin.fetchTopicOffsets(purchaseQueue.topic)).map((p) => [p.partition, Number(p.high)]));

  it("kill -9 the broker leading the sale's queue partition mid-sale: no ticket lost, every 202 one order, nothing 5xx", async () => {
    const sale = freshIds();
    const units = 200;
    await createSale(api.pool, { ...sale, units });
    await api.load(sale.activityId, sale.skuId);
    const userBase = (Date.now() % 1_000_000_000) * 1000;

    const before = await queueEnds();
    const first = await Promise.all(Array.from({ length: 50 }, (_, i) => buy(userBase + i, sale)));
    expect(first.map((answer) => answer.status)).toEqual(Array(50).fill(202));
    const after = await queueEnds();
    const [partition] = [...after].find(([p, high]) => high > (before.get(p) ?? 0)) ?? [];
    const metadata = await admin.fetchTopicMetadata({ topics: [purchaseQueue.topic] });
    const leader = metadata.topics[0].partitions.find((p) => p.partitionId === partition)?.leader;
    expect(leader).toBeDefined();
    const pid = readPid(ctx.paths.pids, `kafka-${leader}`);
    if (pid === undefined) throw new Error(`kafka-${leader} is not running`);
    process.kill(-pid, "SIGKILL");
    try {
      // The rest, ten at a time, while the partition's leadership moves: queued (202) or, while the
      // queue does not acknowledge, decided at once (201); never a 5xx.
      const rest = [];
      for (let i = 50; i < units; i += 10)
        rest.push(...(await Promise.all(Array.from({ length: 10 }, (_, j) => buy(userBase + i + j, sale)))));
      const answers = [...first, ...rest];
      expect(answers.filter((answer) => answer.status !== 202 && answer.status !== 201)).toEqual([]);
      const queued = answers.filter((answer) => answer.status === 202);
      const outcomes = await Promise.all(queued.map((answer) => outcome(answer.userId, answer.key)));
      expect(outcomes).toEqual(Array(queued.length).fill("CREATED"));
      const [orders] = await api.pool.query<RowDataPacket[]>(
        "SELECT user_id FROM sale_order WHERE activity_id = ? AND sku_id = ?",
        [sale.activityId, sale.skuId],
      );
      expect(orders.length).toBe(units);
      expect(new Set(orders.map((order) => order.user_id)).size).toBe(units);
      expect(sold(await skuInDatabase(api.pool, sale.activityId, sale.skuId))).toBe(units);
    } finally {
      await up(ctx);
    }
    // The broker back: the queue takes buyers again and its writers decide them.
    const again = freshIds();
    await createSale(api.pool, { ...again, units: 10 });
    await api.load(again.activityId, again.skuId);
    let next = userBase + units;
    const answer = await eventually(
      async () => {
        const queued = await buy(next++, again);
        expect(queued.status).toBe(202);
        return queued;
      },
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    expect(await outcome(answer.userId, answer.key)).toBe("CREATED");
  }, 300_000);
});
