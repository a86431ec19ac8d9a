import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Component, StackContext } from "../context.ts";
import { answersOk } from "../net.ts";
import { startDaemon, tailLog } from "../processes.ts";
import { waitFor } from "../wait.ts";
import { classpath, jvmArgs, writeLog4j, writeProperties } from "./jvm.ts";
import { kafkaBootstrap } from "./kafka.ts";

export const connectUrl = (ctx: StackContext) => `http://127.0.0.1:${ctx.config.FLASHGATE_CONNECT_PORT}`;

/** What connector configs may reference as ${env:…}: the worker resolves them, so no secret is stored in Kafka. */
export const connectorEnv = (ctx: StackContext): Record<string, string> => ({
  FLASHGATE_DB_HOST: "127.0.0.1",
  FLASHGATE_DB_PORT: String(ctx.config.FLASHGATE_DB_PORT),
  FLASHGATE_DEBEZIUM_USER: "debezium",
  FLASHGATE_DEBEZIUM_PASSWORD: ctx.secrets.debeziumDbPassword,
  FLASHGATE_KAFKA_BOOTSTRAP: kafkaBootstrap(ctx),
});

const workerUp = (ctx: StackContext) => answersOk(`${connectUrl(ctx)}/connector-plugins`, 2000);

export const connect: Component = {
  name: "connect",
  port: (ctx) => ({ port: ctx.config.FLASHGATE_CONNECT_PORT, variable: "FLASHGATE_CONNECT_PORT" }),
  async start(ctx) {
    const step = ctx.progress.step(`Kafka Connect (distributed, Debezium) on ${connectUrl(ctx)}`);
    mkdirSync(ctx.paths.connectData, { recursive: true });
    const properties = join(ctx.paths.config, "connect-distributed.properties");
    writeProperties(properties, {
      "bootstrap.servers": kafkaBootstrap(ctx),
      "group.id": "flashgate-connect",
      "key.converter": "org.apache.kafka.connect.json.JsonConverter",
      "value.converter": "org.apache.kafka.connect.json.JsonConverter",
      "key.converter.schemas.enable": "false",
      "value.converter.schemas.enable": "false",
      "offset.storage.topic": "flashgate-connect-offsets",
      "offset.storage.replication.factor": 1,
      "offset.storage.partitions": 5,
      "config.storage.topic": "flashgate-connect-configs",
      "config.storage.replication.factor": 1,
      "status.storage.topic": "flashgate-connect-status",
      "status.storage.replication.factor": 1,
      "offset.flush.interval.ms": 1000,
      listeners: connectUrl(ctx),
      "rest.advertised.host.name": "127.0.0.1",
      "plugin.path": ctx.paths.pluginPath,
      "plugin.discovery": "hybrid_warn",
      "config.providers": "env,file",
      "config.providers.env.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
      "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
      "topic.creation.enable": "true",
      "scheduled.rebalance.max.delay.ms": 5000,
    });
    const log4j = writeLog4j(ctx, "connect", ["org.apache.kafka.connect.runtime.Worker", "io.debezium"]);
    const daemon = startDaemon(
      {
        name: "connect",
        command: "java",
        args: [
          ...jvmArgs(ctx.config.FLASHGATE_CONNECT_HEAP, log4j),
          "-cp",
          classpath(ctx),
          "org.apache.kafka.connect.cli.ConnectDistributed",
          properties,
        ],
        env: connectorEnv(ctx),
      },
      ctx.paths,
    );
    await waitFor("the Connect REST API", () => workerUp(ctx), {
      timeoutMs: 120_000,
      intervalMs: 500,
      progress: step,
      failFast: () => (daemon.exited() !== null ? `connect exited:\n${tailLog(daemon.logFile)}` : undefined),
    });
    step.done();
  },
  healthy: workerUp,
};
