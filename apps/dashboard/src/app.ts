import { readFileSync } from "node:fs";
import type { FlashgateRedis } from "@flashgate/cache";
import type { Logger } from "@flashgate/logger";
import { driftIncidents } from "@flashgate/sync";
import { serviceRoutes } from "@flashgate/telemetry";
import { Hono } from "hono";
import { basicAuth } from "hono/basic-auth";
import { streamSSE } from "hono/streaming";
import { Counter, collectDefaultMetrics, Registry } from "prom-client";
import type { Collector, DashboardSnapshot } from "./collector.ts";

const page = readFileSync(new URL("./public/index.html", import.meta.url), "utf8");

export interface AppDeps {
  collector: Collector;
  redis: FlashgateRedis;
  logger: Logger;
  sampleIntervalMs: number;
  /** The operators' password (user `operator`): every page and API route asks for it; probes and metrics do not. */
  password: string;
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

  const operators = basicAuth({
    username: "operator",
    password: deps.password,
    realm: "flashgate dashboard",
  });
  return new Hono()
    .use("/", operators)
    .use("/api/*", operators)
    .use("/events", operators)
    .get("/", (c) => c.html(page))
    .get("/api/snapshot", async (c) => c.json(await snapshot()))
    .get("/api/skus", async (c) => c.json((await snapshot()).skus))
    .get("/api/series", async (c) => c.json((await snapshot()).series))
    .get("/api/connectors", async (c) => c.json((await snapshot()).connectors))
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
