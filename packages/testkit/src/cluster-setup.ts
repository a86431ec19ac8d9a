import { appEnv, consoleProgress, down, stackContext, up } from "@flashgate/stack";
import type { TestProject } from "vitest/node";
import { clusterStackEnv } from "./test-stack.ts";

/**
 * Starts (or reuses) the cluster stack with its apps — Redis Cluster, three brokers, two Connect workers,
 * two APIs, two maintainers — and hands its settings to the failover tests.
 */
export default async function setup(project: TestProject) {
  const ctx = stackContext({ env: { ...process.env, ...clusterStackEnv }, progress: consoleProgress() });
  const started = await up(ctx);
  project.provide("stackEnv", { ...clusterStackEnv, ...appEnv(ctx) });
  return async () => {
    if (process.env.FLASHGATE_KEEP_TEST_STACK === "1") return;
    await down(ctx, { only: started });
  };
}
