// Strimzi's CRDs for the kinds flashgate deploys, generated once per machine from Strimzi's own API
// classes (Maven Central) into the jars folder, like the stack's other jars; read offline after that.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

const root = new URL("..", import.meta.url).pathname;
const pom = join(root, "deploy/kubernetes/schemas/pom.xml");
const version = /<strimzi.api.version>([^<]+)</.exec(readFileSync(pom, "utf8"))?.[1];
const kinds = {
  Kafka: "kafka.Kafka",
  KafkaNodePool: "nodepool.KafkaNodePool",
  KafkaConnect: "connect.KafkaConnect",
  KafkaConnector: "connector.KafkaConnector",
  KafkaTopic: "topic.KafkaTopic",
  KafkaUser: "user.KafkaUser",
} as const;
export type StrimziKind = keyof typeof kinds;

/** Strimzi's generator is built for Java 21 or later; the default Java here is 17. */
function java(): string {
  const home = [
    process.env.STRIMZI_JAVA_HOME,
    ...readdirSync("/usr/lib/jvm").map((d) => join("/usr/lib/jvm", d)),
  ]
    .filter((dir): dir is string => Boolean(dir))
    .find(
      (dir) =>
        /[-.](2[1-9]|[3-9]\d)([-.]|$)/.test(dir.split("/").pop() ?? "") && existsSync(join(dir, "bin/java")),
    );
  if (!home) throw new Error("Strimzi's CRD generator needs Java 21 or later (set STRIMZI_JAVA_HOME)");
  return join(home, "bin/java");
}

/** The openAPIV3Schema of each Strimzi kind's v1 version. */
export function strimziSchemas(): Record<StrimziKind, object> {
  const dir = join(process.env.FLASHGATE_JARS ?? join(root, ".flashgate/jars"), `strimzi-crds-${version}`);
  const file = (kind: string) => join(dir, `${kind}.yaml`);
  if (!Object.keys(kinds).every((kind) => existsSync(file(kind)))) {
    mkdirSync(dir, { recursive: true });
    const classpath = join(dir, "classpath.txt");
    execFileSync("mvn", ["-q", "-f", pom, "dependency:build-classpath", `-Dmdep.outputFile=${classpath}`], {
      stdio: "inherit",
    });
    execFileSync(java(), [
      "-cp",
      readFileSync(classpath, "utf8").trim(),
      "io.strimzi.crdgenerator.CrdGenerator",
      "--yaml",
      ...Object.entries(kinds).map(([kind, model]) => `io.strimzi.api.kafka.model.${model}=${file(kind)}`),
    ]);
  }
  return Object.fromEntries(
    Object.keys(kinds).map((kind) => {
      const crd = parse(readFileSync(file(kind), "utf8"));
      const served = crd.spec.versions.find((v: { name: string }) => v.name === "v1");
      return [kind, served.schema.openAPIV3Schema];
    }),
  ) as Record<StrimziKind, object>;
}

/**
 * A schema that refuses what it does not name: every object that lists its properties gets
 * `additionalProperties: false` (the CRDs leave it open, and an API server drops an unknown field
 * silently), except where the CRD keeps unknown fields on purpose (a connector's `config`) and the
 * branches of a `oneOf`/`anyOf`/`allOf`, which name only what tells them apart.
 */
export function strictly(schema: object, branch = false): object {
  if (Array.isArray(schema)) return schema.map((item) => strictly(item, branch));
  if (typeof schema !== "object" || schema === null) return schema;
  const node = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      typeof value === "object" && value !== null
        ? strictly(value, ["oneOf", "anyOf", "allOf"].includes(key))
        : value,
    ]),
  ) as Record<string, unknown>;
  const open =
    branch || node["x-kubernetes-preserve-unknown-fields"] === true || "additionalProperties" in node;
  return node.properties && !open ? { ...node, additionalProperties: false } : node;
}
