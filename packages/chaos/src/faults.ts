import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { RedisClient } from "@flashgate/cache";
import { type StackContext, up } from "@flashgate/stack";
import type { TcpProxy } from "@flashgate/testkit/tcp-proxy";
import type { AppHandle } from "./apps.ts";

export interface FaultTargets {
  ctx: StackContext;
  api: AppHandle;
  maintainer: AppHandle;
  redis: RedisClient;
  /** The purchase API reaches the database through this proxy, so the link can be cut. */
  databaseLink: TcpProxy;
}

/** A fault: what breaks, held for a while, then healed (heal also runs if the hold is cut short). */
interface Fault {
  inject: (targets: FaultTargets) => Promise<void>;
  heal: (targets: FaultTargets) => Promise<void>;
}

type StackProcess = "kafka" | "connect" | "redis" | "database";

const stackPid = (ctx: StackContext, name: StackProcess) =>
  Number.parseInt(readFileSync(join(ctx.paths.pids, `${name}.pid`), "utf8"), 10);

async function killStackProcess(ctx: StackContext, name: StackProcess) {
  const pid = stackPid(ctx, name);
  process.kill(pid, "SIGKILL");
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(20);
  }
}

/** kill -9 of a stack server; the heal starts it again as `flashgate up` would (`lose` runs in between). */
const serverCrash = (name: StackProcess, lose: (ctx: StackContext) => void = () => {}): Fault => ({
  inject: async (t) => {
    await killStackProcess(t.ctx, name);
    lose(t.ctx);
  },
  heal: async (t) => void (await up(t.ctx, { withApps: false })),
});

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
  // Slow to come back (Connect takes ~15 s to start and resume its connector): the long profile only.
  "kill-kafka": serverCrash("kafka"),
  "kill-connect": serverCrash("connect"),
  // Redis gone with its data: the append-only file is deleted before it starts again.
  "restart-redis-empty": serverCrash("redis", (ctx) =>
    rmSync(join(ctx.paths.redisData, "appendonlydir"), { recursive: true, force: true }),
  ),
  // The database crashes and recovers (InnoDB crash recovery); Debezium must reconnect on its own.
  "restart-database": serverCrash("database"),
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
