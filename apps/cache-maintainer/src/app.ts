import type { MaintainerMetrics } from "@flashgate/maintainer";
import { Hono } from "hono";
import type { Redis } from "ioredis";

export interface AppDeps {
  redis: Redis;
  metrics: MaintainerMetrics;
  /** True once the consumer has joined its group and is applying changes. */
  consuming: () => boolean;
}

export function createApp(deps: AppDeps) {
  return new Hono()
    .get("/healthz", (c) => c.json({ status: "ok" }))
    .get("/readyz", async (c) => {
      const redis = await Promise.race([
        deps.redis.ping().then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 1000)),
      ]).catch(() => false);
      const consuming = deps.consuming();
      const ready = redis && consuming;
      return c.json({ status: ready ? "ready" : "not ready", redis, consuming }, ready ? 200 : 503);
    })
    .get("/metrics", async (c) =>
      c.text(await deps.metrics.registry.metrics(), 200, {
        "content-type": deps.metrics.registry.contentType,
      }),
    );
}
