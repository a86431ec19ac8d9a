import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { connectorsDir } from "@flashgate/connect";
import type { DatabaseEngine } from "./config.ts";

/** The repository root, found from this file so commands work from any directory. */
export const repoRoot = resolve(fileURLToPath(new URL("../../..", import.meta.url)));

export const defaultHome = join(repoRoot, ".flashgate");

/**
 * The test, bench and chaos stacks live beside the dev stack, one home per engine, so that running the
 * suites on both engines never hands one engine's Kafka offsets to the other's connector.
 */
export const sideStackHome = (
  stack: "test" | "test-cluster" | "bench" | "bench-cluster" | "bench-decision" | "chaos",
  engine: DatabaseEngine,
) => join(repoRoot, `.flashgate-${stack}`, engine);

export type StackPaths = ReturnType<typeof stackPaths>;

export function stackPaths(home: string, jars = join(repoRoot, ".flashgate", "jars")) {
  return {
    home,
    jars,
    kafkaJars: join(jars, "kafka"),
    pluginPath: join(jars, "plugins"),
    jarsStamp: join(jars, ".complete"),
    pom: join(repoRoot, "connectors", "pom.xml"),
    connectorsDir,
    secrets: join(home, "secrets.json"),
    logs: join(home, "logs"),
    pids: join(home, "pids"),
    config: join(home, "config"),
    /** Which database engine this home's state belongs to (its binlog positions are in Kafka). */
    engine: join(home, "engine"),
    /** The topology this home's state was made for (a cluster's nodes, brokers and their data dirs). */
    topology: join(home, "topology"),
    /** Which database node is the primary, on a stack that runs two (a switchover or failover moves it). */
    databasePrimary: join(home, "database-primary"),
    /** The database proxy's configuration and its runtime socket (the endpoint that follows the primary). */
    databaseProxyConfig: join(home, "config", "haproxy.cfg"),
    databaseProxySocket: join(home, "haproxy.sock"),
    redisData: join(home, "redis"),
    kafkaData: join(home, "kafka"),
    connectData: join(home, "connect"),
  };
}
