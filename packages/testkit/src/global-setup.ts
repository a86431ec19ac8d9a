import { appEnv, consoleProgress, down, stackContext, up } from "@flashgate/stack";
import type { TestProject } from "vitest/node";
import { testStackEnv } from "./test-stack.ts";

declare module "vitest" {
  export interface ProvidedContext {
    stackEnv: Record<string, string>;
  }
}

/** Starts (or reuses) the real test stack once per run and hands its connection settings to every test file. */
export default async function setup(project: TestProject) {
  const ctx = stackContext({ env: { ...process.env, ...testStackEnv }, progress: consoleProgress() });
  const started = await up(ctx, { withApps: false });
  project.provide("stackEnv", { ...testStackEnv, ...appEnv(ctx) });
  return async () => {
    if (process.env.FLASHGATE_KEEP_TEST_STACK === "1") return;
    await down(ctx, { only: started });
  };
}
