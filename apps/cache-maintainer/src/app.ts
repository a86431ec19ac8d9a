import type { RedisClient } from "@flashgate/cache";
import type { MaintainerMetrics } from "@flashgate/maintainer";
import { serviceRoutes } from "@flashgate/telemetry";
import { Hono } from "hono";

export interface AppDeps {
  redis: RedisClient;
  metrics: MaintainerMetrics;
  /** True once the consumer has joined its group and is applying changes. */
  consuming: () => boolean;
}

export function createApp(deps: AppDeps) {
  return new Hono().route(
    "/",
    serviceRoutes({ redis: () => deps.redis.ping(), consuming: deps.consuming }, deps.metrics.registry),
  );
}
