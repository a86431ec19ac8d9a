import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { StackContext } from "@flashgate/stack";
import type { TcpProxy } from "@flashgate/testkit/tcp-proxy";
import type { Redis } from "ioredis";
import type { AppHandle } from "./apps.ts";

export interface FaultTargets {
  ctx: StackContext;
  api: AppHandle;
  maintainer: AppHandle;
  redis: Redis;
  /** The purchase API reaches the database through this proxy, so the link can be cut. */
  databaseLink: TcpProxy;
}

/** A fault: what breaks, held for a while, then healed (heal also runs if the hold is cut short). */
interface Fault {
  inject: (targets: FaultTargets) => Promise<void>;
  heal: (targets: FaultTargets) => Promise<void>;
}

const stackPid = (ctx: StackContext, name: "kafka" | "connect") =>
  Number.parseInt(readFileSync(join(ctx.paths.pids, `${name}.pid`), "utf8"), 10);

/** SIGSTOP, then SIGCONT: a process that hangs (GC pause, a stuck disk) rather than dies. */
const pause = (pid: (t: FaultTargets) => number): Fault => ({
  inject: async (t) => void process.kill(pid(t), "SIGSTOP"),
  heal: async (t) => void process.kill(pid(t), "SIGCONT"),
});

const appPause = (app: (t: FaultTargets) => AppHandle): Fault => ({
  inject: async (t) => void app(t).signal("SIGSTOP"),
  heal: async (t) => void app(t).signal("SIGCONT"),
});

/** kill -9 at once; the restart is the heal. */
const appCrash = (app: (t: FaultTargets) => AppHandle): Fault => ({
  inject: (t) => app(t).kill("SIGKILL"),
  heal: (t) => app(t).start(),
});

export const faults = {
  "kill-api": appCrash((t) => t.api),
  "kill-maintainer": appCrash((t) => t.maintainer),
  "stop-api": appPause((t) => t.api),
  "stop-maintainer": appPause((t) => t.maintainer),
  "stop-connect": pause((t) => stackPid(t.ctx, "connect")),
  "stop-kafka": pause((t) => stackPid(t.ctx, "kafka")),
  flushall: {
    inject: async (t) => void (await t.redis.flushall()),
    heal: async () => {},
  },
  // Redis data lost while nobody can rebuild it: the API must stay closed (503), never guess.
  "flushall-maintainer-down": {
    inject: async (t) => {
      t.maintainer.signal("SIGSTOP");
      await t.redis.flushall();
    },
    heal: async (t) => void t.maintainer.signal("SIGCONT"),
  },
  "redis-oom": {
    inject: async (t) => void (await t.redis.config("SET", "maxmemory", "1")),
    heal: async (t) => void (await t.redis.config("SET", "maxmemory", "0")),
  },
  "cut-database-link": {
    inject: (t) => t.databaseLink.cut(),
    heal: (t) => t.databaseLink.restore(),
  },
} satisfies Record<string, Fault>;

export type FaultKind = keyof typeof faults;
export const faultKinds = Object.keys(faults) as FaultKind[];
