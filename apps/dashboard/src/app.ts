import { readFileSync } from "node:fs";
import type { FlashgateRedis } from "@flashgate/cache";
import type { Logger } from "@flashgate/logger";
import { driftIncidents } from "@flashgate/sync";
import { serviceRoutes } from "@flashgate/telemetry";
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import type { Collector, DashboardSnapshot } from "./collector.ts";

const page = readFileSync(new URL("./public/index.html", import.meta.url), "utf8");

export interface AppDeps {
  collector: Collector;
  redis: FlashgateRedis;
  logger: Logger;
  sampleIntervalMs: number;
}

/**
 * One sampler feeds every viewer: the latest snapshot is shared, so ten open tabs do not mean ten
 * times the scrapes and Redis reads.
 */
export function createApp(deps: AppDeps) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "flashgate_dashboard_" });
  const pushes = new Counter({
    name: "flashgate_dashboard_sse_events_total",
    help: "Snapshots pushed to viewers",
    registers: [registry],
  });
  // Connect's states as metrics, read at each scrape: what the alert on a stopped connector watches.
  new Gauge({
    name: "flashgate_connector_running",
    help: '1 when the connector (task="connector") or one of its tasks is RUNNING, else 0; 0 for task="unreachable" when Connect did not answer',
    labelNames: ["connector", "task"],
    registers: [registry],
    async collect() {
      this.reset();
      const statuses = await deps.collector.connectors();
      if ("error" in statuses) {
        this.set({ connector: "", task: "unreachable" }, 0);
        return;
      }
      for (const status of statuses) {
        this.set({ connector: status.name, task: "connector" }, status.connector.state === "RUNNING" ? 1 : 0);
        for (const task of status.tasks)
          this.set({ connector: status.name, task: String(task.id) }, task.state === "RUNNING" ? 1 : 0);
      }
    },
  });
  let latest: DashboardSnapshot | undefined;
  let sampling: Promise<DashboardSnapshot> | undefined;
  const snapshot = async (maxAgeMs = deps.sampleIntervalMs): Promise<DashboardSnapshot> => {
    if (latest && Date.now() - latest.at < maxAgeMs) return latest;
    sampling ??= deps.collector
      .snapshot()
      .then((fresh) => {
        latest = fresh;
        return fresh;
      })
      .finally(() => {
        sampling = undefined;
      });
    return sampling;
  };

  return new Hono()
    .get("/", (c) => c.html(page))
    .get("/api/snapshot", async (c) => c.json(await snapshot()))
    .get("/api/skus", async (c) => c.json((await snapshot()).skus))
    .get("/api/series", async (c) => c.json((await snapshot()).series))
    .get("/api/connectors", async (c) => c.json(await deps.collector.connectors()))
    .get("/api/incidents", async (c) => c.json(await driftIncidents(deps.redis, 50)))
    .get("/events", (c) =>
      streamSSE(c, async (stream) => {
        let open = true;
        stream.onAbort(() => {
          open = false;
        });
        while (open) {
          try {
            await stream.writeSSE({ event: "snapshot", data: JSON.stringify(await snapshot()) });
            pushes.inc();
          } catch (error) {
            deps.logger.warn({ err: (error as Error).message }, "snapshot failed");
          }
          await stream.sleep(deps.sampleIntervalMs);
        }
      }),
    )
    .route("/", serviceRoutes({ redis: () => deps.redis.ping() }, registry));
}
