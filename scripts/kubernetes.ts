// npm run kubernetes:connect — writes deploy/kubernetes/base/connect.yaml: Kafka Connect, the Debezium
// connector and the CDC topics as Strimzi resources, from the files the local stack runs (the connector's
// config, the Debezium version of connectors/pom.xml, the topic layout of @flashgate/cdc), so the two
// cannot drift: a test fails when the committed file differs from what this writes.
import { readFileSync, writeFileSync } from "node:fs";
import { topicPartitions, topics } from "@flashgate/cdc";
import { connectorsDir, missingEnvPlaceholders, readConnectorFile, workerSettings } from "@flashgate/connect";
import { debeziumDbUser } from "@flashgate/db";
import { stringify } from "yaml";

export const connectFile = new URL("../deploy/kubernetes/base/connect.yaml", import.meta.url);
const cluster = "flashgate";
const replicas = 3;

const pomVersion = (property: string) => {
  const pom = readFileSync(new URL("../connectors/pom.xml", import.meta.url), "utf8");
  const version = new RegExp(`<${property}>([^<]+)</${property}>`).exec(pom)?.[1];
  if (!version) throw new Error(`connectors/pom.xml has no ${property}`);
  return version;
};

/** Where the Connect workers find each ${env:…} the connector's config names. */
const placeholderSources: Record<string, object> = {
  FLASHGATE_DB_HOST: {
    valueFrom: { configMapKeyRef: { name: "flashgate-config", key: "FLASHGATE_DB_HOST" } },
  },
  FLASHGATE_DB_PORT: {
    valueFrom: { configMapKeyRef: { name: "flashgate-config", key: "FLASHGATE_DB_PORT" } },
  },
  FLASHGATE_KAFKA_BOOTSTRAP: {
    valueFrom: { configMapKeyRef: { name: "flashgate-config", key: "KAFKA_BROKERS" } },
  },
  FLASHGATE_DEBEZIUM_USER: { value: debeziumDbUser },
  FLASHGATE_DEBEZIUM_PASSWORD: {
    valueFrom: { secretKeyRef: { name: "flashgate-debezium", key: "password" } },
  },
};

/** The Strimzi resources of the connector in connectors/flashgate-mysql.json (MySQL 8: what production runs). */
export function connectResources() {
  const connector = readConnectorFile(connectorsDir, "flashgate-mysql.json");
  const { "connector.class": connectorClass, "tasks.max": tasksMax, ...config } = connector.config;
  const env = missingEnvPlaceholders(connector.config, {}).map((name) => {
    const source = placeholderSources[name];
    if (!source) throw new Error(`the connector's \${env:${name}} has no source in Kubernetes`);
    return { name, ...source };
  });
  const topic = (name: string, partitions: number, settings: Record<string, string | number> = {}) => ({
    apiVersion: "kafka.strimzi.io/v1",
    kind: "KafkaTopic",
    metadata: { name: name.replaceAll(".", "-"), labels: { "strimzi.io/cluster": cluster } },
    spec: { topicName: name, partitions, replicas, config: { "min.insync.replicas": 2, ...settings } },
  });
  return [
    {
      apiVersion: "kafka.strimzi.io/v1",
      kind: "KafkaConnect",
      metadata: { name: cluster, annotations: { "strimzi.io/use-connector-resources": "true" } },
      spec: {
        replicas: 2,
        bootstrapServers: `${cluster}-kafka-bootstrap:9092`,
        groupId: `${cluster}-connect`,
        configStorageTopic: `${cluster}-connect-configs`,
        offsetStorageTopic: `${cluster}-connect-offsets`,
        statusStorageTopic: `${cluster}-connect-status`,
        config: {
          "config.storage.replication.factor": replicas,
          "offset.storage.replication.factor": replicas,
          "status.storage.replication.factor": replicas,
          // ${env:…} in a connector's config is resolved by the worker, so no secret is stored in Kafka.
          "config.providers": "env",
          "config.providers.env.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
          ...workerSettings,
        },
        // Strimzi builds the worker image with the connector plugin from Maven Central.
        build: {
          output: { type: "docker", image: "flashgate-connect:latest" },
          plugins: [
            {
              name: "debezium-mysql",
              artifacts: [
                {
                  type: "maven",
                  group: "io.debezium",
                  artifact: "debezium-connector-mysql",
                  version: pomVersion("debezium.version"),
                },
              ],
            },
          ],
        },
        template: { connectContainer: { env } },
        resources: { requests: { cpu: "500m", memory: "1Gi" }, limits: { cpu: "2", memory: "1Gi" } },
      },
    },
    {
      apiVersion: "kafka.strimzi.io/v1",
      kind: "KafkaConnector",
      metadata: { name: connector.name, labels: { "strimzi.io/cluster": cluster } },
      spec: {
        class: connectorClass,
        tasksMax: Number(tasksMax),
        // A FAILED connector or task is restarted with backoff by the operator too.
        autoRestart: { enabled: true },
        config,
      },
    },
    topic(topics.sale, topicPartitions),
    topic(topics.activity, topicPartitions),
    topic(topics.heartbeat, topicPartitions),
    topic(topics.deadLetters, topicPartitions),
    topic(config["schema.history.internal.kafka.topic"], 1, { "retention.ms": -1 }),
  ];
}

/** The file's text: one YAML document per resource. */
export const connectYaml = () =>
  `# Written by \`npm run kubernetes:connect\` from connectors/flashgate-mysql.json. Do not edit.\n${connectResources()
    .map((resource) => `---\n${stringify(resource, { lineWidth: 0 })}`)
    .join("")}`;

if (import.meta.main) {
  writeFileSync(connectFile, connectYaml());
  console.log(`wrote ${connectFile.pathname}`);
}
