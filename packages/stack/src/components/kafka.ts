import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { topicPartitions } from "@flashgate/cdc";
import type { Component, StackContext } from "../context.ts";
import { isPortOpen } from "../net.ts";
import { startDaemon, tailLog } from "../processes.ts";
import { instanceName, instancePort, instances } from "../topology.ts";
import { StackError, waitFor } from "../wait.ts";
import { classpath, jvmArgs, writeLog4j, writeProperties } from "./jvm.ts";

const brokers = (ctx: StackContext) =>
  instances(ctx.config, "kafka").map((index) => ({
    id: index + 1,
    name: instanceName(ctx.config, "kafka", index),
    port: instancePort(ctx.config.FLASHGATE_KAFKA_PORT, index),
    controller: instancePort(ctx.config.FLASHGATE_KAFKA_CONTROLLER_PORT, index),
  }));

type Broker = ReturnType<typeof brokers>[number];

export const kafkaBootstrap = (ctx: StackContext) =>
  brokers(ctx)
    .map((broker) => `127.0.0.1:${broker.port}`)
    .join(",");

/** Every broker is also a controller; the quorum is all of them (a majority must be up to elect a leader). */
function writeServerProperties(ctx: StackContext, broker: Broker): string {
  const all = brokers(ctx);
  // Replicated on a cluster: a write is acknowledged by two brokers, so one may die without losing it.
  const replicas = all.length >= 3 ? 3 : 1;
  const minInSync = replicas === 3 ? 2 : 1;
  const file = join(ctx.paths.config, `${broker.name}.properties`);
  writeProperties(file, {
    "process.roles": "broker,controller",
    "node.id": broker.id,
    "controller.quorum.voters": all.map((b) => `${b.id}@127.0.0.1:${b.controller}`).join(","),
    listeners: `PLAINTEXT://127.0.0.1:${broker.port},CONTROLLER://127.0.0.1:${broker.controller}`,
    "advertised.listeners": `PLAINTEXT://127.0.0.1:${broker.port}`,
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "log.dirs": join(brokerDataDir(ctx, broker), "logs"),
    "num.partitions": topicPartitions,
    "auto.create.topics.enable": "true",
    "default.replication.factor": replicas,
    "min.insync.replicas": minInSync,
    "offsets.topic.replication.factor": replicas,
    "offsets.topic.num.partitions": 6,
    "transaction.state.log.replication.factor": replicas,
    "transaction.state.log.min.isr": minInSync,
    "share.coordinator.state.topic.replication.factor": replicas,
    "share.coordinator.state.topic.min.isr": minInSync,
    "group.initial.rebalance.delay.ms": 0,
    // A broker silent for 4 s (default 9) is fenced and its partitions get new leaders: CDC stalls that long.
    "broker.heartbeat.interval.ms": 1000,
    "broker.session.timeout.ms": 4000,
    "log.retention.hours": 72,
    // Each record carries the time the broker appended it, not its producer's: the CDC lag's send stage
    // ends in Kafka, and the stage after it is Kafka's own (replication, then the consumer's fetch).
    "log.message.timestamp.type": "LogAppendTime",
    "log.segment.bytes": 67108864,
  });
  return file;
}

const brokerDataDir = (ctx: StackContext, broker: Broker) =>
  brokers(ctx).length > 1 ? join(ctx.paths.kafkaData, broker.name) : ctx.paths.kafkaData;

/** The brokers of one cluster share its id: made once, kept beside their data. */
function clusterId(ctx: StackContext): string {
  const file = join(ctx.paths.kafkaData, "cluster-id");
  if (!existsSync(file)) {
    mkdirSync(ctx.paths.kafkaData, { recursive: true });
    writeFileSync(file, Buffer.from(randomUUID().replaceAll("-", ""), "hex").toString("base64url"));
  }
  return readFileSync(file, "utf8").trim();
}

/** KRaft storage is formatted once; later starts keep the topics and offsets. */
function formatStorage(ctx: StackContext, broker: Broker, propertiesFile: string) {
  if (existsSync(join(brokerDataDir(ctx, broker), "logs", "meta.properties"))) return;
  const log4j = writeLog4j(ctx, "kafka-storage");
  const result = spawnSync(
    "java",
    [
      ...jvmArgs("256m", log4j),
      "-cp",
      classpath(ctx),
      "kafka.tools.StorageTool",
      "format",
      // One argument with its value: an id may begin with "-", which would otherwise read as an option.
      `--cluster-id=${clusterId(ctx)}`,
      `--config=${propertiesFile}`,
    ],
    { encoding: "utf8" },
  );
  if (result.status !== 0)
    throw new StackError(`formatting Kafka storage failed: ${(result.stderr || result.stdout).slice(-2000)}`);
}

/** A broker's properties written and its storage formatted (once): what it needs before it starts. */
export function prepareBroker(ctx: StackContext, index: number): string {
  const broker = brokers(ctx)[index];
  mkdirSync(brokerDataDir(ctx, broker), { recursive: true });
  mkdirSync(ctx.paths.config, { recursive: true });
  const properties = writeServerProperties(ctx, broker);
  formatStorage(ctx, broker, properties);
  return properties;
}

const allListening = async (ctx: StackContext) =>
  (await Promise.all(brokers(ctx).map((broker) => isPortOpen(broker.port)))).every(Boolean);

/** Broker `index`: the only one, or one of a three-broker KRaft cluster. */
export function kafkaBroker(ctx: StackContext, index: number): Component {
  const broker = brokers(ctx)[index];
  const clustered = brokers(ctx).length > 1;
  return {
    name: broker.name,
    port: () => ({ port: broker.port, variable: "FLASHGATE_KAFKA_PORT" }),
    async start() {
      const step = ctx.progress.step(
        `${clustered ? `Kafka broker ${broker.id} (KRaft)` : "Kafka (KRaft)"} on 127.0.0.1:${broker.port}`,
      );
      step.waiting("formatting storage");
      const properties = prepareBroker(ctx, index);
      const log4j = writeLog4j(ctx, broker.name, [
        "kafka.server.KafkaRaftServer",
        "kafka.server.BrokerServer",
      ]);
      const daemon = startDaemon(
        {
          name: broker.name,
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
      // A clustered broker serves clients only once a quorum of controllers runs: here, its controller
      // listening is enough; the last broker's settle waits for them all.
      const listening = clustered ? broker.controller : broker.port;
      await waitFor(`${broker.name} to listen`, () => isPortOpen(listening), {
        timeoutMs: 90_000,
        progress: step,
        failFast: () =>
          daemon.exited() !== null ? `${broker.name} exited:\n${tailLog(daemon.logFile)}` : undefined,
      });
      step.done();
    },
    healthy: () => isPortOpen(broker.port),
    settle:
      clustered && index === brokers(ctx).length - 1
        ? async () => {
            const step = ctx.progress.step(`Kafka cluster of ${brokers(ctx).length} brokers`);
            await waitFor("every broker to serve clients", () => allListening(ctx), {
              timeoutMs: 120_000,
              progress: step,
            });
            step.done();
          }
        : undefined,
  };
}
