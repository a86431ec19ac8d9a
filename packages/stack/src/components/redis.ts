import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import type { Component, StackContext } from "../context.ts";
import { startDaemon, tailLog } from "../processes.ts";
import { waitFor } from "../wait.ts";

export const redisUrl = (ctx: StackContext) =>
  `redis://:${encodeURIComponent(ctx.secrets.redisPassword)}@127.0.0.1:${ctx.config.FLASHGATE_REDIS_PORT}`;

async function ping(ctx: StackContext): Promise<boolean> {
  const client = new Redis(redisUrl(ctx), {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1000,
  });
  client.on("error", () => {});
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export const redis: Component = {
  name: "redis",
  port: (ctx) => ({ port: ctx.config.FLASHGATE_REDIS_PORT, variable: "FLASHGATE_REDIS_PORT" }),
  async start(ctx) {
    const step = ctx.progress.step(`Redis on 127.0.0.1:${ctx.config.FLASHGATE_REDIS_PORT}`);
    mkdirSync(ctx.paths.redisData, { recursive: true });
    mkdirSync(ctx.paths.config, { recursive: true });
    // The password lives in a private file, not on the command line where `ps` would show it.
    const configFile = join(ctx.paths.config, "redis.conf");
    writeFileSync(
      configFile,
      [
        `port ${ctx.config.FLASHGATE_REDIS_PORT}`,
        "bind 127.0.0.1",
        `dir ${ctx.paths.redisData}`,
        "appendonly yes",
        "appendfsync everysec",
        'save ""',
        `requirepass ${ctx.secrets.redisPassword}`,
        "maxmemory-policy noeviction",
      ].join("\n"),
      { mode: 0o600 },
    );
    const daemon = startDaemon({ name: "redis", command: "redis-server", args: [configFile] }, ctx.paths);
    await waitFor("Redis to answer PING", () => ping(ctx), {
      timeoutMs: 30_000,
      progress: step,
      failFast: () =>
        daemon.exited() !== null ? `redis-server exited:\n${tailLog(daemon.logFile)}` : undefined,
    });
    step.done();
  },
  healthy: ping,
};
