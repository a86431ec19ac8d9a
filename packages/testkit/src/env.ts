import { appEnv, type StackContext, silentProgress, stackContext } from "@flashgate/stack";
import { inject } from "vitest";
import type {} from "./provided.ts";

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

/** The fast tier's database, as the purchase API's account or the cache-maintainer's. */
export function fastDatabaseUrl(account: "api" | "maintainer" = "api"): string {
  const url = account === "api" ? fastTier().databaseUrl : fastTier().maintainerDatabaseUrl;
  if (!url) throw new Error("no database here: name the test file *.db.test.ts or *.service.test.ts");
  return url;
}

/**
 * The apps' environment in the tier this test runs in: the whole test stack's (integration), or a fast
 * tier's own Redis and database (`service`: an app's HTTP behaviour without Kafka, Connect or CDC).
 */
export const appTierEnv = (): Record<string, string> => inject("stackEnv") ?? appEnv(fastTierContext());
