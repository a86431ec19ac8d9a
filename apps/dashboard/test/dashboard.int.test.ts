import { mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  driftCheckKey,
  driftIncidentsKey,
  type FlashgateRedis,
  redisClient,
  skuKeys,
  withScripts,
} from "@flashgate/cache";
import { createLogger } from "@flashgate/logger";
import { repoRoot } from "@flashgate/stack";
import { reconcile } from "@flashgate/sync";
import {
  type AppProcess,
  basicAuthorization,
  clients,
  createSale,
  eventually,
  expectConverged,
  freshIds,
  serveApp,
  stackEnv,
  startMaintainer,
} from "@flashgate/testkit";
import { type ApiHarness, startApi } from "@flashgate/testkit/purchase-api";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.ts";
import { createCollector } from "../src/collector.ts";

const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const password = "an operators' password of the test";
const basic = (user: string, secret: string) =>
  `Basic ${Buffer.from(`${user}:${secret}`).toString("base64")}`;
const artifacts = join(repoRoot, "test-artifacts");

describe("dashboard in a real browser", () => {
  const c = clients();
  let maintainer: AppProcess;
  let api: ApiHarness;
  let dashboard: { url: string; close: () => Promise<void> };
  let browser: Browser;
  let readOnly: FlashgateRedis;
  beforeAll(async () => {
    maintainer = await startMaintainer({ DRIFT_INTERVAL_MS: "1000", DRIFT_AUTO_REPAIR: "false" });
    api = await startApi();
    // As deployed: the dashboard's own Redis user, which reads the drift check's keys and nothing else.
    readOnly = withScripts(redisClient(stackEnv().DASHBOARD_REDIS_URL));
    const collector = createCollector({
      redis: readOnly,
      maintainerUrl: maintainer.url,
      apiMetricsUrl: api.metricsUrl as string,
    });
    dashboard = await serveApp(
      createApp({
        collector,
        redis: readOnly,
        logger: createLogger("dashboard-test", "silent"),
        sampleIntervalMs: 500,
        password,
      }),
    );
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
    await api?.close();
    await maintainer?.kill();
    readOnly?.disconnect();
    await c.close();
  });

  it("asks every caller of a page or an API route for the operators' password; probes and metrics do not", async () => {
    for (const path of ["/", "/api/snapshot", "/api/incidents", "/api/connectors", "/events"]) {
      const anonymous = await fetch(`${dashboard.url}${path}`);
      expect([path, anonymous.status]).toEqual([path, 401]);
      expect(anonymous.headers.get("www-authenticate")).toMatch(/^Basic realm="flashgate dashboard"/);
      const wrong = await fetch(`${dashboard.url}${path}`, {
        headers: { authorization: basicAuthorization("operator", "guess") },
      });
      expect([path, wrong.status]).toEqual([path, 401]);
      const otherUser = await fetch(`${dashboard.url}${path}`, {
        headers: { authorization: basicAuthorization("admin", password) },
      });
      expect([path, otherUser.status]).toEqual([path, 401]);
    }
    const incidents = await fetch(`${dashboard.url}/api/incidents`, {
      headers: { authorization: basicAuthorization("operator", password) },
    });
    expect(incidents.status).toBe(200);
    for (const path of ["/healthz", "/readyz", "/metrics"])
      expect([path, (await fetch(`${dashboard.url}${path}`)).status]).toEqual([path, 200]);
  });

  it("reads Redis as a user that may read the drift check's keys and nothing else, and write none", async () => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 5 });
    await expectConverged(c, sale.activityId, sale.skuId);
    expect(await readOnly.lrange(driftIncidentsKey, 0, 0)).toEqual(expect.any(Array));
    const sku = skuKeys(sale.activityId, sale.skuId).sku;
    for (const refused of [
      () => readOnly.hgetall(sku),
      () => readOnly.get(sku),
      () => readOnly.set(driftCheckKey, "{}"),
      () => readOnly.lpush(driftIncidentsKey, "{}"),
      () => readOnly.hset(sku, "available", "999"),
      () => readOnly.del(sku),
      () => readOnly.flushall(),
      () => readOnly.call("ACL", "SETUSER", "intruder", "on", ">x", "+@all", "~*"),
    ])
      await expect(refused()).rejects.toThrow(/NOPERM/);
    expect(await c.redis.hget(sku, "available")).toBe("5");
  });

  it("shows Connect's states as the maintainers' supervisor saw them, with no route to Connect of its own", async () => {
    await eventually(
      async () => {
        const response = await fetch(`${dashboard.url}/api/connectors`, {
          headers: { authorization: basicAuthorization("operator", password) },
        });
        expect(await response.json()).toEqual([
          { name: "flashgate-sale", connector: { state: "RUNNING" }, tasks: [{ id: 0, state: "RUNNING" }] },
        ]);
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
  });

  it("shows MySQL's numbers during a sale, flags injected drift and clears it after repair", async () => {
    const sale = freshIds();
    await createSale(c.pool, { ...sale, units: 40 });
    await expectConverged(c, sale.activityId, sale.skuId);
    const page = await browser.newPage({
      viewport: { width: 1400, height: 800 },
      httpCredentials: { username: "operator", password },
    });
    await page.goto(dashboard.url);

    // A running sale: buyers arrive while the page is open.
    for (let user = 1; user <= 25; user++) {
      await api.purchase(9_000_000 + user, sale);
      if (user % 5 === 0) await new Promise((r) => setTimeout(r, 200));
    }
    await expectConverged(c, sale.activityId, sale.skuId);
    const row = page.locator(`tr[data-sku="${sale.activityId}:${sale.skuId}"]`);
    await eventually(
      async () => {
        expect(await row.locator(".db-available").textContent()).toBe("15");
        expect(await row.locator(".cache-available").textContent()).toBe("15");
        expect(await row.locator(".verdict").textContent()).toBe("in-sync");
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );

    // The verdicts are the maintainer's own checks', published in Redis: the dashboard reads no database.
    expect(await page.locator("#checked").textContent()).toMatch(/^the maintainers' drift check of /);
    // The verdict explains itself on hover; the SKU's history is drawn; the charts have a time axis.
    expect(await row.locator(".verdict").getAttribute("title")).toMatch(
      /^Redis equals MySQL \(available 15, buyers /,
    );
    expect(Number(await row.locator("canvas.history").getAttribute("data-points"))).toBeGreaterThan(0);
    await eventually(async () =>
      expect(await page.locator('[data-axis="lag"] span').allTextContents()).toEqual([
        expect.stringMatching(/\d\d:\d\d:\d\d/),
        expect.stringMatching(/\d\d:\d\d:\d\d/),
        expect.stringMatching(/\d\d:\d\d:\d\d/),
      ]),
    );

    await c.redis.hset(skuKeys(sale.activityId, sale.skuId).sku, "available", "777");
    await eventually(async () => expect(await row.locator(".verdict").textContent()).toBe("drift"), {
      timeoutMs: 30_000,
      intervalMs: 250,
    });
    expect(await row.locator(".verdict").getAttribute("title")).toMatch(
      /available 15 in MySQL, 777 in Redis/,
    );
    mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: join(artifacts, "dashboard-drift.png"), fullPage: true });

    const repaired = await reconcile(c.pool, c.redis, { activityId: sale.activityId, repair: true });
    expect(repaired.repaired).toBe(1);
    await eventually(async () => expect(await row.locator(".verdict").textContent()).toBe("in-sync"), {
      timeoutMs: 30_000,
      intervalMs: 250,
    });
    await eventually(
      async () =>
        expect(await page.locator("#incidents").textContent()).toContain(
          `repaired ${sale.activityId}/${sale.skuId}`,
        ),
      { timeoutMs: 10_000 },
    );
    await page.screenshot({ path: join(artifacts, "dashboard.png"), fullPage: true });
  });
});
