import { readFileSync } from "node:fs";
import { join } from "node:path";
import { binlogSourceKey, readCachedSku } from "@flashgate/cache";
import { connectClient, isRunning } from "@flashgate/connect";
import { createLogger } from "@flashgate/logger";
import { driftIncidents } from "@flashgate/sync";
import {
  type AppProcess,
  cachedAvailable,
  clients,
  createSale,
  eventually,
  expectConverged,
  freshIds,
  maintainerMetric,
  stackEnv,
  startMaintainer,
  startTcpProxy,
  testContext,
  testEngine,
} from "@flashgate/testkit";
import { type ApiHarness, soldOutSale } from "@flashgate/testkit/purchase-api";
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { createConnectorSupervisor } from "../src/connector-supervisor.ts";
import { createMaintainerMetrics } from "../src/metrics.ts";
import {
  asRoot,
  cdcOutageFixture,
  connector,
  expectCdcFlows,
  failTaskByWrongPassword,
  resetBinlog,
  resetStatement,
  restockSoldFromMysql,
  setAvailable,
  setDebeziumPassword,
  soldOut,
} from "./cdc-faults.ts";

/** What each recovery took, for the closing note and the README (test-artifacts/cdc-healing.json). */
const timings: Record<string, number> = {};

describe("CDC heals itself", () => {
  const c = clients();
  let maintainer: AppProcess;
  beforeAll(async () => {
    // The cache can learn of MySQL only through CDC here: what reaches Redis proves the pipeline.
    maintainer = await startMaintainer({ CDC_STALL_MS: "0", LOG_LEVEL: "info" });
  });
  afterAll(async () => {
    try {
      await setDebeziumPassword(testContext().secrets.debeziumDbPassword);
      await expectCdcFlows(c);
    } finally {
      await maintainer.kill();
      await c.close();
    }
  }, 300_000);

  it("a task FAILED by a wrong database password is restarted with backoff while it lasts, and the reason is in Connect's log", async () => {
    const connect = connectClient(stackEnv().KAFKA_CONNECT_URL);
    let sale: Awaited<ReturnType<typeof failTaskByWrongPassword>>;
    try {
      sale = await failTaskByWrongPassword(c);
      // The outage lasts until the supervisor has restarted the task twice and it failed again each time.
      const outage = Date.now();
      await eventually(
        async () =>
          expect(
            await maintainerMetric(maintainer, "flashgate_connector_restarts_total"),
          ).toBeGreaterThanOrEqual(2),
        { timeoutMs: 60_000, intervalMs: 250 },
      );
      timings.outageUntilSecondRestart = Date.now() - outage;
      timings.restartsDuringOutage = await maintainerMetric(maintainer, "flashgate_connector_restarts_total");
    } finally {
      await setDebeziumPassword(testContext().secrets.debeziumDbPassword);
    }
    const fixed = Date.now();
    await setAvailable(c, sale, 9);
    // Nobody calls restart: the supervisor's next attempt (at most one backoff step away) succeeds.
    await eventually(
      async () => expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(9),
      {
        timeoutMs: 120_000,
        intervalMs: 250,
      },
    );
    timings.passwordFixedToApplied = Date.now() - fixed;
    expect((await connect.status(connector)).tasks.every((task) => task.state === "RUNNING")).toBe(true);
    const log = readFileSync(join(testContext().paths.logs, "connect.log"), "utf8");
    expect(log).toMatch(/Access denied for user 'debezium'/);
    expect(maintainer.output()).toMatch(/connector FAILED; restarting it/);
  }, 240_000);

  it(`a real ${resetStatement} while the connector streams: detected, every cached SKU rebuilt into the new history, the restock right after reaches Redis, and later changes too`, async () => {
    const sale = await soldOut(c);
    // A SKU nobody changes after the reset: only the watchdog's rebuild can move its cached position into
    // the new history, where the position guard lets later changes through.
    const quiet = freshIds();
    await createSale(c.pool, { ...quiet, units: 3 });
    await expectConverged(c, quiet.activityId, quiet.skuId);
    const quietBefore = (await readCachedSku(c.redis, quiet.activityId, quiet.skuId))?.position;
    const detectedBefore = await maintainerMetric(maintainer, "flashgate_binlog_source_changes_total");
    await resetBinlog();
    const reset = Date.now();
    await setAvailable(c, sale, 5);
    await eventually(
      async () => expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(5),
      {
        timeoutMs: 120_000,
        intervalMs: 250,
      },
    );
    timings.resetWhileStreamingToRestockApplied = Date.now() - reset;
    await setAvailable(c, sale, 4);
    await eventually(
      async () => expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(4),
      {
        timeoutMs: 60_000,
      },
    );
    await expectConverged(c, sale.activityId, sale.skuId);
    expect(await maintainerMetric(maintainer, "flashgate_binlog_source_changes_total")).toBeGreaterThan(
      detectedBefore,
    );
    expect((await readCachedSku(c.redis, quiet.activityId, quiet.skuId))?.position).toSatisfy(
      (position) => typeof position === "string" && quietBefore !== undefined && position < quietBefore,
    );
    await setAvailable(c, quiet, 1);
    await eventually(async () =>
      expect(await cachedAvailable(c.redis, quiet.activityId, quiet.skuId)).toBe(1),
    );
    // MariaDB's task fails on the reset and is repositioned: the next test starts from a whole pipeline.
    await expectCdcFlows(c);
  }, 300_000);

  it(`a real ${resetStatement} while the connector is stopped (a restore, a replaced primary): its stored position is taken for lost and reset, and the restock reaches Redis`, async () => {
    const sale = await soldOut(c);
    const connect = connectClient(stackEnv().KAFKA_CONNECT_URL);
    const repositions = await maintainerMetric(maintainer, "flashgate_connector_repositions_total");
    await connect.stop(connector);
    let reset: number;
    try {
      // A task failing as it stops is stopped all the same.
      await connect.waitUntil(connector, (status) => status?.connector.state === "STOPPED", {
        failedGraceMs: 60_000,
      });
      await resetBinlog();
      reset = Date.now();
      await setAvailable(c, sale, 5);
    } finally {
      // Nobody but this test would start a stopped connector again: the files after it need CDC.
      await connect.resume(connector);
    }
    await eventually(
      async () => expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(5),
      {
        timeoutMs: 180_000,
        intervalMs: 250,
      },
    );
    timings.resetWhileStoppedToRestockApplied = Date.now() - reset;
    await eventually(
      async () =>
        expect(await maintainerMetric(maintainer, "flashgate_connector_repositions_total")).toBeGreaterThan(
          repositions,
        ),
      { timeoutMs: 60_000 },
    );
    expect(maintainer.output()).toMatch(/binlog position is lost/);
    // The reset may still be under way (stopped, its failed task not yet gone): it ends RUNNING.
    await connect.waitUntil(connector, isRunning, { timeoutMs: 120_000, failedGraceMs: 120_000 });
    await connect.runningFor(connector, 2000, 120_000);
    // Streaming again, not one snapshot or the maintainer's rebuild: the next change flows through CDC.
    await setAvailable(c, sale, 4);
    await eventually(
      async () => expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(4),
      {
        timeoutMs: 60_000,
      },
    );
    await expectConverged(c, sale.activityId, sale.skuId);
  }, 300_000);

  it("a real PURGE BINARY LOGS of the file the stored offset still names, while the reader is in the next: no reset, streaming goes on", async () => {
    const connect = connectClient(stackEnv().KAFKA_CONNECT_URL);
    await expectCdcFlows(c);
    const metrics = createMaintainerMetrics();
    const supervisor = createConnectorSupervisor({
      connect,
      connector,
      pool: c.pool,
      redis: c.redis,
      metrics,
      logger: createLogger("supervisor-test", "silent"),
    });
    const repositions = await maintainerMetric(maintainer, "flashgate_connector_repositions_total");
    // A DBA rotates and purges; the offset Connect stored (flushed every second) still names the purged
    // file for a moment while Debezium reads the new one. Tried until that moment is caught.
    await eventually(
      async () => {
        const purged = await asRoot(async (admin) => {
          const names = async () => {
            const [logs] = await admin.query<RowDataPacket[]>("SHOW BINARY LOGS");
            return logs.map((log) => String(log.Log_name));
          };
          await admin.query("FLUSH BINARY LOGS");
          const before = await names();
          // MariaDB keeps a file a reader still has open (a warning, not an error): purged is what went.
          await admin.query("PURGE BINARY LOGS TO ?", [before[before.length - 1]]);
          const after = await names();
          return before.filter((name) => !after.includes(name));
        });
        const stored = await connect.sourceOffset(connector);
        expect(purged).toContain(stored?.file);
        await supervisor.check();
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    expect((await metrics.connectorRepositions.get()).values[0]?.value ?? 0).toBe(0);
    // Debezium streams on from where it is: the next restock arrives through CDC, no reset, no snapshot.
    const sale = await soldOut(c);
    await setAvailable(c, sale, 5);
    await eventually(async () => expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(5));
    expect(await maintainerMetric(maintainer, "flashgate_connector_repositions_total")).toBe(repositions);
  }, 300_000);

  it(`a maintainer SIGKILLed while its reset of a lost position has the connector stopped (after a real ${resetStatement}): the next one finishes the reset`, async () => {
    const sale = await soldOut(c);
    const connectUrl = stackEnv().KAFKA_CONNECT_URL;
    const connect = connectClient(connectUrl);
    // This maintainer reaches Connect through a link that never delivers a DELETE: its reset is held
    // with the connector stopped by it and its offsets not yet deleted, however fast the machine.
    const link = await startTcpProxy(Number(new URL(connectUrl).port), {
      withhold: (data) => data.toString("latin1", 0, 7) === "DELETE ",
    });
    try {
      await maintainer.kill();
      maintainer = await startMaintainer({
        CDC_STALL_MS: "0",
        LOG_LEVEL: "info",
        KAFKA_CONNECT_URL: `http://127.0.0.1:${link.port}`,
      });
      await connect.stop(connector);
      try {
        await connect.waitUntil(connector, (status) => status?.connector.state === "STOPPED", {
          failedGraceMs: 60_000,
        });
        await resetBinlog();
        await setAvailable(c, sale, 5);
      } finally {
        await connect.resume(connector);
      }
      // The supervisor finds the position lost, stops the connector and asks to delete its offsets: killed then.
      await eventually(async () => expect(link.withheld).toBeGreaterThan(0), {
        timeoutMs: 60_000,
        intervalMs: 10,
      });
      expect(maintainer.output()).toMatch(/binlog position is lost/);
      expect((await connect.status(connector)).connector.state).toBe("STOPPED");
      await maintainer.kill("SIGKILL");
    } finally {
      await link.close();
    }
    const killed = Date.now();
    maintainer = await startMaintainer({ CDC_STALL_MS: "0", LOG_LEVEL: "info" });
    await eventually(
      async () => expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(5),
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    timings.resetterKilledToRestockApplied = Date.now() - killed;
    await expectCdcFlows(c);
  }, 300_000);

  it(`a maintainer SIGKILLed during the forced rebuild after a real ${resetStatement}: the next one finishes it, and every SKU follows MySQL again`, async () => {
    const skus = Array.from({ length: 200 }, () => freshIds());
    for (const sku of skus) await createSale(c.pool, { ...sku, units: 10 });
    const allAt = (units: number) =>
      eventually(
        async () => {
          for (const sku of skus)
            expect(await cachedAvailable(c.redis, sku.activityId, sku.skuId)).toBe(units);
        },
        { timeoutMs: 120_000, intervalMs: 500 },
      );
    await allAt(10);
    const seen = await c.redis.hget(binlogSourceKey, "seen");
    await resetBinlog();
    // Killed once it has taken the step back for a new source: its forced rebuild of every SKU has begun.
    await eventually(async () => expect(await c.redis.hget(binlogSourceKey, "seen")).not.toBe(seen), {
      timeoutMs: 30_000,
      intervalMs: 10,
    });
    await maintainer.kill("SIGKILL");
    maintainer = await startMaintainer({ CDC_STALL_MS: "0", LOG_LEVEL: "info" });
    for (const sku of skus) await setAvailable(c, sku, 7);
    await allAt(7);
  }, 300_000);
});

// With Kafka or Connect killed: cdc-down.int.test.ts (MySQL only: what fails there is not the engine's).
describe("buyers are served what MySQL holds while CDC is down", () => {
  const c = clients();
  const fixture = cdcOutageFixture(c, timings, `cdc-healing-${testEngine}.json`);

  it("the task FAILED (a wrong password): a raw-SQL restock is sold from MySQL's state", async () => {
    const connect = connectClient(stackEnv().KAFKA_CONNECT_URL);
    timings.taskFailedRestockTo201 = await restockSoldFromMysql(
      c,
      fixture.api,
      fixture.maintainer,
      async () => {
        await setDebeziumPassword("wrong-password-for-this-test");
        await connect.restart(connector, false);
        fixture.broken = {
          // The supervisor's own restarts are tested above: here the stack is made whole at once, not
          // after the backoff's next step.
          // A restart the supervisor asked for during the outage can still end FAILED after this one (seen
          // with both cores busy): restarted again until the task stays RUNNING.
          restore: async () => {
            await setDebeziumPassword(testContext().secrets.debeziumDbPassword);
            await eventually(
              async () => {
                await connect.restart(connector, true);
                await connect.runningFor(connector, 2000, 30_000);
              },
              { timeoutMs: 120_000, intervalMs: 1000 },
            );
          },
        };
      },
    );
  }, 300_000);

  it("a lost position reset during a storm, on a sale table holding 1,000,000 orders of a past sale: a restock committed during the reset is sold within the fallback's bound, nothing oversold, the caches converge", async () => {
    await ensureOrderHistory(1_000_000);
    const sale = await soldOutSale(c, fixture.api);
    const stormSale = freshIds();
    await createSale(c.pool, { ...stormSale, units: 2000 });
    await expectConverged(c, stormSale.activityId, stormSale.skuId);
    // A storm on another SKU, from before the position is lost until it is sold out: its writes refill the
    // new binlog, whose coordinates soon cover the lost offset's.
    const stormAnswers = storm(fixture.api, stormSale, 24);
    onTestFinished(() => stormAnswers.stop().then(() => undefined));
    const connect = connectClient(stackEnv().KAFKA_CONNECT_URL);
    const repositions = await maintainerMetric(fixture.maintainer, "flashgate_connector_repositions_total");
    const lostAt = Date.now();
    // A lost position, as after a restore: RESET MASTER while the connector is stopped, then resumed.
    await connect.stop(connector);
    try {
      await connect.waitUntil(connector, (status) => status?.connector.state === "STOPPED", {
        failedGraceMs: 60_000,
      });
      await resetBinlog();
    } finally {
      await connect.resume(connector);
    }
    await eventually(
      async () =>
        expect(
          await maintainerMetric(fixture.maintainer, "flashgate_connector_repositions_total"),
        ).toBeGreaterThan(repositions),
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    // Called for by the watchdog, which saw the binlog go back, or by the lost offset's coordinates if the
    // supervisor looked first (with both cores busy it can): the storm's writes soon make those look held,
    // and then only the watchdog's mark resets the offset (on the old code no reset came within 120 s).
    await eventually(async () => {
      const repositioned = (await driftIncidents(c.redis, 50)).find(
        (incident) => incident.kind === "cdc-repositioned" && Number(incident.at) >= lostAt,
      );
      expect(repositioned?.reason).toMatch(
        /^(the binlog was reset on its server|binlog \S+ (is not on the server|has \d+ bytes)|the reader's GTID)/,
      );
    });
    // A DBA restocks 20 units, and buyers of the sold-out SKU keep coming, ten new ones every 100 ms.
    await setAvailable(c, sale, 20);
    const restocked = Date.now();
    let firstSoldMs: number | undefined;
    let sold = 0;
    let buyer = 1000;
    await eventually(
      async () => {
        const answers = await Promise.all(
          Array.from({ length: 10 }, () =>
            fixture.api.purchase(buyer++, sale).then((answer) => answer.status),
          ),
        );
        sold += answers.filter((status) => status === 201).length;
        if (sold) firstSoldMs ??= Date.now() - restocked;
        expect(answers.filter((status) => status !== 201 && status !== 409)).toEqual([]);
        expect(sold).toBeGreaterThanOrEqual(20);
      },
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    timings.resetOnMillionOrdersRestockTo201 = firstSoldMs ?? -1;
    // Sold from MySQL's state by the fallback, not after a snapshot of the order history.
    expect(firstSoldMs).toBeLessThan(15_000);
    expect(sold).toBe(20);
    const [[orders]] = await c.pool.query<RowDataPacket[]>(
      "SELECT COUNT(*) AS n FROM sale_order WHERE activity_id = ? AND sku_id = ? AND state <> 'CLOSED'",
      [sale.activityId, sale.skuId],
    );
    expect(Number(orders.n)).toBe(21);
    await expectConverged(c, sale.activityId, sale.skuId, 120_000);
    // The storm goes on until its SKU is sold out.
    await eventually(async () => expect(stormAnswers.sold()).toBeGreaterThanOrEqual(2000), {
      timeoutMs: 120_000,
    });
    const statuses = await stormAnswers.stop();
    // Every buyer of the storm got a true answer: a unit (201) or sold out (409), never an error.
    expect(statuses.filter((status) => status !== 201 && status !== 409)).toEqual([]);
    const stormSold = statuses.filter((status) => status === 201).length;
    const [[stormOrders]] = await c.pool.query<RowDataPacket[]>(
      "SELECT COUNT(*) AS n FROM sale_order WHERE activity_id = ? AND sku_id = ? AND state <> 'CLOSED'",
      [stormSale.activityId, stormSale.skuId],
    );
    expect(Number(stormOrders.n)).toBe(2000);
    expect(stormSold).toBe(2000);
    timings.resetDuringStormRequests = statuses.length;
    await expectConverged(c, stormSale.activityId, stormSale.skuId, 120_000);
  }, 600_000);
});

/** Buyers of one SKU, `concurrency` at a time, each a new user, until stopped; `stop` gives their answers' statuses. */
function storm(api: ApiHarness, sale: { activityId: number; skuId: number }, concurrency: number) {
  let running = true;
  let buyer = 5_000_000;
  const statuses: number[] = [];
  const buyers = Array.from({ length: concurrency }, async () => {
    // A request that fails outright is recorded as status 0: an error, like a 5xx.
    while (running)
      statuses.push(
        await api.purchase(buyer++, sale).then(
          (answer) => answer.status,
          () => 0,
        ),
      );
  });
  return {
    sold: () => statuses.filter((status) => status === 201).length,
    stop: async () => {
      running = false;
      await Promise.all(buyers);
      return statuses;
    },
  };
}

/** A sale that ended a month ago, with `orders` paid orders: written without the binlog, as history is. */
async function ensureOrderHistory(orders: number) {
  const activityId = 9_000_000_001;
  await asRoot(async (admin) => {
    await admin.query("USE flashgate");
    const [[held]] = await admin.query<RowDataPacket[]>(
      "SELECT COUNT(*) AS n FROM sale_order WHERE activity_id = ?",
      [activityId],
    );
    if (Number(held.n) >= orders) return;
    await admin.query("SET SESSION sql_log_bin = 0");
    // flashgate's own sessions leave the orders' version to their stock change: none here.
    await admin.query("SET @flashgate_orders_move_stock = 1");
    await admin.query(
      `INSERT IGNORE INTO activity (id, name, starts_at, ends_at) VALUES
        (?, 'a past sale', NOW(3) - INTERVAL 31 DAY, NOW(3) - INTERVAL 30 DAY)`,
      [activityId],
    );
    await admin.query(
      "INSERT IGNORE INTO sale_stock (activity_id, sku_id, available, price_cents, currency) VALUES (?, 1, 0, 1999, 'EUR')",
      [activityId],
    );
    await admin.query("DELETE FROM sale_order WHERE activity_id = ?", [activityId]);
    await admin.query(
      `INSERT INTO sale_order
         (order_id, request_id, activity_id, sku_id, user_id, state, amount_cents, currency, created_at, expires_at)
       WITH RECURSIVE digit (d) AS (SELECT 0 UNION ALL SELECT d + 1 FROM digit WHERE d < 99),
         n (i) AS (SELECT a.d * 10000 + b.d * 100 + c.d FROM digit a, digit b, digit c)
       SELECT CONCAT('history-', i), CONCAT('history-', i), ?, 1, i + 1, 'PAID', 1999, 'EUR',
              NOW(3) - INTERVAL 31 DAY, NOW(3) - INTERVAL 30 DAY
         FROM n WHERE i < ?`,
      [activityId, orders],
    );
  });
}
