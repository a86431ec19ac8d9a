// A Kafka broker as Strimzi's `Kafka` of deploy/kubernetes runs it: one listener, TLS (a CA of the test's
// own) with SCRAM-SHA-512, and the StandardAuthorizer allowing each user only its ACLs. From the stack's
// jars, on ports and a directory of its own.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isPortOpen } from "@flashgate/stack";
import { freePort, testContext } from "@flashgate/testkit";
import {
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  Kafka,
  logLevel,
  ResourcePatternTypes,
} from "kafkajs";

/** An ACL as a Strimzi KafkaUser writes it. */
export interface StrimziAcl {
  resource: { type: "topic" | "group" | "cluster"; name?: string; patternType?: "literal" | "prefix" };
  operations: string[];
}

export interface SecuredKafka {
  brokers: string;
  caFile: string;
  /** A client authenticated as `user` (its password unless another is given). */
  client(user: string, password?: string): Kafka;
  password(user: string): string;
  stop(): Promise<void>;
}

const operation = (name: string) =>
  AclOperationTypes[name.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase() as keyof typeof AclOperationTypes];

export async function startSecuredKafka(
  users: string[],
  acls: Record<string, StrimziAcl[]>,
): Promise<SecuredKafka> {
  const dir = mkdtempSync(join(tmpdir(), "flashgate-secured-kafka-"));
  const passwords = Object.fromEntries(
    ["admin", ...users].map((user) => [user, randomBytes(18).toString("base64url")]),
  );
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  openssl(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    "2",
    "-subj",
    "/CN=flashgate-test-ca",
  );
  openssl(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "broker.key",
    "-out",
    "broker.csr",
    "-subj",
    "/CN=127.0.0.1",
  );
  writeFileSync(join(dir, "san.ext"), "subjectAltName=IP:127.0.0.1\n");
  openssl(
    "x509",
    "-req",
    "-in",
    "broker.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "broker.crt",
    "-days",
    "2",
    "-extfile",
    "san.ext",
  );
  writeFileSync(
    join(dir, "broker.pem"),
    readFileSync(join(dir, "broker.key"), "utf8") + readFileSync(join(dir, "broker.crt"), "utf8"),
  );
  const [port, controller] = [await freePort(), await freePort()];
  const properties = join(dir, "server.properties");
  writeFileSync(
    properties,
    Object.entries({
      "process.roles": "broker,controller",
      "node.id": 1,
      "controller.quorum.voters": `1@127.0.0.1:${controller}`,
      listeners: `SASL_SSL://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controller}`,
      "advertised.listeners": `SASL_SSL://127.0.0.1:${port}`,
      "controller.listener.names": "CONTROLLER",
      "inter.broker.listener.name": "SASL_SSL",
      "listener.security.protocol.map": "SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT",
      "sasl.enabled.mechanisms": "SCRAM-SHA-512",
      "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-512",
      "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="${passwords.admin}";`,
      "ssl.keystore.type": "PEM",
      "ssl.keystore.location": join(dir, "broker.pem"),
      "ssl.truststore.type": "PEM",
      "ssl.truststore.location": join(dir, "ca.crt"),
      "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
      // The broker itself: as admin on its listener, anonymous on its controller's (loopback only).
      "super.users": "User:admin;User:ANONYMOUS",
      "allow.everyone.if.no.acl.found": "false",
      "log.dirs": join(dir, "logs"),
      "auto.create.topics.enable": "false",
      "offsets.topic.replication.factor": 1,
      "transaction.state.log.replication.factor": 1,
      "transaction.state.log.min.isr": 1,
      "share.coordinator.state.topic.replication.factor": 1,
      "share.coordinator.state.topic.min.isr": 1,
      "group.initial.rebalance.delay.ms": 0,
    })
      .map(([key, value]) => `${key}=${value}\n`)
      .join(""),
  );
  const java = ["-Xms256m", "-Xmx256m", "-cp", `${testContext().paths.kafkaJars}/*`];
  execFileSync(
    "java",
    [
      ...java,
      "kafka.tools.StorageTool",
      "format",
      `--cluster-id=${Buffer.from(randomUUID().replaceAll("-", ""), "hex").toString("base64url")}`,
      `--config=${properties}`,
      ...Object.entries(passwords).map(
        ([user, password]) => `--add-scram=SCRAM-SHA-512=[name=${user},password=${password}]`,
      ),
    ],
    { stdio: "pipe" },
  );
  mkdirSync(join(dir, "logs"), { recursive: true });
  const broker: ChildProcess = spawn("java", [...java, "kafka.Kafka", properties], { stdio: "ignore" });
  const deadline = Date.now() + 90_000;
  while (!(await isPortOpen(port))) {
    if (broker.exitCode !== null) throw new Error(`the secured broker exited (${broker.exitCode})`);
    if (Date.now() > deadline) throw new Error("the secured broker did not listen within 90 s");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const brokers = `127.0.0.1:${port}`;
  const caFile = join(dir, "ca.crt");
  const client = (user: string, password = passwords[user]) =>
    new Kafka({
      clientId: `secured-${user}`,
      brokers: [brokers],
      ssl: { ca: [readFileSync(caFile, "utf8")] },
      sasl: { mechanism: "scram-sha-512", username: user, password },
      logLevel: logLevel.NOTHING,
      retry: { retries: 3, initialRetryTime: 200 },
    });
  const admin = client("admin").admin();
  await admin.connect();
  try {
    await admin.createAcls({
      acl: Object.entries(acls).flatMap(([user, list]) =>
        list.flatMap(({ resource, operations }) =>
          operations.map((name) => ({
            resourceType:
              resource.type === "topic"
                ? AclResourceTypes.TOPIC
                : resource.type === "group"
                  ? AclResourceTypes.GROUP
                  : AclResourceTypes.CLUSTER,
            resourceName: resource.type === "cluster" ? "kafka-cluster" : (resource.name as string),
            resourcePatternType:
              resource.patternType === "prefix"
                ? ResourcePatternTypes.PREFIXED
                : ResourcePatternTypes.LITERAL,
            principal: `User:${user}`,
            host: "*",
            operation: operation(name),
            permissionType: AclPermissionTypes.ALLOW,
          })),
        ),
      ),
    });
  } finally {
    await admin.disconnect();
  }
  return {
    brokers,
    caFile,
    client,
    password: (user) => passwords[user],
    async stop() {
      broker.kill("SIGKILL");
      await new Promise((resolve) =>
        broker.exitCode === null ? broker.once("exit", resolve) : resolve(undefined),
      );
    },
  };
}

/** What Strimzi's operator writes into a worker's configuration by itself (its KafkaConnectConfiguration defaults). */
const strimziDefaults = {
  "key.converter": "org.apache.kafka.connect.json.JsonConverter",
  "value.converter": "org.apache.kafka.connect.json.JsonConverter",
};

/** The parts of a rendered KafkaConnect that make its workers' configuration. */
export interface KafkaConnectResource {
  spec: {
    groupId: string;
    configStorageTopic: string;
    offsetStorageTopic: string;
    statusStorageTopic: string;
    authentication: { type: "scram-sha-512"; username: string };
    config: Record<string, string | number>;
    template: { connectContainer: { env: { name: string }[] } };
  };
}

/**
 * A Kafka Connect worker configured as Strimzi configures one from `resource` (the rendered KafkaConnect): its
 * defaults, then the resource's `config`, its group and storage topics, and its authentication over TLS for the
 * worker's own clients and its connectors' (the prefixes Strimzi sets). Only where this machine differs: the
 * broker's address, one replica of the internal topics (one broker), the REST listener and the plugin path.
 * `env` gives the connectors' ${env:…}; every variable the resource hands its workers must be in it.
 */
export async function startSecuredConnect(
  kafka: SecuredKafka,
  resource: KafkaConnectResource,
  env: Record<string, string>,
): Promise<{ url: string; errors(): string; stop(): Promise<void> }> {
  const missing = resource.spec.template.connectContainer.env
    .map((e) => e.name)
    .filter((name) => !(name in env));
  if (missing.length)
    throw new Error(`the KafkaConnect gives its workers ${missing.join(", ")}, which the test does not`);
  const ctx = testContext();
  const { spec } = resource;
  const user = spec.authentication.username;
  const dir = mkdtempSync(join(tmpdir(), "flashgate-secured-connect-"));
  const port = await freePort();
  const properties = join(dir, "worker.properties");
  const security = (prefix: string) => ({
    [`${prefix}security.protocol`]: "SASL_SSL",
    [`${prefix}sasl.mechanism`]: "SCRAM-SHA-512",
    [`${prefix}sasl.jaas.config`]: `org.apache.kafka.common.security.scram.ScramLoginModule required username="${user}" password="${kafka.password(user)}";`,
    [`${prefix}ssl.truststore.type`]: "PEM",
    [`${prefix}ssl.truststore.location`]: kafka.caFile,
  });
  writeFileSync(
    properties,
    Object.entries({
      ...strimziDefaults,
      ...spec.config,
      "bootstrap.servers": kafka.brokers,
      ...security(""),
      ...security("producer."),
      ...security("consumer."),
      ...security("admin."),
      "group.id": spec.groupId,
      "config.storage.topic": spec.configStorageTopic,
      "offset.storage.topic": spec.offsetStorageTopic,
      "status.storage.topic": spec.statusStorageTopic,
      "config.storage.replication.factor": 1,
      "offset.storage.replication.factor": 1,
      "status.storage.replication.factor": 1,
      listeners: `http://127.0.0.1:${port}`,
      "rest.advertised.host.name": "127.0.0.1",
      "plugin.path": ctx.paths.pluginPath,
    })
      .map(([key, value]) => `${key}=${value}\n`)
      .join(""),
  );
  const worker = spawn(
    "java",
    [
      "-Xms512m",
      "-Xmx512m",
      "-cp",
      `${ctx.paths.kafkaJars}/*`,
      "org.apache.kafka.connect.cli.ConnectDistributed",
      properties,
    ],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } },
  );
  // Its last words, for a failing test to show: log4j's default prints warnings and errors to the console.
  let errors = "";
  const keep = (chunk: Buffer) => {
    errors = (errors + chunk).slice(-8000);
  };
  worker.stdout?.on("data", keep);
  worker.stderr?.on("data", keep);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (worker.exitCode !== null)
      throw new Error(`the secured Connect worker exited (${worker.exitCode}): ${errors}`);
    if (Date.now() > deadline)
      throw new Error(`the secured Connect worker's REST API did not answer within 120 s: ${errors}`);
    if (
      await fetch(`${url}/connectors`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return {
    url,
    errors: () => errors,
    async stop() {
      worker.kill("SIGKILL");
      await new Promise((resolve) =>
        worker.exitCode === null ? worker.once("exit", resolve) : resolve(undefined),
      );
    },
  };
}
