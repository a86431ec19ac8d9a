import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { skuKeys } from "@flashgate/cache";
import { connectorsDir } from "@flashgate/connect";
import { databaseName, maintainerDbUser, migrate } from "@flashgate/db";
import { adminConnection, connectorFile } from "@flashgate/stack";
import {
  type AppProcess,
  cachedAvailable,
  clients,
  createSale,
  eventually,
  expectConverged,
  freshIds,
  startMaintainer,
  testContext,
} from "@flashgate/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { flashgate } from "./cli.ts";

describe("flashgate connectors", () => {
  const c = clients();
  let maintainer: AppProcess;
  beforeAll(async () => {
    // The operator's tools are what this file tests: no supervisor or stall fallback acts beside them.
    maintainer = await startMaintainer({ CONNECTOR_CHECK_INTERVAL_MS: "0", CDC_STALL_MS: "0" });
  });
  afterAll(async () => {
    await maintainer.kill();
    await c.close();
  });

  it("apply twice: the second changes nothing and says so", async () => {
    const first = await flashgate("connectors", "--json", "apply");
    expect(first.code).toBe(0);
    const second = await flashgate("connectors", "apply");
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/unchanged/);
  });

  it("validate names a wrong property with Connect's reason", async () => {
    const config = JSON.parse(readFileSync(join(connectorsDir, connectorFile(testContext())), "utf8"));
    config.config["snapshot.mode"] = "sometimes";
    const file = join(mkdtempSync(join(tmpdir(), "fg-")), "broken.json");
    writeFileSync(file, JSON.stringify(config));
    const result = await flashgate("connectors", "validate", file);
    expect(result.code).toBe(5);
    // Connect's own reason, naming the property and the values it would take.
    expect(result.stdout).toMatch(/✗ snapshot\.mode: .*invalid.*Value must be one of .*initial/);
  });

  it("distinct exit codes: unknown connector, unreachable Connect", async () => {
    expect((await flashgate("connectors", "status", "no-such-connector")).code).toBe(4);
    const unreachable = await flashgate("connectors", "--connect-url", "http://127.0.0.1:1", "list");
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toMatch(/unreachable/);
  });

  it("pause stops changes reaching Redis; resume lets them through", async () => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 5 });
    await expectConverged(c, sale.activityId, sale.skuId);
    expect((await flashgate("connectors", "pause", "flashgate-sale")).code).toBe(0);
    await eventually(async () =>
      expect((await flashgate("connectors", "--json", "status", "flashgate-sale")).stdout).toMatch(/PAUSED/),
    );
    await c.pool.query("UPDATE sale_stock SET available = 42 WHERE activity_id = ? AND sku_id = ?", [
      sale.activityId,
      sale.skuId,
    ]);
    // Absence cannot be awaited: watch for two heartbeat intervals, in which a running pipeline applies in ~50 ms.
    await new Promise((r) => setTimeout(r, 2000));
    expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(5);
    expect((await flashgate("connectors", "resume", "flashgate-sale")).code).toBe(0);
    await eventually(
      async () => expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(42),
      { timeoutMs: 60_000 },
    );
  });

  it("a task failed by a wrong database password shows FAILED with its trace; after the fix restart --failed-only recovers", async () => {
    const ctx = testContext();
    const admin = await adminConnection(ctx);
    try {
      await admin.query("ALTER USER 'debezium'@'%' IDENTIFIED BY 'wrong-password-for-this-test'");
      await admin.query("KILL USER debezium").catch(() => {});
      // The restart cannot succeed with the wrong password: it says so, with Connect's refusal code.
      const restart = await flashgate("connectors", "restart", "flashgate-sale");
      expect(restart.code).toBe(6);
      expect(restart.stderr).toMatch(/FAILED/);
      const failed = await eventually(
        async () => {
          const status = await flashgate("connectors", "status", "flashgate-sale");
          expect(status.code).toBe(1);
          expect(status.stdout).toMatch(/FAILED/);
          return status;
        },
        { timeoutMs: 90_000, intervalMs: 1000 },
      );
      expect(failed.stdout).toMatch(/Access denied|password|authentication/i);
    } finally {
      await migrate(admin, {
        database: databaseName,
        appUser: { name: "flashgate", password: ctx.secrets.appDbPassword },
        maintainerUser: { name: maintainerDbUser, password: ctx.secrets.maintainerDbPassword },
        debeziumUser: { name: "debezium", password: ctx.secrets.debeziumDbPassword },
      });
      await admin.end();
    }
    const restarted = await flashgate("connectors", "restart", "flashgate-sale", "--failed-only");
    expect(restarted.code).toBe(0);
    expect((await flashgate("connectors", "status", "flashgate-sale")).code).toBe(0);
  });

  it("snapshot --where repairs a SKU corrupted in Redis, through CDC", async () => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 7 });
    await expectConverged(c, sale.activityId, sale.skuId);
    await c.redis.hset(skuKeys(sale.activityId, sale.skuId).sku, "available", "9999");
    const result = await flashgate(
      "connectors",
      "snapshot",
      "sale_stock",
      "--where",
      `activity_id = ${sale.activityId}`,
    );
    expect(result.code).toBe(0);
    await eventually(
      async () => expect(await cachedAvailable(c.redis, sale.activityId, sale.skuId)).toBe(7),
      { timeoutMs: 60_000 },
    );
  });
});
