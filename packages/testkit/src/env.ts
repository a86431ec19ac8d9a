import { type StackContext, silentProgress, stackContext } from "@flashgate/stack";
import { inject } from "vitest";

export const stackEnv = (): Record<string, string> => inject("stackEnv");

export const testContext = (): StackContext => stackContext({ env: stackEnv(), progress: silentProgress });

const fastTier = () => inject("fastTier");

/** In the fast tiers (`redis`, `database`, `service`): the parts they run against, and a context to administer them. */
export const fastTierContext = (): StackContext =>
  stackContext({ env: fastTier().stackEnv, progress: silentProgress });

export function fastRedisUrl(): string {
  const url = fastTier().redisUrl;
  if (!url) throw new Error("no Redis here: name the test file *.redis.test.ts or *.service.test.ts");
  return url;
}

export function fastDatabaseUrl(): string {
  const url = fastTier().databaseUrl;
  if (!url) throw new Error("no database here: name the test file *.db.test.ts or *.service.test.ts");
  return url;
}
