import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { workerGarbageCollector, workerSettings } from "@flashgate/connect";
import type { Component, StackContext } from "../context.ts";
import { answersOk } from "../net.ts";
import { startDaemon, tailLog } from "../processes.ts";
import { instanceName, instancePort } from "../topology.ts";
import { waitFor } from "../wait.ts";
import { classpath, jvmArgs, writeLog4j, writeProperties } from "./jvm.ts";
import { kafkaBootstrap } from "./kafka.ts";

const workerUrl = (ctx: StackContext, index: number) =>
  `http://127.0.0.1:${instancePort(ctx.config.FLASHGATE_CONNECT_PORT, index)}`;

/** The first worker's REST API; any worker of the group serves the whole group's connectors. */
export const connectUrl = (ctx: StackContext) => workerUrl(ctx, 0);

/** What connector configs may reference as ${env:…}: the worker resolves them, so no secret is stored in Kafka. */
export const connectorEnv = (ctx: StackContext): Record<string, string> => ({
  FLASHGATE_DB_HOST: "127.0.0.1",
  FLASHGATE_DB_PORT: String(ctx.config.FLASHGATE_DB_PORT),
  FLASHGATE_DEBEZIUM_USER: "debezium",
  FLASHGATE_DEBEZIUM_PASSWORD: ctx.secrets.debeziumDbPassword,
  FLASHGATE_KAFKA_BOOTSTRAP: kafkaBootstrap(ctx),
});

/**
 * Worker `index` of the distributed Connect group (one on the single stack, two on a cluster): the workers
 * of one group.id share the connector, and a dead worker's task moves to another after
 * scheduled.rebalance.max.delay.ms.
 */
export function connectWorker(ctx: StackContext, index: number): Component {
  const name = instanceName(ctx.config, "connect", index);
  const port = instancePort(ctx.config.FLASHGATE_CONNECT_PORT, index);
  const url = workerUrl(ctx, index);
  const workerUp = () => answersOk(`${url}/connector-plugins`, 2000);
  return {
    name,
    port: () => ({ port, variable: "FLASHGATE_CONNECT_PORT" }),
    async start() {
      const step = ctx.progress.step(`Kafka Connect worker (distributed, Debezium) on ${url}`);
      mkdirSync(ctx.paths.connectData, { recursive: true });
      const properties = join(ctx.paths.config, `${name}-distributed.properties`);
      writeProperties(properties, {
        "bootstrap.servers": kafkaBootstrap(ctx),
        "group.id": "flashgate-connect",
        "offset.storage.topic": "flashgate-connect-offsets",
        // -1: the brokers' default replication factor (3 on a cluster).
        "offset.storage.replication.factor": -1,
        "offset.storage.partitions": 5,
        "config.storage.topic": "flashgate-connect-configs",
        "config.storage.replication.factor": -1,
        "status.storage.topic": "flashgate-connect-status",
        "status.storage.replication.factor": -1,
        ...workerSettings,
        listeners: url,
        "rest.advertised.host.name": "127.0.0.1",
        "plugin.path": ctx.paths.pluginPath,
        "plugin.discovery": "hybrid_warn",
        "topic.creation.enable": "true",
        "scheduled.rebalance.max.delay.ms": ctx.config.FLASHGATE_TOPOLOGY === "cluster" ? 3000 : 5000,
        // With two workers, a dead one is noticed after 6 s (default 10), and its task moves 3 s later.
        ...(ctx.config.FLASHGATE_TOPOLOGY === "cluster"
          ? { "session.timeout.ms": 6000, "heartbeat.interval.ms": 2000 }
          : {}),
      });
      const log4j = writeLog4j(ctx, name, ["org.apache.kafka.connect.runtime.Worker", "io.debezium"]);
      const daemon = startDaemon(
        {
          name,
          command: "java",
          args: [
            ...jvmArgs(ctx.config.FLASHGATE_CONNECT_HEAP, log4j, [`-XX:+${workerGarbageCollector}`]),
            "-cp",
            classpath(ctx),
            "org.apache.kafka.connect.cli.ConnectDistributed",
            properties,
          ],
          env: connectorEnv(ctx),
        },
        ctx.paths,
      );
      await waitFor(`the REST API of ${name}`, workerUp, {
        timeoutMs: 120_000,
        intervalMs: 500,
        progress: step,
        failFast: () =>
          daemon.exited() !== null ? `${name} exited:\n${tailLog(daemon.logFile)}` : undefined,
      });
      step.done();
    },
    healthy: workerUp,
  };
}
