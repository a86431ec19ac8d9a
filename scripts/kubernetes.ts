// npm run kubernetes:connect — writes deploy/kubernetes/base/connect.yaml: Kafka Connect, the Debezium
// connector, the topics and the KafkaUsers as Strimzi resources, from the files the local stack runs (the
// connector's config, the Debezium version of connectors/pom.xml, the topic layout of @flashgate/cdc and
// the purchase queue's of @flashgate/kafka), so the two cannot drift: a test fails when the committed file
// differs from what this writes.
import { readFileSync, writeFileSync } from "node:fs";
import { topicPartitions, topics } from "@flashgate/cdc";
import {
  connectorsDir,
  missingEnvPlaceholders,
  readConnectorFile,
  workerGarbageCollector,
  workerSettings,
} from "@flashgate/connect";
import { debeziumDbUser } from "@flashgate/db";
import { purchaseQueue } from "@flashgate/kafka";
import { consumerGroup, lostCommitGroupPrefix } from "@flashgate/maintainer";
import { stringify } from "yaml";

export const connectFile = new URL("../deploy/kubernetes/base/connect.yaml", import.meta.url);
const cluster = "flashgate";
const replicas = 3;
/** The authenticated listener (SCRAM-SHA-512 over TLS) every client dials: kafka.yaml defines it. */
const bootstrap = `${cluster}-kafka-bootstrap:9093`;
/** The cluster CA's Secret, written by Strimzi: what clients trust the brokers' certificates by. */
const clusterCaSecret = `${cluster}-cluster-ca-cert`;
export const connectUser = `${cluster}-connect`;
export const maintainerUser = "cache-maintainer";
export const purchaseApiUser = "purchase-api";
/**
 * Where Strimzi's build fetches the connector plugin: Maven Central's layout, on the repository or mirror
 * the cluster may reach (the overlay names it). The plugin's SHA-512 pins it: a test checks it against the
 * artifact Maven serves for the version of connectors/pom.xml.
 */
export const mavenRepository = "https://maven.example.internal/maven2";
export const debeziumPluginSha512: Record<string, string> = {
  "3.6.1.Final":
    "81d43014a1ba0f1dd650525ed23bec36caecc33e3368a95554ca8bd2cca82df9575f7f4c46c8c5fd45ea2e3ee85c20620e9f71f07ecc6b0354eea3bccf0653bd",
};

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
  // Debezium's schema history has Kafka clients of its own: Connect's KafkaUser and the cluster CA.
  FLASHGATE_KAFKA_USER: { value: connectUser },
  FLASHGATE_KAFKA_PASSWORD: { valueFrom: { secretKeyRef: { name: connectUser, key: "password" } } },
  FLASHGATE_KAFKA_CA: { valueFrom: { secretKeyRef: { name: clusterCaSecret, key: "ca.crt" } } },
};

/** A placeholder the Connect worker resolves from its environment (EnvVarConfigProvider). */
const fromEnv = (name: string) => `\${env:${name}}`;

/** The schema history's producer and consumer on the authenticated listener (Kubernetes only). */
const schemaHistorySecurity = Object.fromEntries(
  ["producer", "consumer"].flatMap((client) =>
    Object.entries({
      "security.protocol": "SASL_SSL",
      "sasl.mechanism": "SCRAM-SHA-512",
      "sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="${fromEnv("FLASHGATE_KAFKA_USER")}" password="${fromEnv("FLASHGATE_KAFKA_PASSWORD")}";`,
      "ssl.truststore.type": "PEM",
      "ssl.truststore.certificates": fromEnv("FLASHGATE_KAFKA_CA"),
    }).map(([key, value]) => [`schema.history.internal.${client}.${key}`, value]),
  ),
);

type Operation = "Read" | "Write" | "Create" | "Describe" | "DescribeConfigs" | "Delete";
const acl = (
  type: "topic" | "group" | "cluster",
  name: string,
  operations: Operation[],
  patternType = "literal",
) => ({
  resource: type === "cluster" ? { type } : { type, name, patternType },
  operations,
});

/** A Kafka user authenticated by SCRAM-SHA-512, allowed these ACLs and nothing else (authorization simple). */
const kafkaUser = (name: string, acls: ReturnType<typeof acl>[]) => ({
  apiVersion: "kafka.strimzi.io/v1",
  kind: "KafkaUser",
  metadata: { name, labels: { "strimzi.io/cluster": cluster } },
  spec: { authentication: { type: "scram-sha-512" }, authorization: { type: "simple", acls } },
});

/** The Strimzi resources of the connector in connectors/flashgate-mysql.json (MySQL 8: what production runs). */
export function connectResources() {
  const connector = readConnectorFile(connectorsDir, "flashgate-mysql.json");
  const { "connector.class": connectorClass, "tasks.max": tasksMax, ...local } = connector.config;
  const config = { ...local, ...schemaHistorySecurity };
  const debezium = pomVersion("debezium.version");
  const sha512sum = debeziumPluginSha512[debezium];
  if (!sha512sum) throw new Error(`no SHA-512 of the Debezium ${debezium} plugin in debeziumPluginSha512`);
  const history = config["schema.history.internal.kafka.topic"];
  const env = missingEnvPlaceholders(config, {}).map((name) => {
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
        version: pomVersion("kafka.version"),
        replicas: 2,
        bootstrapServers: bootstrap,
        tls: { trustedCertificates: [{ secretName: clusterCaSecret, pattern: "*.crt" }] },
        authentication: {
          type: "scram-sha-512",
          username: connectUser,
          passwordSecret: { secretName: connectUser, password: "password" },
        },
        groupId: `${cluster}-connect`,
        configStorageTopic: `${cluster}-connect-configs`,
        offsetStorageTopic: `${cluster}-connect-offsets`,
        statusStorageTopic: `${cluster}-connect-status`,
        config: {
          "config.storage.replication.factor": replicas,
          "offset.storage.replication.factor": replicas,
          "status.storage.replication.factor": replicas,
          ...workerSettings,
        },
        // Strimzi builds the worker image with the connector plugin, checked against its SHA-512.
        build: {
          output: { type: "docker", image: `flashgate-connect:debezium-${debezium}` },
          plugins: [
            {
              name: "debezium-mysql",
              artifacts: [
                {
                  type: "tgz",
                  url: `${mavenRepository}/io/debezium/debezium-connector-mysql/${debezium}/debezium-connector-mysql-${debezium}-plugin.tar.gz`,
                  sha512sum,
                },
              ],
            },
          ],
        },
        template: { connectContainer: { env } },
        resources: { requests: { cpu: "500m", memory: "1Gi" }, limits: { cpu: "2", memory: "1Gi" } },
        jvmOptions: { "-XX": { [workerGarbageCollector]: "true" } },
      },
    },
    {
      apiVersion: "kafka.strimzi.io/v1",
      kind: "KafkaConnector",
      metadata: { name: connector.name, labels: { "strimzi.io/cluster": cluster } },
      spec: {
        class: connectorClass,
        tasksMax: Number(tasksMax),
        // The maintainers restart a FAILED connector or task within seconds (through this resource); the
        // operator's own restarts, minutes apart, are the backstop while no maintainer runs.
        autoRestart: { enabled: true },
        config,
      },
    },
    topic(topics.sale, topicPartitions),
    topic(topics.activity, topicPartitions),
    topic(topics.heartbeat, topicPartitions),
    topic(topics.deadLetters, topicPartitions),
    topic(history, 1, { "retention.ms": -1 }),
    // The purchase queue (ADR 0030): the operator's, so that the API's user needs no Create.
    topic(purchaseQueue.topic, purchaseQueue.partitions),
    // Only Connect writes the CDC topics; the maintainers read them and write dead letters only.
    kafkaUser(connectUser, [
      acl("group", `${cluster}-connect`, ["Read", "Describe"]),
      ...[`${cluster}-connect-configs`, `${cluster}-connect-offsets`, `${cluster}-connect-status`].map(
        (name) => acl("topic", name, ["Read", "Write", "Describe", "DescribeConfigs", "Create"]),
      ),
      ...[topics.sale, topics.activity, topics.heartbeat].map((name) =>
        acl("topic", name, ["Write", "Describe", "DescribeConfigs", "Create"]),
      ),
      acl("topic", history, ["Read", "Write", "Describe", "DescribeConfigs", "Create"]),
      // Debezium's own heartbeats (every heartbeat.interval.ms), in a topic Connect creates.
      acl("topic", `__debezium-heartbeat.${config["topic.prefix"]}`, [
        "Write",
        "Describe",
        "DescribeConfigs",
        "Create",
      ]),
      acl("group", `${config["topic.prefix"]}-schemahistory`, ["Read", "Describe"]),
      acl("cluster", "", ["Describe", "DescribeConfigs"]),
    ]),
    kafkaUser(maintainerUser, [
      ...[topics.sale, topics.activity, topics.heartbeat].map((name) =>
        acl("topic", name, ["Read", "Describe"]),
      ),
      acl("topic", topics.deadLetters, ["Write", "Describe"]),
      acl("group", consumerGroup, ["Read", "Describe"]),
      // The lost-commit check's one-off groups, deleted after use.
      acl("group", lostCommitGroupPrefix, ["Read", "Describe", "Delete"], "prefix"),
    ]),
    // The purchase queue (ADR 0030): its writer reads and commits, its admission writes and reads the backlog.
    kafkaUser(purchaseApiUser, [
      acl("topic", purchaseQueue.topic, ["Read", "Write", "Describe"]),
      acl("group", purchaseQueue.writerGroup, ["Read", "Describe"]),
    ]),
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
