import { spawnSync } from "node:child_process";
import { cpus, totalmem } from "node:os";
import { parseConfig, stackConfigSchema } from "@flashgate/config";
import {
  appEnv,
  consoleProgress,
  type StackContext,
  sideStackHome,
  stackContext,
  up,
} from "@flashgate/stack";

/** The bench stack has its own ports and data dir, so a run never disturbs a dev or test stack. */
const engine = parseConfig(stackConfigSchema.pick({ FLASHGATE_DB: true }), process.env).FLASHGATE_DB;

export const benchStackEnv: Record<string, string> = {
  FLASHGATE_HOME: sideStackHome("bench", engine),
  FLASHGATE_DB: engine,
  FLASHGATE_DB_PORT: "23307",
  FLASHGATE_REDIS_PORT: "26380",
  FLASHGATE_KAFKA_PORT: "29092",
  FLASHGATE_KAFKA_CONTROLLER_PORT: "29093",
  FLASHGATE_CONNECT_PORT: "28083",
  FLASHGATE_API_PORT: "28080",
  FLASHGATE_MAINTAINER_PORT: "28082",
  FLASHGATE_DASHBOARD_PORT: "28084",
};

export async function startBenchStack(): Promise<{ ctx: StackContext; env: Record<string, string> }> {
  const ctx = stackContext({ env: { ...process.env, ...benchStackEnv }, progress: consoleProgress() });
  await up(ctx, { withApps: false });
  return { ctx, env: { ...benchStackEnv, ...appEnv(ctx) } };
}

const version = (command: string, args: string[]) => {
  const result = spawnSync(command, args, { encoding: "utf8" });
  return `${result.stdout}${result.stderr}`.split("\n")[0].trim() || "unknown";
};

export function machineFacts() {
  return {
    cpus: `${cpus().length} × ${cpus()[0]?.model ?? "?"}`,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    mariadb: version("mariadbd", ["--version"]),
    redis: version("redis-server", ["--version"]),
    java: version("java", ["-version"]),
  };
}
