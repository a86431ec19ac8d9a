import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { appEnv, down, redisUrl, silentProgress, stackContext, up } from "@flashgate/stack";
import type { TestProject } from "vitest/node";
import { freePort } from "./processes.ts";
import { testEngine, testStackEnv } from "./test-stack.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The one real part a fast tier needs: a Redis of its own, or a migrated database of its own. */
    fastTier: { stackEnv: Record<string, string>; redisUrl?: string; databaseUrl?: string };
  }
}

/**
 * The fast tiers run beside no other part of the stack: the `redis` project gets a Redis alone, the
 * `database` project a migrated database alone, each on a free port under the test stack's home, so
 * that Lua scripts and SQL decisions are checked in seconds. Mutation testing runs several vitest
 * processes at once from a copy of the repository: each gets a home of its own (FLASHGATE_FAST_TIER_HOME
 * and the worker number) and the jars of the real checkout (FLASHGATE_JARS).
 */
export default async function setup(project: TestProject) {
  const part = project.name === "redis" ? "redis" : "database";
  const worker = process.env.STRYKER_MUTATOR_WORKER;
  const home = join(
    process.env.FLASHGATE_FAST_TIER_HOME ?? testStackEnv.FLASHGATE_HOME,
    worker === undefined ? `fast-${part}` : `worker-${worker}-${part}`,
  );
  mkdirSync(home, { recursive: true });
  const env = {
    ...(process.env.FLASHGATE_JARS ? { FLASHGATE_JARS: process.env.FLASHGATE_JARS } : {}),
    FLASHGATE_HOME: home,
    FLASHGATE_DB: testEngine,
    FLASHGATE_DB_PORT: String(await freePort()),
    FLASHGATE_REDIS_PORT: String(await freePort()),
  };
  const ctx = stackContext({ env, progress: silentProgress });
  await up(ctx, { only: [part] });
  project.provide(
    "fastTier",
    part === "redis"
      ? { stackEnv: env, redisUrl: redisUrl(ctx) }
      : { stackEnv: env, databaseUrl: appEnv(ctx).DATABASE_URL },
  );
  return async () => {
    await down(ctx, { only: [part] });
  };
}
