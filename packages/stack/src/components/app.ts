import { join } from "node:path";
import { appDbUser, databaseName, maintainerDbUser } from "@flashgate/db";
import type { Component, StackContext } from "../context.ts";
import { answersOk } from "../net.ts";
import { repoRoot } from "../paths.ts";
import { startDaemon, tailLog } from "../processes.ts";
import { instanceName, instancePort } from "../topology.ts";
import { waitFor } from "../wait.ts";
import { connectUrl } from "./connect.ts";
import { databaseNodePort, databaseNodes, replicated } from "./database-nodes.ts";
import { kafkaBootstrap } from "./kafka.ts";
import { dashboardRedisUrl, redisUrl } from "./redis.ts";

/** The environment every flashgate app reads its config from; tests and `flashgate env` use the same. */
export const appEnv = (ctx: StackContext): Record<string, string> => ({
  // The purchase API's account (and the tests' and the CLI's for the sale's rows).
  DATABASE_URL: databaseUrl(appDbUser, ctx.secrets.appDbPassword, ctx.config.FLASHGATE_DB_PORT),
  // The cache-maintainer's: given to it as its DATABASE_URL (maintainerEnv).
  MAINTAINER_DATABASE_URL: maintainerDatabaseUrl(ctx, ctx.config.FLASHGATE_DB_PORT),
  // A replicated database's servers, each dialled directly, where the maintainers watch replication.
  DATABASE_NODE_URLS: replicated(ctx)
    ? databaseNodes(ctx)
        .map((node) => maintainerDatabaseUrl(ctx, databaseNodePort(ctx, node)))
        .join(",")
    : "",
  REDIS_URL: redisUrl(ctx),
  DASHBOARD_REDIS_URL: dashboardRedisUrl(ctx),
  KAFKA_BROKERS: kafkaBootstrap(ctx),
  KAFKA_CONNECT_URL: connectUrl(ctx),
  AUTH_JWT_SECRET: ctx.secrets.authJwtSecret,
  ADMIN_JWT_SECRET: ctx.secrets.adminJwtSecret,
  PAYMENT_WEBHOOK_SECRET: ctx.secrets.paymentWebhookSecret,
  DASHBOARD_PASSWORD: ctx.secrets.dashboardPassword,
  PURCHASE_API_URL: `http://127.0.0.1:${ctx.config.FLASHGATE_API_PORT}`,
  PURCHASE_API_METRICS_URL: `http://127.0.0.1:${ctx.config.FLASHGATE_API_METRICS_PORT}`,
  MAINTAINER_URL: `http://127.0.0.1:${ctx.config.FLASHGATE_MAINTAINER_PORT}`,
});

const databaseUrl = (user: string, password: string, port: number) =>
  `mysql://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${databaseName}`;

const maintainerDatabaseUrl = (ctx: StackContext, port: number) =>
  databaseUrl(maintainerDbUser, ctx.secrets.maintainerDbPassword, port);

/**
 * What each app reads: it is given that and nothing else (the dashboard holds no token, no webhook
 * secret, no database account and no route to Kafka Connect: it shows the maintainers' drift verdicts
 * from Redis and Connect's states from their metrics).
 */
const appNeeds = {
  "purchase-api": [
    "DATABASE_URL",
    "REDIS_URL",
    // The purchase queue (ADR 0030): its writer, and its admission where an activity or PURCHASE_ADMISSION asks.
    "KAFKA_BROKERS",
    "AUTH_JWT_SECRET",
    "ADMIN_JWT_SECRET",
    "PAYMENT_WEBHOOK_SECRET",
  ],
  "cache-maintainer": [
    "DATABASE_URL",
    "DATABASE_NODE_URLS",
    "REDIS_URL",
    "KAFKA_BROKERS",
    "KAFKA_CONNECT_URL",
  ],
  dashboard: ["REDIS_URL", "DASHBOARD_PASSWORD", "PURCHASE_API_METRICS_URL", "MAINTAINER_URL"],
} as const;

type AppName = keyof typeof appNeeds;

/**
 * Where an app's own account is in appEnv, by the variable the app reads: the maintainer's database
 * account, the dashboard's read-only Redis user.
 */
const ownAccounts: Partial<Record<AppName, Record<string, string>>> = {
  "cache-maintainer": { DATABASE_URL: "MAINTAINER_DATABASE_URL" },
  dashboard: { REDIS_URL: "DASHBOARD_REDIS_URL" },
};

/** The stack's environment as `name` reads it: its own accounts in the variables it reads, no other's. */
function withOwnAccounts(name: AppName, env: Record<string, string>): Record<string, string> {
  const sources = new Set(Object.values(ownAccounts).flatMap((own) => Object.values(own ?? {})));
  const own = Object.entries(ownAccounts[name] ?? {}).filter(([, source]) => env[source] !== undefined);
  return {
    ...Object.fromEntries(Object.entries(env).filter(([variable]) => !sources.has(variable))),
    ...Object.fromEntries(own.map(([variable, source]) => [variable, env[source]])),
  };
}

/** The environment the cache-maintainer runs with, from the stack's (bench, chaos and tests start it so). */
export const maintainerEnv = (env: Record<string, string>) => withOwnAccounts("cache-maintainer", env);

/** The environment one app is started with: its own variables from appEnv, and its ports. */
export function appEnvOf(
  name: AppName,
  ctx: StackContext,
  port: number,
  metricsPort?: number,
): Record<string, string> {
  const all = withOwnAccounts(name, appEnv(ctx));
  return {
    ...Object.fromEntries(appNeeds[name].map((variable) => [variable, all[variable]])),
    PORT: String(port),
    ...(metricsPort === undefined ? {} : { METRICS_PORT: String(metricsPort) }),
  };
}

interface AppSpec {
  /** Also its directory under apps/. */
  app: AppName;
  portVariable: "FLASHGATE_API_PORT" | "FLASHGATE_MAINTAINER_PORT" | "FLASHGATE_DASHBOARD_PORT";
  /** Which of the app's instances (purchase-api-2 on a cluster listens 100 ports above the first). */
  index?: number;
}

export function appComponent(ctx: StackContext, spec: AppSpec): Component {
  const index = spec.index ?? 0;
  const name = spec.app === "dashboard" ? spec.app : instanceName(ctx.config, spec.app, index);
  const port = instancePort(ctx.config[spec.portVariable], index);
  // The purchase API's metrics are on a port of their own, the operators' (the others' port is theirs).
  const metricsPort =
    spec.app === "purchase-api" ? instancePort(ctx.config.FLASHGATE_API_METRICS_PORT, index) : undefined;
  const entry = join(repoRoot, "apps", spec.app, "src", "main.ts");
  const url = `http://127.0.0.1:${port}`;
  const ready = () => answersOk(`${url}/readyz`, 1500);
  return {
    name,
    port: () => ({ port, variable: spec.portVariable }),
    async start() {
      const step = ctx.progress.step(`${name} on ${url}`);
      const daemon = startDaemon(
        {
          name,
          command: process.execPath,
          args: [entry],
          cwd: repoRoot,
          env: appEnvOf(spec.app, ctx, port, metricsPort),
        },
        ctx.paths,
      );
      await waitFor(`${name} to be ready`, ready, {
        timeoutMs: 60_000,
        progress: step,
        failFast: () =>
          daemon.exited() !== null ? `${name} exited:\n${tailLog(daemon.logFile)}` : undefined,
      });
      step.done();
    },
    healthy: ready,
  };
}
