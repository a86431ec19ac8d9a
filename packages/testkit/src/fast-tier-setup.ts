import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { appEnv, down, redisUrl, silentProgress, stackContext, up } from "@flashgate/stack";
import type { TestProject } from "vitest/node";
import { freePort } from "./processes.ts";
import type {} from "./provided.ts";
import { testEngine, testStackEnv } from "./test-stack.ts";

/** What each fast tier runs against: no Kafka, no Connect, no apps. */
const fastTierParts: Record<string, ("redis" | "database")[]> = {
  redis: ["redis"],
  database: ["database"],
  service: ["redis", "database"],
};

/**
 * The fast tiers run beside no other part of the stack: the `redis` project gets a Redis alone, the
 * `database` project a migrated database alone, the `service` project both (a service's rules across
 * the cache and the database, without CDC), each on free ports under the test stack's home, so that
 * Lua scripts, SQL decisions and the services over them are checked in seconds. Mutation testing runs
 * several vitest processes at once from a copy of the repository: each gets a home of its own
 * (FLASHGATE_FAST_TIER_HOME and the worker number) and the jars of the real checkout (FLASHGATE_JARS); so
 * does each workspace whose fast tests turbo runs beside another's.
 */
export default async function setup(project: TestProject) {
  const parts = fastTierParts[project.name];
  if (!parts) throw new Error(`no fast tier named ${project.name}`);
  const worker = process.env.STRYKER_MUTATOR_WORKER;
  // turbo runs several workspaces' fast tests at once (npm names the workspace whose script runs).
  const workspace = process.env.npm_package_name?.startsWith("@flashgate/")
    ? `${process.env.npm_package_name.slice("@flashgate/".length)}-`
    : "";
  const home = join(
    process.env.FLASHGATE_FAST_TIER_HOME ?? testStackEnv.FLASHGATE_HOME,
    worker === undefined ? `${workspace}fast-${project.name}` : `worker-${worker}-${project.name}`,
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
  await up(ctx, { only: parts });
  project.provide("fastTier", {
    stackEnv: env,
    ...(parts.includes("redis") ? { redisUrl: redisUrl(ctx) } : {}),
    ...(parts.includes("database")
      ? { databaseUrl: appEnv(ctx).DATABASE_URL, maintainerDatabaseUrl: appEnv(ctx).MAINTAINER_DATABASE_URL }
      : {}),
  });
  return async () => {
    await down(ctx, { only: parts });
  };
}
