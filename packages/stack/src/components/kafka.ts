import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { topicPartitions } from "@flashgate/cdc";
import type { Component, StackContext } from "../context.ts";
import { isPortOpen } from "../net.ts";
import { startDaemon, tailLog } from "../processes.ts";
import { StackError, waitFor } from "../wait.ts";
import { classpath, jvmArgs, writeLog4j, writeProperties } from "./jvm.ts";

export const kafkaBootstrap = (ctx: StackContext) => `127.0.0.1:${ctx.config.FLASHGATE_KAFKA_PORT}`;

function writeServerProperties(ctx: StackContext): string {
  const { FLASHGATE_KAFKA_PORT: port, FLASHGATE_KAFKA_CONTROLLER_PORT: controller } = ctx.config;
  const file = join(ctx.paths.config, "kafka.properties");
  writeProperties(file, {
    "process.roles": "broker,controller",
    "node.id": 1,
    "controller.quorum.voters": `1@127.0.0.1:${controller}`,
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controller}`,
    "advertised.listeners": `PLAINTEXT://127.0.0.1:${port}`,
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "log.dirs": join(ctx.paths.kafkaData, "logs"),
    "num.partitions": topicPartitions,
    "auto.create.topics.enable": "true",
    "offsets.topic.replication.factor": 1,
    "offsets.topic.num.partitions": 6,
    "transaction.state.log.replication.factor": 1,
    "transaction.state.log.min.isr": 1,
    "share.coordinator.state.topic.replication.factor": 1,
    "share.coordinator.state.topic.min.isr": 1,
    "group.initial.rebalance.delay.ms": 0,
    "log.retention.hours": 72,
    "log.segment.bytes": 67108864,
  });
  return file;
}

/** KRaft storage is formatted once; later starts keep the topics and offsets. */
function formatStorage(ctx: StackContext, propertiesFile: string) {
  if (existsSync(join(ctx.paths.kafkaData, "logs", "meta.properties"))) return;
  const clusterId = Buffer.from(randomUUID().replaceAll("-", ""), "hex").toString("base64url");
  const log4j = writeLog4j(ctx, "kafka-storage");
  const result = spawnSync(
    "java",
    [
      ...jvmArgs("256m", log4j),
      "-cp",
      classpath(ctx),
      "kafka.tools.StorageTool",
      "format",
      "-t",
      clusterId,
      "-c",
      propertiesFile,
    ],
    { encoding: "utf8" },
  );
  if (result.status !== 0)
    throw new StackError(`formatting Kafka storage failed: ${(result.stderr || result.stdout).slice(-2000)}`);
}

export const kafka: Component = {
  name: "kafka",
  port: (ctx) => ({ port: ctx.config.FLASHGATE_KAFKA_PORT, variable: "FLASHGATE_KAFKA_PORT" }),
  async start(ctx) {
    const step = ctx.progress.step(`Kafka (KRaft) on ${kafkaBootstrap(ctx)}`);
    mkdirSync(ctx.paths.kafkaData, { recursive: true });
    mkdirSync(ctx.paths.config, { recursive: true });
    const properties = writeServerProperties(ctx);
    step.waiting("formatting storage");
    formatStorage(ctx, properties);
    const log4j = writeLog4j(ctx, "kafka", ["kafka.server.KafkaRaftServer", "kafka.server.BrokerServer"]);
    const daemon = startDaemon(
      {
        name: "kafka",
        command: "java",
        args: [
          ...jvmArgs(ctx.config.FLASHGATE_KAFKA_HEAP, log4j),
          "-cp",
          classpath(ctx),
          "kafka.Kafka",
          properties,
        ],
      },
      ctx.paths,
    );
    await waitFor("the Kafka broker to listen", () => isPortOpen(ctx.config.FLASHGATE_KAFKA_PORT), {
      timeoutMs: 90_000,
      progress: step,
      failFast: () => (daemon.exited() !== null ? `kafka exited:\n${tailLog(daemon.logFile)}` : undefined),
    });
    step.done();
  },
  healthy: (ctx) => isPortOpen(ctx.config.FLASHGATE_KAFKA_PORT),
};
