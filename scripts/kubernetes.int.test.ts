import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ConnectClient,
  connectorsDir,
  type KubernetesApi,
  readConnectorFile,
  strimziConnectorControl,
  workerGarbageCollector,
  workerSettings,
} from "@flashgate/connect";
import { purchaseQueue } from "@flashgate/kafka";
import { dashboardRedisUser } from "@flashgate/stack";
import { mergePatch } from "@flashgate/testkit/strimzi-operator";
import { Ajv } from "ajv";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import {
  connectFile,
  connectUser,
  connectYaml,
  debeziumPluginSha512,
  maintainerUser,
  purchaseApiUser,
} from "./kubernetes.ts";
import { type KubernetesObject, policyViolations } from "./kubernetes-policy.ts";
import { strictKubernetes } from "./kubernetes-strict.ts";
import { type StrimziKind, strictly, strimziSchemas } from "./strimzi-schemas.ts";

interface Container {
  name: string;
  image?: string;
  command?: string[];
  startupProbe?: { httpGet: { path: string } };
  readinessProbe: { httpGet: { path: string } };
  livenessProbe: { httpGet: { path: string } };
  resources: Record<string, unknown>;
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string }[];
}

interface PodSpec {
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
  containers: Container[];
  initContainers?: Container[];
  volumes?: { name: string; emptyDir?: { medium?: string } }[];
}

const podOf = (workload: Resource) => (workload.spec as { template: { spec: PodSpec } }).template.spec;

interface Resource {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec?: Record<string, unknown>;
}

const render = (overlay: string): Resource[] =>
  parseAllDocuments(
    execFileSync(
      "kubectl",
      ["kustomize", new URL(`../deploy/kubernetes/${overlay}`, import.meta.url).pathname],
      {
        encoding: "utf8",
      },
    ),
  ).map((document) => document.toJS() as Resource);

/** Each Kubernetes kind against its schema in kubernetes-models (the API's own OpenAPI), offline. */
async function validateCore(resource: Resource) {
  const [group, version] = resource.apiVersion.includes("/")
    ? resource.apiVersion.split("/")
    : ["", resource.apiVersion];
  const module = group === "" ? `v1/${resource.kind}` : `${group}/${version}/${resource.kind}`;
  const models = (await import(`kubernetes-models/${module}`)) as Record<
    string,
    new (
      value: unknown,
    ) => { validate(): void }
  >;
  new models[resource.kind](resource).validate();
}

// Strimzi's generator, then kubectl: processes of their own, and Maven fetching Strimzi's jars on a
// machine's first run (a fresh CI machine took longer than vitest's 10 s for a hook).
describe("deploy/kubernetes", { timeout: 300_000 }, () => {
  let strimzi: Record<StrimziKind, object>;
  let rendered: Resource[];
  beforeAll(() => {
    strimzi = strimziSchemas();
    rendered = render("overlays/small");
  }, 600_000);

  it("holds the local stack's connector, written from connectors/flashgate-mysql.json (npm run kubernetes:connect)", () => {
    expect(readFileSync(connectFile, "utf8")).toBe(connectYaml());
    const connector = rendered.find((r) => r.kind === "KafkaConnector");
    const {
      "connector.class": connectorClass,
      "tasks.max": tasksMax,
      ...config
    } = readConnectorFile(connectorsDir, "flashgate-mysql.json").config;
    expect(connector?.spec).toMatchObject({ class: connectorClass, tasksMax: Number(tasksMax), config });
  });

  it("renders, base and small overlay, and every object is valid against the Kubernetes and Strimzi schemas, strictly: no unknown field", async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    for (const overlay of ["base", "overlays/small"]) {
      const objects = render(overlay);
      const core = objects.filter((r) => r.apiVersion !== "kafka.strimzi.io/v1");
      for (const resource of objects.filter((r) => r.apiVersion === "kafka.strimzi.io/v1")) {
        const validate = ajv.compile(strictly(strimzi[resource.kind as StrimziKind]));
        expect(
          validate(resource) ? [] : validate.errors,
          `${overlay}: ${resource.kind} ${resource.metadata.name}`,
        ).toEqual([]);
      }
      for (const resource of core)
        await expect(
          validateCore(resource),
          `${overlay}: ${resource.kind} ${resource.metadata.name}`,
        ).resolves.toBeUndefined();
      // The API's own models: every field defined for its kind.
      expect(strictKubernetes(core)).toEqual(core.map(() => "ok"));
    }
    // The validators refuse what is wrong: a mistyped field in each kind of schema.
    const deployment = rendered.find((r) => r.kind === "Deployment") as Resource;
    await expect(
      validateCore({ ...deployment, spec: { ...deployment.spec, replicas: "two" } }),
    ).rejects.toThrow();
    const connect = rendered.find((r) => r.kind === "KafkaConnect") as Resource;
    expect(
      ajv.compile(strimzi.KafkaConnect)({ ...connect, spec: { ...connect.spec, replicas: "two" } }),
    ).toBe(false);
    // And a misspelled field, which the schemas let through and an API server would drop silently.
    const pod = podOf(deployment);
    const misspelledPod = structuredClone(deployment);
    podOf(misspelledPod).securityContext = {
      ...pod.securityContext,
      runAsNonroot: true,
    } as PodSpec["securityContext"];
    await expect(validateCore(misspelledPod)).resolves.toBeUndefined();
    expect(strictKubernetes([misspelledPod])).toEqual([
      "The field `runAsNonroot` in the JSON string is not defined in the `V1PodSecurityContext` properties.",
    ]);
    const connector = rendered.find((r) => r.kind === "KafkaConnector") as Resource;
    const misspelled = { ...connector, spec: { ...connector.spec, autoRestart: { enable: true } } };
    expect(ajv.compile(strimzi.KafkaConnector)(misspelled)).toBe(true);
    const strict = ajv.compile(strictly(strimzi.KafkaConnector));
    expect(strict(misspelled)).toBe(false);
    expect(strict.errors?.map((e) => `${e.instancePath} ${e.params.additionalProperty}`)).toEqual([
      "/spec/autoRestart enable",
    ]);
  });

  it("passes a platform team's rules — restricted pods, pinned images, every Service behind a NetworkPolicy, Kafka authenticated, MySQL over TLS, replicas spread — and refuses each way of breaking them", () => {
    const objects = rendered as KubernetesObject[];
    expect(policyViolations(objects)).toEqual([]);
    const namespace = rendered.find((r) => r.kind === "Namespace") as Resource & {
      metadata: { labels?: Record<string, string> };
    };
    expect(namespace.metadata.labels?.["pod-security.kubernetes.io/enforce"]).toBe("restricted");
    const changed = (kind: string, name: string, change: (object: Resource) => void) =>
      policyViolations(
        objects.map((object) => {
          if (object.kind !== kind || object.metadata.name !== name) return object;
          const copy = structuredClone(object) as Resource;
          change(copy);
          return copy as KubernetesObject;
        }),
      );
    expect(
      changed("Deployment", "purchase-api", (d) => {
        podOf(d).securityContext = {
          runAsNonRoot: false,
          runAsUser: 0,
          seccompProfile: { type: "RuntimeDefault" },
        };
      }),
    ).toEqual(["Deployment purchase-api: runs as root (needs runAsNonRoot and a numeric runAsUser above 0)"]);
    expect(
      changed("StatefulSet", "redis", (r) => {
        podOf(r).containers[0].image = "redis:latest";
      }),
    ).toEqual(["StatefulSet redis redis: floating image redis:latest"]);
    expect(
      policyViolations(
        objects.filter((o) => !(o.kind === "NetworkPolicy" && o.metadata.name === "cache-maintainer")),
      ),
    ).toEqual(["Service cache-maintainer: port 8082 has no NetworkPolicy admitting to it"]);
    expect(
      changed("Kafka", "flashgate", (k) => {
        (k.spec as { kafka: { listeners: object[] } }).kafka.listeners.push({
          name: "plain",
          port: 9092,
          type: "internal",
          tls: false,
        });
      }),
    ).toEqual(["Kafka flashgate: listener plain is not authenticated over TLS"]);
    expect(
      changed("KafkaConnector", "flashgate-sale", (c) => {
        (c.spec as { config: Record<string, string> }).config["database.ssl.mode"] = "preferred";
      }),
    ).toEqual(["KafkaConnector flashgate-sale: database.ssl.mode preferred may fall back to plaintext"]);
  });

  it("heals the connector through its KafkaConnector with the least RBAC: the maintainer's service account may read and patch that one resource and patch the one ConfigMap of offsets", () => {
    const maintainer = rendered.find(
      (r) => r.kind === "Deployment" && r.metadata.name === "cache-maintainer",
    ) as Resource;
    const pod = podOf(maintainer) as PodSpec & {
      serviceAccountName?: string;
      containers: (Container & { env: { name: string; value?: string }[] })[];
    };
    expect(pod.serviceAccountName).toBe("cache-maintainer");
    expect(pod.containers[0].env).toContainEqual({ name: "CONNECTOR_CONTROL", value: "strimzi" });
    const role = rendered.find((r) => r.kind === "Role") as Resource & { rules: object[] };
    expect(role.rules).toEqual([
      {
        apiGroups: ["kafka.strimzi.io"],
        resources: ["kafkaconnectors"],
        resourceNames: ["flashgate-sale"],
        verbs: ["get", "patch"],
      },
      {
        apiGroups: [""],
        resources: ["configmaps"],
        resourceNames: ["flashgate-sale-offsets"],
        verbs: ["patch"],
      },
    ]);
    expect(rendered.find((r) => r.kind === "RoleBinding")).toMatchObject({
      roleRef: { kind: "Role", name: "cache-maintainer" },
      subjects: [{ kind: "ServiceAccount", name: "cache-maintainer" }],
    });
    expect(
      rendered.find((r) => r.kind === "ConfigMap" && r.metadata.name === "flashgate-sale-offsets"),
    ).toBeDefined();
    // The other pods hold no token to the API at all.
    for (const name of ["purchase-api", "dashboard"]) {
      const deployment = rendered.find(
        (r) => r.kind === "Deployment" && r.metadata.name === name,
      ) as Resource;
      expect(
        (podOf(deployment) as { automountServiceAccountToken?: boolean }).automountServiceAccountToken,
        name,
      ).toBe(false);
    }
  });

  it("publishes the purchase API's port to buyers and its metrics port to the dashboard and Prometheus only", () => {
    const policy = rendered.find(
      (r) => r.kind === "NetworkPolicy" && r.metadata.name === "purchase-api",
    ) as Resource & { spec: { ingress: { from?: unknown[]; ports: { port: number }[] }[] } };
    const rules = policy.spec.ingress.map((rule) => ({
      ports: rule.ports.map((p) => p.port),
      from: rule.from,
    }));
    expect(rules).toEqual([
      { ports: [8080], from: undefined },
      {
        ports: [8081],
        from: [
          { podSelector: { matchLabels: { "app.kubernetes.io/name": "dashboard" } } },
          { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } },
        ],
      },
    ]);
    const api = podOf(
      rendered.find((r) => r.kind === "Deployment" && r.metadata.name === "purchase-api") as Resource,
    ).containers[0] as unknown as {
      env: { name: string; value?: string }[];
      ports: { name: string; containerPort: number }[];
    };
    expect(api.env).toContainEqual({ name: "METRICS_PORT", value: "8081" });
    expect(api.ports).toContainEqual({ name: "metrics", containerPort: 8081 });
    const config = rendered.find(
      (r) => r.kind === "ConfigMap" && r.metadata.name === "flashgate-config",
    ) as Resource & {
      data: Record<string, string>;
    };
    expect(config.data.PURCHASE_API_METRICS_URL).toBe("http://purchase-api:8081");
  });

  it("writes through the operator only what Strimzi's CRD, made strict, accepts: every patch the connector's control sends", async () => {
    const connector = rendered.find((r) => r.kind === "KafkaConnector") as Resource;
    const patches: unknown[] = [];
    const kubernetes: KubernetesApi = {
      // The operator done at once: no annotation left on the resource.
      get: async <T>() => connector as T,
      mergePatch: async <T>(path: string, patch: unknown) => {
        if (path.includes("/kafkaconnectors/")) patches.push(patch);
        return {} as T;
      },
    };
    const rest = {
      stopped: async () => {},
      alteredSourceOffset: async () => ({
        offsets: [{ partition: { server: "flashgate" }, offset: { pos: 4 } }],
      }),
    } as unknown as ConnectClient;
    const control = strimziConnectorControl({ kubernetes, namespace: "flashgate", rest });
    await control.restart("flashgate-sale", true);
    await control.resetOffsets("flashgate-sale");
    await control.alterSourceOffset("flashgate-sale", (offset) => offset);
    expect(patches.length).toBe(7);
    const strict = new Ajv({ strict: false, allErrors: true }).compile(strictly(strimzi.KafkaConnector));
    let patched: unknown = connector;
    for (const patch of patches) {
      patched = mergePatch(patched, patch);
      expect(strict(patched) ? [] : strict.errors, JSON.stringify(patch)).toEqual([]);
    }
  });

  it("lets only Connect write the CDC topics: the maintainer's KafkaUser reads them, its group and its one-off groups, and writes dead letters; the purchase API's its queue and nothing else", () => {
    type Acl = { resource: { type: string; name?: string; patternType?: string }; operations: string[] };
    const aclsOf = (user: string) =>
      rendered.find((r) => r.kind === "KafkaUser" && r.metadata.name === user)?.spec as {
        authentication: { type: string };
        authorization: { acls: Acl[] };
      };
    const may = (user: string, operation: string, topic: string) =>
      aclsOf(user).authorization.acls.some(
        (acl) =>
          acl.resource.type === "topic" && acl.resource.name === topic && acl.operations.includes(operation),
      );
    for (const topic of ["flashgate.sale", "flashgate.activity", "flashgate.heartbeat"]) {
      expect(may(connectUser, "Write", topic), topic).toBe(true);
      expect(may(maintainerUser, "Write", topic), topic).toBe(false);
      expect(may(maintainerUser, "Read", topic), topic).toBe(true);
    }
    expect(may(maintainerUser, "Write", "flashgate.cache-maintainer.dlq")).toBe(true);
    expect(
      aclsOf(maintainerUser)
        .authorization.acls.filter((a) => a.resource.type === "group")
        .map((a) => a.resource),
    ).toEqual([
      { type: "group", name: "flashgate-cache-maintainer", patternType: "literal" },
      { type: "group", name: "flashgate-lost-commits-", patternType: "prefix" },
    ]);
    // The purchase queue (ADR 0030): the API's writers read it and commit in their group, its admission
    // writes it and reads the backlog; no Create (the KafkaTopic is the operator's), no other user on it.
    expect(aclsOf(purchaseApiUser).authorization.acls).toEqual([
      {
        resource: { type: "topic", name: purchaseQueue.topic, patternType: "literal" },
        operations: ["Read", "Write", "Describe"],
      },
      {
        resource: { type: "group", name: purchaseQueue.writerGroup, patternType: "literal" },
        operations: ["Read", "Describe"],
      },
    ]);
    for (const user of [connectUser, maintainerUser])
      expect(
        aclsOf(user).authorization.acls.some((acl) => acl.resource.name === purchaseQueue.topic),
        user,
      ).toBe(false);
    for (const user of [connectUser, maintainerUser, purchaseApiUser])
      expect(aclsOf(user).authentication.type).toBe("scram-sha-512");
  });

  it("gives each app that dials Kafka its own KafkaUser over TLS: its name, its password from the user operator's Secret, the cluster CA mounted, and a place among the listener's peers", () => {
    type Env = { name: string; value?: string; valueFrom?: Record<string, { name: string; key: string }> };
    const kafka = rendered.find((r) => r.kind === "Kafka") as Resource;
    const [listener] = (
      kafka.spec as {
        kafka: {
          listeners: {
            port: number;
            networkPolicyPeers: { podSelector: { matchLabels: Record<string, string> } }[];
          }[];
        };
      }
    ).kafka.listeners;
    const config = rendered.find(
      (r) => r.kind === "ConfigMap" && r.metadata.name === "flashgate-config",
    ) as Resource & { data: Record<string, string> };
    expect(config.data.KAFKA_BROKERS).toBe(`flashgate-kafka-bootstrap:${listener.port}`);
    const clients = rendered.filter(
      (r) =>
        r.kind === "Deployment" &&
        (podOf(r).containers[0] as unknown as { env: Env[] }).env.some((e) => e.name === "KAFKA_BROKERS"),
    );
    expect(clients.map((d) => d.metadata.name).sort()).toEqual(["cache-maintainer", "purchase-api"]);
    const users = new Set<string>();
    for (const deployment of clients) {
      const name = deployment.metadata.name;
      const { template } = deployment.spec as {
        template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
      };
      const container = template.spec.containers[0] as Container & { env: Env[] };
      const env = Object.fromEntries(container.env.map((e) => [e.name, e]));
      expect(env.KAFKA_BROKERS.valueFrom, name).toEqual({
        configMapKeyRef: { name: "flashgate-config", key: "KAFKA_BROKERS" },
      });
      expect(env.KAFKA_SASL_MECHANISM.value, name).toBe("scram-sha-512");
      const user = env.KAFKA_USERNAME.value as string;
      users.add(user);
      expect(
        rendered.find((r) => r.kind === "KafkaUser" && r.metadata.name === user),
        `${name}: KafkaUser ${user}`,
      ).toBeDefined();
      expect(env.KAFKA_PASSWORD.valueFrom, name).toEqual({ secretKeyRef: { name: user, key: "password" } });
      const mount = container.volumeMounts?.find((m) =>
        env.KAFKA_CA_FILE.value?.startsWith(`${m.mountPath}/`),
      );
      const volume = (
        template.spec.volumes as { name: string; secret?: { secretName: string; items: object[] } }[]
      ).find((v) => v.name === mount?.name);
      expect(volume?.secret, name).toEqual({
        secretName: "flashgate-cluster-ca-cert",
        items: [{ key: "ca.crt", path: env.KAFKA_CA_FILE.value?.slice(`${mount?.mountPath}/`.length) }],
      });
      expect(
        listener.networkPolicyPeers.some(({ podSelector }) =>
          Object.entries(podSelector.matchLabels).every(
            ([key, value]) => template.metadata.labels[key] === value,
          ),
        ),
        `${name} among the listener's peers`,
      ).toBe(true);
    }
    expect(users.size).toBe(clients.length);
  });

  it("pins the Debezium plugin by the SHA-512 of the artifact Maven Central serves for connectors/pom.xml's version", () => {
    const version =
      /<debezium.version>([^<]+)</.exec(
        readFileSync(new URL("../connectors/pom.xml", import.meta.url), "utf8"),
      )?.[1] ?? "";
    execFileSync(
      "mvn",
      [
        "-q",
        "dependency:get",
        `-Dartifact=io.debezium:debezium-connector-mysql:${version}:tar.gz:plugin`,
        "-Dtransitive=false",
      ],
      { stdio: "inherit" },
    );
    const file = join(
      process.env.MAVEN_REPOSITORY ?? join(homedir(), ".m2/repository"),
      `io/debezium/debezium-connector-mysql/${version}/debezium-connector-mysql-${version}-plugin.tar.gz`,
    );
    expect(createHash("sha512").update(readFileSync(file)).digest("hex")).toBe(debeziumPluginSha512[version]);
  });

  it("runs each app with probes on its health routes (the API ready through a store's blip) and resources, the API autoscaled, a disruption budget each, and no secret in the manifests", () => {
    const deployments = rendered.filter((r) => r.kind === "Deployment");
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual([
      "cache-maintainer",
      "dashboard",
      "purchase-api",
    ]);
    for (const deployment of deployments) {
      const [container] = podOf(deployment).containers;
      // The API's pods stay in their Service through a shared store's blip (they answer 503 by themselves):
      // its dependencies gate only its start.
      if (deployment.metadata.name === "purchase-api") {
        expect(container.startupProbe?.httpGet.path).toBe("/readyz");
        expect(container.readinessProbe.httpGet.path).toBe("/healthz");
      } else expect(container.readinessProbe.httpGet.path, deployment.metadata.name).toBe("/readyz");
      expect(container.livenessProbe.httpGet.path, deployment.metadata.name).toBe("/healthz");
      expect(Object.keys(container.resources).sort()).toEqual(["limits", "requests"]);
    }
    const autoscaled = rendered.filter((r) => r.kind === "HorizontalPodAutoscaler");
    expect(
      autoscaled.map((h) => (h.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name),
    ).toEqual(["purchase-api"]);
    const budgets = rendered.filter((r) => r.kind === "PodDisruptionBudget").map((p) => p.metadata.name);
    expect(budgets.sort()).toEqual(["cache-maintainer", "dashboard", "purchase-api", "redis"]);
    expect(rendered.filter((r) => r.kind === "Secret")).toEqual([]);
  });

  it("runs Redis as its own user, its password in memory only, each node announced by name and its peers found by name again after a restart of every pod", () => {
    const redis = rendered.find((r) => r.kind === "StatefulSet") as Resource;
    const pod = podOf(redis);
    expect(pod.securityContext).toMatchObject({ runAsUser: 999, runAsNonRoot: true });
    const start = (
      rendered.find((r) => r.kind === "ConfigMap" && r.metadata.name === "redis") as Resource & {
        data: Record<string, string>;
      }
    ).data["redis-start.sh"];
    const runtimeDir = /REDIS_RUN_DIR:-([^}]+)\}/.exec(start)?.[1] ?? "";
    const mount = pod.containers[0].volumeMounts?.find((m) => m.mountPath === runtimeDir);
    expect(pod.volumes?.find((v) => v.name === mount?.name)?.emptyDir).toMatchObject({ medium: "Memory" });
    // The script itself, on a nodes.conf whose peer's address changed: looked up by its name again
    // (localhost here), a name that no longer resolves left as it was, redis-server started on the rest.
    const dir = mkdtempSync(join(tmpdir(), "redis-start-"));
    for (const sub of ["data", "run", "bin"]) mkdirSync(join(dir, sub));
    writeFileSync(join(dir, "bin/redis-server"), '#!/bin/sh\necho "redis-server $*"\n');
    chmodSync(join(dir, "bin/redis-server"), 0o755);
    writeFileSync(
      join(dir, "data/nodes.conf"),
      [
        "e7d1 10.1.0.7:6379@16379,localhost master - 0 0 1 connected 0-5460",
        "a1b2 10.1.0.8:6379@16379,gone.invalid myself,slave e7d1 0 0 1 connected",
        "vars currentEpoch 6 lastVoteEpoch 0",
        "",
      ].join("\n"),
    );
    const started = execFileSync("sh", ["-c", start], {
      encoding: "utf8",
      env: {
        PATH: `${join(dir, "bin")}:${process.env.PATH}`,
        REDIS_DATA_DIR: join(dir, "data"),
        REDIS_RUN_DIR: join(dir, "run"),
        REDIS_PASSWORD: "secret-of-the-test",
        DASHBOARD_REDIS_PASSWORD: "dashboard-secret-of-the-test",
        POD_NAME: "redis-4",
      },
    });
    expect(started.trim()).toBe(
      `redis-server /etc/redis/redis.conf --include ${join(dir, "run")}/runtime.conf`,
    );
    expect(readFileSync(join(dir, "data/nodes.conf"), "utf8").split("\n").slice(0, 3)).toEqual([
      "e7d1 127.0.0.1:6379@16379,localhost master - 0 0 1 connected 0-5460",
      "a1b2 10.1.0.8:6379@16379,gone.invalid myself,slave e7d1 0 0 1 connected",
      "vars currentEpoch 6 lastVoteEpoch 0",
    ]);
    const runtime = readFileSync(join(dir, "run/runtime.conf"), "utf8");
    expect(runtime).toContain("cluster-announce-hostname redis-4.redis\n");
    // The dashboard's read-only user, with the local stack's rules.
    expect(runtime).toContain(
      `user ${dashboardRedisUser.name} on >dashboard-secret-of-the-test ${dashboardRedisUser.rules}\n`,
    );
  });

  it("gives the CDC topics and the purchase queue the partitions and replication of the cluster topology", () => {
    const topics = rendered.filter((r) => r.kind === "KafkaTopic").map((t) => t.spec);
    expect(topics).toContainEqual(
      expect.objectContaining({ topicName: "flashgate.sale", partitions: 6, replicas: 3 }),
    );
    expect(topics).toContainEqual(
      expect.objectContaining({ topicName: purchaseQueue.topic, partitions: 12, replicas: 3 }),
    );
    for (const topic of topics)
      expect(topic).toMatchObject({ replicas: 3, config: { "min.insync.replicas": 2 } });
  });
});

// Compose's Connect image writes its worker's properties in shell, beside the Kubernetes resources above.
describe("docker/kafka/run.sh", () => {
  it("gives compose's Connect worker the settings of @flashgate/connect's workerSettings", () => {
    const runSh = readFileSync(new URL("../docker/kafka/run.sh", import.meta.url), "utf8");
    for (const [name, value] of Object.entries(workerSettings))
      expect(runSh).toContain(`echo "${name}=${value}"`);
    expect(runSh).toContain(`connect_gc=(-XX:+${workerGarbageCollector})`);
  });
});
