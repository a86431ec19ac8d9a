import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";
import { reserveKeyCount } from "./reserve.ts";

const lua = (name: string) => readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), "utf8");

const definitions = {
  fgReserve: { numberOfKeys: reserveKeyCount, lua: lua("reserve") },
  fgRelease: { numberOfKeys: 2, lua: lua("release") },
  fgLoad: { numberOfKeys: 4, lua: lua("load") },
  fgApply: { numberOfKeys: 3, lua: lua("apply") },
  fgActivity: { numberOfKeys: 3, lua: lua("activity") },
} as const;

type ScriptName = keyof typeof definitions;

type ScriptArg = string | number;

export type FlashgateRedis = Redis & { [K in ScriptName]: (...args: ScriptArg[]) => Promise<unknown> };

/**
 * Registers the scripts on a client. ioredis sends EVALSHA and falls back to EVAL on NOSCRIPT
 * (after a Redis restart or SCRIPT FLUSH), so callers never see NOSCRIPT.
 */
export function withScripts(redis: Redis): FlashgateRedis {
  for (const [name, definition] of Object.entries(definitions)) {
    if (!(name in redis)) redis.defineCommand(name, definition);
  }
  return redis as FlashgateRedis;
}
