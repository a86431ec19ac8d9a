import { Hono } from "hono";
import type { Redis } from "ioredis";
import type { Pool } from "mysql2/promise";
import type { Registry } from "prom-client";
import type { AppEnv } from "../env.ts";

export function healthRoutes(deps: { redis: Redis; pool: Pool; registry: Registry }) {
  return new Hono<AppEnv>()
    .get("/healthz", (c) => c.json({ status: "ok" }))
    .get("/readyz", async (c) => {
      const check = async (probe: () => Promise<unknown>) =>
        Promise.race([
          probe().then(() => true),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1000)),
        ]).catch(() => false);
      const [redis, database] = await Promise.all([
        check(() => deps.redis.ping()),
        check(() => deps.pool.query("SELECT 1")),
      ]);
      const ready = redis && database;
      return c.json({ status: ready ? "ready" : "not ready", redis, database }, ready ? 200 : 503);
    })
    .get("/metrics", async (c) =>
      c.text(await deps.registry.metrics(), 200, { "content-type": deps.registry.contentType }),
    );
}
