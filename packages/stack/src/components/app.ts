import { join } from "node:path";
import type { Component, StackContext } from "../context.ts";
import { appDbUser, databaseName } from "../context.ts";
import { answersOk } from "../net.ts";
import { repoRoot } from "../paths.ts";
import { startDaemon, tailLog } from "../processes.ts";
import { waitFor } from "../wait.ts";
import { connectUrl } from "./connect.ts";
import { kafkaBootstrap } from "./kafka.ts";
import { redisUrl } from "./redis.ts";

/** The environment every flashgate app reads its config from; tests and `flashgate env` use the same. */
export const appEnv = (ctx: StackContext): Record<string, string> => ({
  DATABASE_URL: `mysql://${appDbUser}:${encodeURIComponent(ctx.secrets.appDbPassword)}@127.0.0.1:${ctx.config.FLASHGATE_DB_PORT}/${databaseName}`,
  REDIS_URL: redisUrl(ctx),
  KAFKA_BROKERS: kafkaBootstrap(ctx),
  KAFKA_CONNECT_URL: connectUrl(ctx),
  AUTH_JWT_SECRET: ctx.secrets.authJwtSecret,
  ADMIN_JWT_SECRET: ctx.secrets.adminJwtSecret,
  PAYMENT_WEBHOOK_SECRET: ctx.secrets.paymentWebhookSecret,
  PURCHASE_API_URL: `http://127.0.0.1:${ctx.config.FLASHGATE_API_PORT}`,
  MAINTAINER_URL: `http://127.0.0.1:${ctx.config.FLASHGATE_MAINTAINER_PORT}`,
});

/** What each app reads: it is given that and nothing else (the dashboard holds no token or webhook secret). */
const appNeeds = {
  "purchase-api": [
    "DATABASE_URL",
    "REDIS_URL",
    "AUTH_JWT_SECRET",
    "ADMIN_JWT_SECRET",
    "PAYMENT_WEBHOOK_SECRET",
  ],
  "cache-maintainer": ["DATABASE_URL", "REDIS_URL", "KAFKA_BROKERS"],
  dashboard: ["DATABASE_URL", "REDIS_URL", "KAFKA_CONNECT_URL", "PURCHASE_API_URL", "MAINTAINER_URL"],
} as const;

type AppName = keyof typeof appNeeds;

/** The environment one app is started with: its own variables from appEnv, and its port. */
export function appEnvOf(name: AppName, ctx: StackContext, port: number): Record<string, string> {
  const all = appEnv(ctx);
  return {
    ...Object.fromEntries(appNeeds[name].map((variable) => [variable, all[variable]])),
    PORT: String(port),
  };
}

interface AppSpec {
  /** Also its directory under apps/. */
  name: AppName;
  portVariable: "FLASHGATE_API_PORT" | "FLASHGATE_MAINTAINER_PORT" | "FLASHGATE_DASHBOARD_PORT";
}

export function appComponent(spec: AppSpec): Component {
  const entry = join(repoRoot, "apps", spec.name, "src", "main.ts");
  const url = (ctx: StackContext) => `http://127.0.0.1:${ctx.config[spec.portVariable]}`;
  const ready = (ctx: StackContext) => answersOk(`${url(ctx)}/readyz`, 1500);
  return {
    name: spec.name,
    port: (ctx) => ({ port: ctx.config[spec.portVariable], variable: spec.portVariable }),
    async start(ctx) {
      const step = ctx.progress.step(`${spec.name} on ${url(ctx)}`);
      const daemon = startDaemon(
        {
          name: spec.name,
          command: process.execPath,
          args: [entry],
          cwd: repoRoot,
          env: appEnvOf(spec.name, ctx, ctx.config[spec.portVariable]),
        },
        ctx.paths,
      );
      await waitFor(`${spec.name} to be ready`, () => ready(ctx), {
        timeoutMs: 60_000,
        progress: step,
        failFast: () =>
          daemon.exited() !== null ? `${spec.name} exited:\n${tailLog(daemon.logFile)}` : undefined,
      });
      step.done();
    },
    healthy: ready,
  };
}
