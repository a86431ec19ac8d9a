import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout } from "node:timers/promises";
import {
  binlogSourceKey,
  cdcKeys,
  type FlashgateRedis,
  redisClient,
  skuKeys,
  withScripts,
} from "@flashgate/cache";
import { connectClient } from "@flashgate/connect";
import {
  createPool,
  databaseName,
  holdsGtid,
  type LostChange,
  lostChanges,
  parseGtidSet,
} from "@flashgate/db";
import { consumerGroup } from "@flashgate/maintainer";
import {
  adminConnection,
  databaseNodeName,
  databaseNodes,
  failover,
  instancePort,
  primaryNode,
  type RoleChange,
  readPid,
  repoRoot,
  switchover,
  up,
} from "@flashgate/stack";
import { reconcile } from "@flashgate/sync";
import {
  basicAuthorization,
  cachedAvailable,
  createSale,
  eventually,
  freshIds,
  skuInDatabase,
  stackEnv,
  testContext,
} from "@flashgate/testkit";
import { Admin, FindCoordinatorKeyTypes } from "@platformatic/kafka";
import type { Connection, Pool, RowDataPacket } from "mysql2/promise";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { binlogTransactions } from "./binlog-transactions.ts";
import { BuyerGate, disruptionMs, type Outcome, runBuyers } from "./buyers.ts";

/**
 * Each test runs a sale across both API instances, kills one process of the cluster topology with
 * SIGKILL in the middle of it, and checks what must hold whatever dies: every buyer ends with a true
 * answer (retrying 503s and dead connections with the same key), exactly the units are sold, every 201
 * is an order in MySQL and every order was answered 201 (none lost, none phantom), the ledger holds, and
 * the cache converges to MySQL by itself. The killed process is started again before the next test.
 */
const units = 150;
const buyers = 450;
const buyersAtOnce = 10;
/** Recovery per fault, written to test-artifacts/cluster-failover.json for the closing note and README. */
const recovery: Record<string, Record<string, number | string>> = {};

describe("the cluster topology during a sale", () => {
  const env = stackEnv();
  const ctx = testContext();
  const apis = [0, 1].map(
    (index) => `http://127.0.0.1:${instancePort(Number(env.FLASHGATE_API_PORT), index)}`,
  );
  let pool: Pool;
  /** The maintainers' account: what a failover lost is their finding (the API's account may not read it). */
  let findings: Pool;
  let redis: FlashgateRedis;
  /**
   * SKUs no buyer touches, a dozen so that some fall on every partition of the sale topic: a change to
   * all of them measures how long CDC takes to reach Redis after a fault, whichever consumer it hit.
   */
  const probe = freshIds();
  const probeSkus = Array.from({ length: 12 }, (_, i) => probe.skuId * 100 + i);
  /** The connector's stored GTID set right after the failover that lost commits: it holds them. */
  let offsetAfterFailover = "";
  const probeAvailable = () =>
    Promise.all(probeSkus.map((skuId) => cachedAvailable(redis, probe.activityId, skuId)));

  beforeAll(async () => {
    pool = createPool(env.DATABASE_URL, { connectionLimit: 4 });
    findings = createPool(env.MAINTAINER_DATABASE_URL, { connectionLimit: 1 });
    redis = withScripts(redisClient(env.REDIS_URL, { maxRetriesPerRequest: 3 }));
    redis.on("error", () => {});
    for (const skuId of probeSkus)
      await createSale(pool, { activityId: probe.activityId, skuId, units: 1_000 });
    await eventually(async () => expect(await probeAvailable()).toEqual(probeSkus.map(() => 1_000)), {
      timeoutMs: 60_000,
    });
  });

  // What a test killed comes back before the next (a killed Redis master rejoins as its successor's
  // replica), whether the test passed or not.
  afterEach(() => up(ctx).then(() => {}));

  afterAll(async () => {
    await pool?.end();
    await findings?.end();
    redis?.disconnect();
    const dir = join(repoRoot, "test-artifacts");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "cluster-failover.json"), `${JSON.stringify(recovery, null, 2)}\n`);
    console.table(recovery);
  });

  /** Signals a process of the topology, its whole group. */
  function signal(name: string, sent: NodeJS.Signals) {
    const pid = readPid(ctx.paths.pids, name);
    if (pid === undefined) throw new Error(`${name} is not running`);
    process.kill(-pid, sent);
  }

  function signalBrokers(sent: "SIGSTOP" | "SIGCONT") {
    for (const name of ["kafka-1", "kafka-2", "kafka-3"]) signal(name, sent);
  }

  /** Stops new purchases and waits until every buyer is held, none in flight. */
  async function holdBuyers(gate: BuyerGate) {
    gate.close();
    await eventually(async () => expect(gate.held).toBe(buyersAtOnce), { timeoutMs: 30_000, intervalMs: 50 });
  }

  function kill(name: string) {
    signal(name, "SIGKILL");
    return Date.now();
  }

  /** How long after `faultAt` changes committed to MySQL take to show in Redis, on every partition. */
  async function cdcRecoveryMs(faultAt: number): Promise<number> {
    const before = await probeAvailable();
    await pool.query("UPDATE sale_stock SET available = available + 1 WHERE activity_id = ?", [
      probe.activityId,
    ]);
    await eventually(async () => expect(await probeAvailable()).toEqual(before.map((units) => units + 1)), {
      timeoutMs: 120_000,
      intervalMs: 200,
    });
    return Date.now() - faultAt;
  }

  /**
   * A sale of `units` to `buyers` buyers (100 requests a second at most, so that the fault lands while
   * units remain); `fault` runs once a quarter of the units are sold and returns when it is injected.
   */
  async function saleWithFault(
    fault: (sale: { activityId: number; skuId: number }) => Promise<number>,
    options: {
      gate?: BuyerGate;
      /** What must hold once every buyer has an answer: by default, a sale that lost nothing. */
      expect?: (sale: { activityId: number; skuId: number }, outcomes: Outcome[]) => Promise<void>;
    } = {},
  ) {
    const sale = freshIds();
    await createSale(pool, { ...sale, units });
    await eventually(
      async () => expect(await cachedAvailable(redis, sale.activityId, sale.skuId)).toBe(units),
      {
        timeoutMs: 60_000,
      },
    );
    let sold = 0;
    let injected: Promise<number> | undefined;
    const userBase = (Date.now() % 1_000_000_000) * 1000;
    const { outcomes, attempts } = await runBuyers({
      apis,
      secret: env.AUTH_JWT_SECRET,
      sale,
      users: Array.from({ length: buyers }, (_, i) => userBase + i),
      concurrency: buyersAtOnce,
      paceMs: 100,
      gate: options.gate,
      onAnswer: (outcome) => {
        if (outcome.status === 201 && ++sold === Math.floor(units / 4)) injected = fault(sale);
      },
    });
    if (!injected) {
      const answers = Object.groupBy(outcomes, (o) => `${o.status} ${o.code ?? ""}`);
      throw new Error(`the fault was never injected; answers: ${Object.keys(answers).join(", ")}`);
    }
    const faultAt = await injected;
    await (options.expect ?? expectSoundSale)(sale, outcomes);
    return {
      sale,
      faultAt,
      disruptionMs: disruptionMs(attempts, faultAt),
      next201Ms:
        Math.min(...attempts.filter((a) => a.at >= faultAt && a.status === 201).map((a) => a.at)) - faultAt,
      retried: outcomes.filter((o) => o.attempts > 1).length,
      replayed: outcomes.filter((o) => o.status === 200).length,
    };
  }

  async function expectSoundSale(sale: { activityId: number; skuId: number }, outcomes: Outcome[]) {
    expect(outcomes).toHaveLength(buyers);
    // 200: a retry found the order its first attempt committed (on an API killed before it could answer).
    const bought = (o: Outcome) => o.status === 201 || (o.status === 200 && o.orderId !== undefined);
    const wrong = outcomes.filter((o) => !bought(o) && o.code !== "SOLD_OUT");
    expect(wrong, "every buyer ends with its order or SOLD_OUT").toEqual([]);
    const answered = outcomes.filter(bought).map((o) => `${o.userId}/${o.orderId}`);
    // Demand outlasted the units: none may be left unsold.
    expect(answered).toHaveLength(units);
    const [rows] = await pool.query(
      "SELECT user_id AS userId, order_id AS orderId FROM sale_order WHERE activity_id = ? AND sku_id = ?",
      [sale.activityId, sale.skuId],
    );
    const orders = (rows as { userId: number; orderId: string }[]).map((o) => `${o.userId}/${o.orderId}`);
    expect(orders.sort(), "every order answered is in MySQL, every order in MySQL was answered").toEqual(
      answered.sort(),
    );
    await expectSoldOutAndConverged(sale);
  }

  /** The ledger holds with every unit sold, and Redis has converged to MySQL. */
  async function expectSoldOutAndConverged(sale: { activityId: number; skuId: number }) {
    const ledger = await skuInDatabase(pool, sale.activityId, sale.skuId);
    expect(ledger.available + ledger.pending + ledger.paid).toBe(ledger.supply);
    expect(ledger.available).toBe(0);
    await expectInSync(sale, 90_000);
  }

  async function expectInSync(sale: { activityId: number; skuId: number }, timeoutMs: number) {
    await eventually(
      async () => {
        const check = await reconcile(pool, redis, {
          activityId: sale.activityId,
          repair: false,
          recordIncidents: false,
        });
        expect(check.skus.map((sku) => sku.verdict)).toEqual(["in-sync"]);
      },
      { timeoutMs, intervalMs: 500 },
    );
  }

  it("replicates every topic on the three brokers: Connect's, Debezium's and the CDC topics", async () => {
    const admin = new Admin({ clientId: "failover-test", bootstrapBrokers: env.KAFKA_BROKERS.split(",") });
    try {
      const names = (await admin.listTopics()).filter((name) => !name.startsWith("__consumer"));
      const { topics } = await admin.metadata({ topics: names });
      const replicas = Object.fromEntries(
        names.map((name) => [
          name,
          [...(topics.get(name)?.partitions.values() ?? [])].map((p) => p.replicas.length),
        ]),
      );
      for (const expected of [
        "flashgate.sale",
        "__debezium-heartbeat.flashgate",
        "flashgate-connect-offsets",
      ])
        expect(names).toContain(expected);
      for (const name of names) expect([...new Set(replicas[name])], name).toEqual([3]);
    } finally {
      await admin.close();
    }
  });

  it("kill -9 the Redis master of the sale's slot: its replica takes over, buyers get 503 meanwhile, never a wrong answer", async () => {
    const keys = (sale: { activityId: number; skuId: number }) => skuKeys(sale.activityId, sale.skuId).sku;
    let masterBefore = 0;
    let promotedAfterMs = 0;
    const result = await saleWithFault(async (sale) => {
      masterBefore = await masterPortOf(redis, keys(sale));
      const at = kill(`redis-${(masterBefore - Number(env.FLASHGATE_REDIS_PORT)) / 100 + 1}`);
      await eventually(async () => expect(await masterPortOf(redis, keys(sale))).not.toBe(masterBefore), {
        timeoutMs: 60_000,
        intervalMs: 200,
      });
      promotedAfterMs = Date.now() - at;
      return at;
    });
    recovery["redis master"] = {
      "replica promoted (ms)": promotedAfterMs,
      "503s until (ms)": result.disruptionMs,
      "buyers who retried": result.retried,
    };
    expect(await masterPortOf(redis, keys(result.sale))).not.toBe(masterBefore);
  });

  it("kill -9 the Kafka broker coordinating the maintainers' group mid-sale: no change lost, CDC resumes on the other two, no partition's committed offset ever moves back", async () => {
    const admin = new Admin({
      clientId: "failover-test-offsets",
      bootstrapBrokers: env.KAFKA_BROKERS.split(","),
    });
    const [coordinator] = await admin.findCoordinator({
      keyType: FindCoordinatorKeyTypes.GROUP,
      keys: [consumerGroup],
    });
    // Every partition's committed offset, read every 100 ms while the sale writes to every partition.
    const highest = new Map<string, bigint>();
    const movedBack: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const [group] = await admin.listConsumerGroupOffsets({ groups: [consumerGroup] }).catch(() => []);
        for (const topic of group?.topics ?? [])
          for (const { partitionIndex, committedOffset } of topic.partitions) {
            const partition = `${topic.name}:${partitionIndex}`;
            const before = highest.get(partition) ?? -1n;
            if (committedOffset < before) movedBack.push(`${partition}: ${before} → ${committedOffset}`);
            else highest.set(partition, committedOffset);
          }
        await setTimeout(100);
      }
    })();
    let cdcMs = 0;
    try {
      const result = await saleWithFault(async () => {
        const at = kill(`kafka-${coordinator.nodeId}`);
        cdcMs = await cdcRecoveryMs(at);
        return at;
      });
      recovery["kafka broker"] = {
        "CDC change in Redis after (ms)": cdcMs,
        "503s until (ms)": result.disruptionMs,
      };
    } finally {
      sampling = false;
      await sampler;
      await admin.close();
    }
    expect(highest.size).toBeGreaterThan(0);
    expect(movedBack).toEqual([]);
  });

  it("kill -9 the Connect worker running the connector's task: the task moves to the other worker and resumes from its offsets", async () => {
    const workers = [0, 1].map(
      (index) => `http://127.0.0.1:${instancePort(Number(env.FLASHGATE_CONNECT_PORT), index)}`,
    );
    let cdcMs = 0;
    const result = await saleWithFault(async () => {
      const status = await connectClient(workers[0]).status("flashgate-sale");
      const runningOn = status.tasks[0].worker_id;
      const index = workers.findIndex((url) => url.endsWith(runningOn.split(":")[1]));
      const at = kill(`connect-${index + 1}`);
      // In Redis first through the maintainers' stall fallback (MySQL read directly) if CDC is not back yet.
      cdcMs = await cdcRecoveryMs(at);
      await eventually(
        async () => {
          const [task] = (await connectClient(workers[1 - index]).status("flashgate-sale")).tasks;
          expect(task?.state).toBe("RUNNING");
          expect(task?.worker_id).not.toBe(runningOn);
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      // CDC itself flows again: a heartbeat committed after the kill has been applied.
      await eventually(
        async () => expect(Number(await redis.get(cdcKeys.heartbeatApplied))).toBeGreaterThan(at),
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      return at;
    });
    recovery["connect worker"] = {
      "CDC change in Redis after (ms)": cdcMs,
      "503s until (ms)": result.disruptionMs,
    };
  });

  it("kill -9 a cache-maintainer: its partitions move to the other, the batch in flight is applied again idempotently", async () => {
    const survivor = `http://127.0.0.1:${instancePort(Number(env.FLASHGATE_MAINTAINER_PORT), 1)}/metrics`;
    const salePartitions = async () =>
      Number(
        (await (await fetch(survivor)).text()).match(
          /flashgate_kafka_assigned_partitions\{topic="flashgate\.sale"\} (\d+)/,
        )?.[1],
      );
    expect(await salePartitions()).toBeLessThan(6);
    let cdcMs = 0;
    let movedMs = 0;
    const result = await saleWithFault(async () => {
      const at = kill("cache-maintainer-1");
      cdcMs = await cdcRecoveryMs(at);
      await eventually(async () => expect(await salePartitions()).toBe(6), {
        timeoutMs: 60_000,
        intervalMs: 200,
      });
      movedMs = Date.now() - at;
      return at;
    });
    recovery["cache-maintainer"] = {
      "all partitions on the other after (ms)": movedMs,
      "CDC change in Redis after (ms)": cdcMs,
      "503s until (ms)": result.disruptionMs,
    };
  });

  it("a planned database switchover mid-sale: nothing lost, the connector follows by GTID without a snapshot, buyers get 503 meanwhile", async () => {
    const connect = connectClient(`http://127.0.0.1:${env.FLASHGATE_CONNECT_PORT}`);
    const promoted = databaseNodes(ctx).find((node) => node !== primaryNode(ctx)) ?? 1;
    const oldPrimaryPort = instancePort(Number(env.FLASHGATE_DB_PORT), primaryNode(ctx) + 1);
    const newPrimary = await serverIdentity(promoted);
    const lostBefore = await lostChanges(findings, { limit: 100_000 });
    let change: RoleChange | undefined;
    let cdcMs = 0;
    const result = await saleWithFault(async () => {
      const at = Date.now();
      change = await switchover(ctx);
      cdcMs = await cdcRecoveryMs(at);
      return at;
    });
    expect(primaryNode(ctx)).toBe(promoted);
    // The connector reads the new primary's binlog from its GTID set: its offset names that server and
    // holds its transactions, and it took no snapshot.
    await eventually(
      async () => {
        const offset = await connect.sourceOffset("flashgate-sale");
        expect(offset?.server_id).toBe(newPrimary.id);
        expect(String(offset?.gtids)).toContain(newPrimary.uuid);
        expect(offset?.snapshot).toBeUndefined();
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(await lostChangesSince(findings, lostBefore)).toEqual([]);
    // The old primary, now a replica, is watched: the maintainers report it replicating, the dashboard its lag.
    await eventually(
      async () => {
        const metrics = await (await fetch(`${maintainers[0]}/metrics`)).text();
        expect(metrics).toMatch(
          new RegExp(`flashgate_database_replica_running\\{node="127\\.0\\.0\\.1:${oldPrimaryPort}"\\} 1`),
        );
        expect((await dashboardSnapshot()).database.replicaLagSeconds).not.toBeNull();
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    recovery["database switchover"] = {
      "writes refused (ms)": change?.writesStoppedMs ?? "",
      "503s until (ms)": result.disruptionMs,
      "CDC change in Redis after (ms)": cdcMs,
    };
  });

  it("kill -9 the database primary mid-sale while Kafka is held, the replica promoted: every commit it never received is named — those in Kafka before and those Connect could send only after the failover — none applied on top of the rebuild, no buyer's 201 vanishes silently", async () => {
    const primary = primaryNode(ctx);
    const promoted = databaseNodes(ctx).find((node) => node !== primary) ?? 1;
    const replica = await adminConnection(ctx, undefined, promoted);
    const source = await adminConnection(ctx, undefined, primary);
    const promotedIdentity = await serverIdentity(promoted);
    const lostBefore = await lostChanges(findings, { limit: 100_000 });
    const gate = new BuyerGate();
    let change: (RoleChange & { keptAside: string }) | undefined;
    const result = await saleWithFault(
      async (sale) => {
        // The replica stops receiving (a partition, a lagging link): what the primary commits from now
        // reaches CDC, and will be lost.
        await replica.query("STOP REPLICA IO_THREAD");
        const replicated = await ordersOf(replica, sale);
        await eventually(
          async () => expect((await ordersOf(pool, sale)).length).toBeGreaterThan(replicated.length + 10),
          {
            timeoutMs: 60_000,
            intervalMs: 100,
          },
        );
        // Held for a moment, so that these orders are in Kafka and the cache before Kafka is held.
        await holdBuyers(gate);
        await expectInSync(sale, 30_000);
        // Kafka held (every broker stopped): Debezium goes on reading what the primary commits from now,
        // and Connect's producer holds it until the brokers are back, after the failover was seen.
        signalBrokers("SIGSTOP");
        try {
          const beforeHold = (await ordersOf(pool, sale)).length;
          gate.open();
          await eventually(
            async () => expect((await ordersOf(pool, sale)).length).toBeGreaterThan(beforeHold + 10),
            { timeoutMs: 60_000, intervalMs: 100 },
          );
          // Every order a buyer was told of has been sent to Debezium when the primary dies (a commit
          // nobody but its buyer saw is the gap semi-sync closes: ADR 0023).
          await holdBuyers(gate);
          await eventually(async () => expect(await binlogSentToDebezium(source)).toBe(true), {
            timeoutMs: 30_000,
            intervalMs: 100,
          });
          const at = kill(databaseNodeName(ctx, primary));
          gate.open();
          change = await failover(ctx);
          // The maintainers have seen the new primary and rebuilt the cache from it; their read of the
          // topics waits for Kafka.
          await eventually(
            async () => {
              const [identity, forced, pending] = await redis.hmget(
                binlogSourceKey,
                "identity",
                "forced-rebuild",
                "lost-commit-check",
              );
              expect({ identity, forced, pending: pending !== null }).toEqual({
                identity: `${promotedIdentity.id}/${promotedIdentity.uuid}`,
                forced: null,
                pending: true,
              });
            },
            { timeoutMs: 90_000, intervalMs: 200 },
          );
          return at;
        } finally {
          signalBrokers("SIGCONT");
        }
      },
      { gate, expect: async (sale, outcomes) => expectSaleAfterLoss(sale, outcomes) },
    );
    await replica.end();
    await source.end().catch(() => {});
    recovery["database failover"] = {
      "first 201 after the kill (ms)": result.next201Ms,
      "503s until (ms)": result.disruptionMs,
      "writes refused, fence to promotion (ms)": change?.writesStoppedMs ?? "",
    };

    // What the old primary committed, read from its own binlog files: the transactions of the sale's
    // tables that the new primary lacks are exactly those named.
    const executed = parseGtidSet(
      String((await pool.query<RowDataPacket[]>("SELECT @@GLOBAL.gtid_executed AS g"))[0][0].g),
    );
    const lostTransactions = [...binlogTransactions(change?.keptAside ?? "").entries()]
      .filter(
        ([gtid, tables]) => !holdsGtid(executed, gtid) && [...tables].some((t) => saleTables.includes(t)),
      )
      .map(([gtid]) => gtid);
    expect(lostTransactions.length).toBeGreaterThan(0);
    const named = await eventually(
      async () => {
        const changes = await lostChangesSince(findings, lostBefore);
        expect([...new Set(changes.map((c) => c.gtid))].sort()).toEqual(lostTransactions.sort());
        return changes;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    // A restart of the connector after the failover (a worker's restart, a rebalance) finds its stored GTID
    // set holding the lost transactions, which the new primary lacks: the maintainers take them out of it,
    // and the connector streams on from where it was — no reset of its position, no snapshot.
    const connect = connectClient(`http://127.0.0.1:${env.FLASHGATE_CONNECT_PORT}`);
    offsetAfterFailover = String((await connect.sourceOffset("flashgate-sale"))?.gtids ?? "");
    const repositionsBefore = await repositions();
    const restartedAt = Date.now();
    await connect.restart("flashgate-sale", false);
    // Its restart refuses the stored set; the set loses exactly the lost transactions…
    await eventually(
      async () => {
        const offset = parseGtidSet(String((await connect.sourceOffset("flashgate-sale"))?.gtids ?? ""));
        expect(lostTransactions.filter((gtid) => holdsGtid(offset, gtid))).toEqual([]);
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    // …and the connector streams again from it.
    const trimmedAt = Date.now();
    await eventually(
      async () => {
        expect((await connect.status("flashgate-sale")).tasks[0]?.state).toBe("RUNNING");
        expect(Number(await redis.get(cdcKeys.heartbeatApplied))).toBeGreaterThan(trimmedAt);
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(await repositions()).toBe(repositionsBefore);
    recovery["database failover"]["connector restarted, streaming again after (ms)"] =
      Date.now() - restartedAt;

    // Named for the operator beyond the table: the maintainers' metric and the dashboard count them.
    await eventually(
      async () =>
        expect((await dashboardSnapshot()).database.lostChanges).toBe(lostBefore.length + named.length),
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    recovery["database failover"]["lost transactions named"] = lostTransactions.length;
    recovery["database failover"]["lost orders named"] = named.filter(
      (c) => c.table === "sale_order" && c.op === "c",
    ).length;
  });

  it("kill -9 both cache-maintainers while the connector stands stopped for a GTID trim: the next to start finishes it", async () => {
    expect(offsetAfterFailover, "the stored GTID set the failover left (the test before)").toBeTruthy();
    const connect = connectClient(`http://127.0.0.1:${env.FLASHGATE_CONNECT_PORT}`);
    // The connector's offset as the failover left it (as an operator restoring a backup of it would):
    // it holds the lost transactions again, its start refuses it, and a maintainer stops it to trim it.
    await connect.alterSourceOffset("flashgate-sale", (stored) => ({
      ...stored,
      gtids: offsetAfterFailover,
    }));
    await eventually(
      async () => expect((await connect.status("flashgate-sale")).connector.state).not.toBe("STOPPED"),
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    await eventually(
      async () => expect((await connect.status("flashgate-sale")).connector.state).toBe("STOPPED"),
      { timeoutMs: 90_000, intervalMs: 20 },
    );
    const at = kill("cache-maintainer-1");
    kill("cache-maintainer-2");
    await up(ctx);
    await eventually(
      async () => {
        expect((await connect.status("flashgate-sale")).tasks[0]?.state).toBe("RUNNING");
        expect(Number(await redis.get(cdcKeys.heartbeatApplied))).toBeGreaterThan(at);
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    await cdcRecoveryMs(at);
    recovery["database failover"]["maintainers killed mid-trim, streaming again after (ms)"] =
      Date.now() - at;
  }, 600_000);

  /**
   * After a failover that lost commits: every buyer still ends with an answer, the new primary sold
   * exactly the units (what was lost was sold again), and each buyer told of an order either has it on
   * the new primary or has it named as lost — never both, never neither.
   */
  async function expectSaleAfterLoss(sale: { activityId: number; skuId: number }, outcomes: Outcome[]) {
    expect(outcomes).toHaveLength(buyers);
    const bought = outcomes.filter((o) => o.status === 201 || (o.status === 200 && o.orderId !== undefined));
    expect(outcomes.filter((o) => !bought.includes(o) && o.code !== "SOLD_OUT")).toEqual([]);
    const kept = new Set((await ordersOf(pool, sale)).map((o) => o.orderId));
    expect(kept.size).toBe(units);
    const told = bought.map((o) => String(o.orderId));
    const missing = told.filter((orderId) => !kept.has(orderId)).sort();
    expect(missing.length).toBeGreaterThan(10);
    await eventually(
      async () => {
        const named = (await lostChanges(findings))
          .filter((c) => c.table === "sale_order" && c.op === "c" && c.activityId === sale.activityId)
          .map((c) => String(c.orderId));
        expect(named.sort()).toEqual(missing);
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    await expectSoldOutAndConverged(sale);
  }

  const maintainers = [0, 1].map(
    (index) => `http://127.0.0.1:${instancePort(Number(env.FLASHGATE_MAINTAINER_PORT), index)}`,
  );
  const dashboardSnapshot = async () =>
    (await (
      await fetch(`http://127.0.0.1:${env.FLASHGATE_DASHBOARD_PORT}/api/snapshot`, {
        headers: {
          authorization: basicAuthorization("operator", env.DASHBOARD_PASSWORD),
        },
      })
    ).json()) as {
      database: { replicaLagSeconds: number | null; lostChanges: number | null };
    };

  /** Resets of the connector's position by either maintainer. */
  const repositions = async () => {
    let total = 0;
    for (const url of maintainers) {
      const metrics = await (await fetch(`${url}/metrics`)).text();
      total += Number(/^flashgate_connector_repositions_total (\d+)/m.exec(metrics)?.[1] ?? 0);
    }
    return total;
  };

  async function serverIdentity(node: number): Promise<{ id: number; uuid: string }> {
    const admin = await adminConnection(ctx, undefined, node);
    try {
      const [[row]] = await admin.query<RowDataPacket[]>("SELECT @@server_id AS id, @@server_uuid AS uuid");
      return { id: Number(row.id), uuid: String(row.uuid) };
    } finally {
      await admin.end();
    }
  }

  it("kill -9 a purchase API: buyers retry on the other with the same key and get the truth", async () => {
    const result = await saleWithFault(async () => kill("purchase-api-1"));
    recovery["purchase-api"] = {
      "next 201 after (ms)": result.next201Ms,
      "buyers who retried": result.retried,
      "retries answered with the order an attempt had committed": result.replayed,
    };
    expect(result.retried).toBeGreaterThan(0);
  });
});

const saleTables = ["sale_stock", "sale_order", "activity"];

/** Whether the primary has written its whole binlog to Debezium's connection (its dump thread waits). */
async function binlogSentToDebezium(primary: Connection): Promise<boolean> {
  const [threads] = await primary.query<RowDataPacket[]>(
    "SELECT STATE AS state FROM performance_schema.processlist WHERE COMMAND LIKE 'Binlog Dump%'",
  );
  return threads.length > 0 && threads.every((thread) => /has sent all binlog/i.test(String(thread.state)));
}

async function ordersOf(db: Pool | Connection, sale: { activityId: number; skuId: number }) {
  const [rows] = await db.query<RowDataPacket[]>(
    `SELECT order_id AS orderId FROM \`${databaseName}\`.sale_order WHERE activity_id = ? AND sku_id = ?`,
    [sale.activityId, sale.skuId],
  );
  return rows as { orderId: string }[];
}

/** The port of the master serving a key's slot, as the cluster itself reports it now. */
async function masterPortOf(redis: FlashgateRedis, key: string): Promise<number> {
  const slot = (await redis.call("CLUSTER", "KEYSLOT", key)) as number;
  const ranges = (await redis.call("CLUSTER", "SLOTS")) as [number, number, [string, number]][];
  const range = ranges.find(([start, end]) => slot >= start && slot <= end);
  if (!range) throw new Error(`no master serves slot ${slot}`);
  return range[2][1];
}

/**
 * The lost changes recorded since `before` was read: the cluster's home outlives a run, and with it the
 * lost changes an earlier run's failover named.
 */
async function lostChangesSince(pool: Pool, before: LostChange[]): Promise<LostChange[]> {
  const seen = new Set(before.map((change) => `${change.gtid} ${change.binlogPosition}`));
  return (await lostChanges(pool, { limit: 100_000 })).filter(
    (change) => !seen.has(`${change.gtid} ${change.binlogPosition}`),
  );
}
