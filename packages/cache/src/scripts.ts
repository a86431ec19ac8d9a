import { readFileSync } from "node:fs";
import type { RedisClient } from "./client.ts";
import { buyerPrefix } from "./keys.ts";

/** A script's source, after the constants it shares with this package (defined once, in keys.ts). */
const lua = (name: string) =>
  `local buyer_prefix = '${buyerPrefix}'\n${readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), "utf8")}`;

const definitions = {
  fgReserve: { numberOfKeys: 4, lua: lua("reserve") },
  fgRelease: { numberOfKeys: 2, lua: lua("release") },
  fgLoad: { numberOfKeys: 4, lua: lua("load") },
  fgApply: { numberOfKeys: 3, lua: lua("apply") },
  fgActivity: { numberOfKeys: 3, lua: lua("activity") },
  fgLeaseRenew: { numberOfKeys: 1, lua: lua("lease-renew") },
  fgLeaseRelease: { numberOfKeys: 1, lua: lua("lease-release") },
  fgLeaseMark: { numberOfKeys: 2, lua: lua("lease-mark") },
  fgView: { numberOfKeys: 2, lua: lua("view") },
  fgDirectoryLookup: { numberOfKeys: 2, lua: lua("directory-lookup") },
  fgTicketQueue: { numberOfKeys: 1, lua: lua("ticket-queue") },
  fgTicketOutcome: { numberOfKeys: 1, lua: lua("ticket-outcome") },
  fgTicketForget: { numberOfKeys: 1, lua: lua("ticket-forget") },
  // Its first argument is the number of keys: one activity hash per entry.
  fgDirectory: { lua: lua("directory") },
} as const;

type ScriptName = keyof typeof definitions;

/** How many of reserve.lua's arguments are keys (see reserveArguments). */
export const reserveKeyCount = definitions.fgReserve.numberOfKeys;

/** The exact source a script runs as (the bench loads reserve.lua's by hand to time it). */
export const scriptSource = (name: ScriptName) => definitions[name].lua;

type ScriptArg = string | number;

export type FlashgateRedis = RedisClient & { [K in ScriptName]: (...args: ScriptArg[]) => Promise<unknown> };

/**
 * Registers the scripts on a client. ioredis sends EVALSHA and falls back to EVAL on NOSCRIPT
 * (after a Redis restart, SCRIPT FLUSH, or a failover to a replica that never loaded them), so callers
 * never see NOSCRIPT.
 */
export function withScripts(redis: RedisClient): FlashgateRedis {
  for (const [name, definition] of Object.entries(definitions)) {
    if (!(name in redis)) redis.defineCommand(name, definition);
  }
  return redis as FlashgateRedis;
}
