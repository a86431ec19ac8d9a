import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root, found from this file so commands work from any directory. */
export const repoRoot = resolve(fileURLToPath(new URL("../../..", import.meta.url)));

export const connectorsDir = join(repoRoot, "connectors");

export const defaultHome = join(repoRoot, ".flashgate");

export type StackPaths = ReturnType<typeof stackPaths>;

export function stackPaths(home: string, jars = join(repoRoot, ".flashgate", "jars")) {
  return {
    home,
    jars,
    kafkaJars: join(jars, "kafka"),
    pluginPath: join(jars, "plugins"),
    jarsStamp: join(jars, ".complete"),
    pom: join(repoRoot, "connectors", "pom.xml"),
    connectorsDir: join(repoRoot, "connectors"),
    secrets: join(home, "secrets.json"),
    logs: join(home, "logs"),
    pids: join(home, "pids"),
    config: join(home, "config"),
    mariadbData: join(home, "mariadb"),
    mariadbSocket: join(home, "mariadb.sock"),
    redisData: join(home, "redis"),
    kafkaData: join(home, "kafka"),
    connectData: join(home, "connect"),
  };
}
