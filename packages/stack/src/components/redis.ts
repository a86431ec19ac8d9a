import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import type { Component, StackContext } from "../context.ts";
import { writePrivateFile } from "../private-file.ts";
import { startDaemon, tailLog } from "../processes.ts";
import { instanceName, instancePort, instances } from "../topology.ts";
import { StackError, waitFor } from "../wait.ts";

const nodePorts = (ctx: StackContext) =>
  instances(ctx.config, "redis").map((index) => instancePort(ctx.config.FLASHGATE_REDIS_PORT, index));

const isCluster = (ctx: StackContext) => nodePorts(ctx).length > 1;

/**
 * The dashboard's Redis user: it reads the maintainers' published drift check and incident log
 * (`fg:drift:last`, `fg:drift:incidents`) and nothing else, and writes nothing; a Cluster client also
 * asks for the slots and the cluster's state. The same rules are in docker-compose.yml and
 * deploy/kubernetes/base/redis.yaml (a test holds them equal).
 */
export const dashboardRedisUser = {
  name: "flashgate-dashboard",
  rules: "resetkeys %R~fg:drift:* resetchannels -@all +get +lrange +ping +info +cluster|slots +cluster|info",
};

const nodes = (ctx: StackContext) =>
  nodePorts(ctx)
    .map((port) => `127.0.0.1:${port}`)
    .join(",");

/** One server, or every node of the cluster as seeds (the apps' client takes a list as a cluster). */
export const redisUrl = (ctx: StackContext) =>
  `redis://:${encodeURIComponent(ctx.secrets.redisPassword)}@${nodes(ctx)}`;

/** The dashboard's: its read-only user on the same servers. */
export const dashboardRedisUrl = (ctx: StackContext) =>
  `redis://${dashboardRedisUser.name}:${encodeURIComponent(ctx.secrets.dashboardRedisPassword)}@${nodes(ctx)}`;

async function ping(ctx: StackContext, port: number): Promise<boolean> {
  const client = new Redis({
    port,
    password: ctx.secrets.redisPassword,
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

function nodeConfig(ctx: StackContext, port: number, dataDir: string): string[] {
  const common = [
    `port ${port}`,
    "bind 127.0.0.1",
    `dir ${dataDir}`,
    "appendonly yes",
    "appendfsync everysec",
    'save ""',
    `requirepass ${ctx.secrets.redisPassword}`,
    `user ${dashboardRedisUser.name} on >${ctx.secrets.dashboardRedisPassword} ${dashboardRedisUser.rules}`,
    "maxmemory-policy noeviction",
  ];
  if (!isCluster(ctx)) return common;
  return [
    ...common,
    "cluster-enabled yes",
    "cluster-config-file nodes.conf",
    // Its own bus port beside the client port, so node ports 100 apart never collide with another stack.
    `cluster-port ${port + 1}`,
    // A master silent this long is failed over to its replica: the window in which its slots answer 503.
    "cluster-node-timeout 3000",
    // Only the failed master's slots stop; SKUs on the other masters keep selling.
    "cluster-require-full-coverage no",
    `masterauth ${ctx.secrets.redisPassword}`,
  ];
}

/** Instance `index` of the Redis processes: the only server, or one node of the cluster. */
export function redisNode(ctx: StackContext, index: number): Component {
  const port = instancePort(ctx.config.FLASHGATE_REDIS_PORT, index);
  const name = instanceName(ctx.config, "redis", index);
  const last = index === nodePorts(ctx).length - 1;
  return {
    name,
    port: () => ({ port, variable: "FLASHGATE_REDIS_PORT" }),
    async start() {
      const step = ctx.progress.step(
        `${isCluster(ctx) ? `Redis Cluster node ${index + 1}` : "Redis"} on 127.0.0.1:${port}`,
      );
      const dataDir = isCluster(ctx) ? join(ctx.paths.redisData, name) : ctx.paths.redisData;
      mkdirSync(dataDir, { recursive: true });
      mkdirSync(ctx.paths.config, { recursive: true });
      // The password lives in a private file, not on the command line where `ps` would show it.
      const configFile = join(ctx.paths.config, `${name}.conf`);
      writePrivateFile(configFile, nodeConfig(ctx, port, dataDir).join("\n"));
      const daemon = startDaemon({ name, command: "redis-server", args: [configFile] }, ctx.paths);
      await waitFor(`${name} to answer PING`, () => ping(ctx, port), {
        timeoutMs: 30_000,
        progress: step,
        failFast: () =>
          daemon.exited() !== null ? `redis-server exited:\n${tailLog(daemon.logFile)}` : undefined,
      });
      step.done();
    },
    healthy: () => ping(ctx, port),
    // Once every node runs, the last one joins them into a cluster (a no-op when they already form one).
    settle: isCluster(ctx) && last ? () => formCluster(ctx) : undefined,
  };
}

function redisCli(ctx: StackContext, args: string[]) {
  // REDISCLI_AUTH keeps the password off the command line.
  return spawnSync("redis-cli", args, {
    encoding: "utf8",
    env: { ...process.env, REDISCLI_AUTH: ctx.secrets.redisPassword },
  });
}

const clusterInfo = (ctx: StackContext, port: number) =>
  Object.fromEntries(
    (redisCli(ctx, ["-p", String(port), "cluster", "info"]).stdout ?? "")
      .split(/\r?\n/)
      .map((line) => line.split(":") as [string, string]),
  );

/** Three masters with one replica each over the six nodes; then waits until every node sees all slots served. */
async function formCluster(ctx: StackContext) {
  const ports = nodePorts(ctx);
  const step = ctx.progress.step(`Redis Cluster of ${ports.length} nodes`);
  if (clusterInfo(ctx, ports[0]).cluster_known_nodes !== String(ports.length)) {
    step.waiting("creating it (3 masters, 1 replica each)");
    const created = redisCli(ctx, [
      "--cluster",
      "create",
      ...ports.map((port) => `127.0.0.1:${port}`),
      "--cluster-replicas",
      "1",
      "--cluster-yes",
    ]);
    if (created.status !== 0)
      throw new StackError(
        `redis-cli --cluster create failed:\n${(created.stdout + created.stderr).slice(-2000)}`,
      );
  }
  await waitFor(
    "every Redis node to report cluster_state:ok",
    async () => ports.every((port) => clusterInfo(ctx, port).cluster_state === "ok"),
    { timeoutMs: 60_000, intervalMs: 500, progress: step },
  );
  step.done();
}
