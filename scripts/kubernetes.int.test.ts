import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { connectorsDir, readConnectorFile, workerSettings } from "@flashgate/connect";
import { Ajv } from "ajv";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { connectFile, connectYaml } from "./kubernetes.ts";
import { type StrimziKind, strictly, strimziSchemas } from "./strimzi-schemas.ts";

interface Container {
  name: string;
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
  const module =
    group === "" ? `v1/${resource.kind}` : `${group.replace(".k8s.io", "")}/${version}/${resource.kind}`;
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

  it("renders, base and small overlay, and every object is valid against the Kubernetes and Strimzi schemas (Strimzi's strictly: no unknown field)", async () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    for (const overlay of ["base", "overlays/small"]) {
      for (const resource of render(overlay)) {
        const where = `${overlay}: ${resource.kind} ${resource.metadata.name}`;
        if (resource.apiVersion === "kafka.strimzi.io/v1") {
          const validate = ajv.compile(strictly(strimzi[resource.kind as StrimziKind]));
          expect(validate(resource) ? [] : validate.errors, where).toEqual([]);
        } else {
          await expect(validateCore(resource), where).resolves.toBeUndefined();
        }
      }
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
    // And a misspelled Strimzi field, which the CRD's own schema lets through and an API server would drop.
    const connector = rendered.find((r) => r.kind === "KafkaConnector") as Resource;
    const misspelled = { ...connector, spec: { ...connector.spec, autoRestart: { enable: true } } };
    expect(ajv.compile(strimzi.KafkaConnector)(misspelled)).toBe(true);
    const strict = ajv.compile(strictly(strimzi.KafkaConnector));
    expect(strict(misspelled)).toBe(false);
    expect(strict.errors?.map((e) => `${e.instancePath} ${e.params.additionalProperty}`)).toEqual([
      "/spec/autoRestart enable",
    ]);
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

  it("runs every pod it defines at the restricted Pod Security level, Redis's password in memory only", () => {
    const namespace = rendered.find((r) => r.kind === "Namespace") as Resource & {
      metadata: { labels?: Record<string, string> };
    };
    expect(namespace.metadata.labels?.["pod-security.kubernetes.io/enforce"]).toBe("restricted");
    const workloads = rendered.filter((r) => ["Deployment", "StatefulSet", "Job"].includes(r.kind));
    expect(workloads.map((w) => `${w.kind} ${w.metadata.name}`).sort()).toEqual([
      "Deployment cache-maintainer",
      "Deployment dashboard",
      "Deployment purchase-api",
      "Job redis-cluster-create",
      "StatefulSet redis",
    ]);
    for (const workload of workloads) {
      const where = `${workload.kind} ${workload.metadata.name}`;
      const pod = podOf(workload);
      expect(pod.securityContext, where).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: "RuntimeDefault" },
      });
      expect(pod.securityContext?.runAsUser, where).toBeGreaterThan(0);
      for (const container of [...pod.containers, ...(pod.initContainers ?? [])])
        expect(container.securityContext, `${where} ${container.name}`).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
        });
    }
    const redisPod = podOf(workloads.find((w) => w.kind === "StatefulSet") as Resource);
    const [redis] = redisPod.containers;
    const authFile = /--include (\S+)/.exec(redis.command?.join(" ") ?? "")?.[1] ?? "";
    const mount = redis.volumeMounts?.find((m) => authFile.startsWith(`${m.mountPath}/`));
    expect(redisPod.volumes?.find((v) => v.name === mount?.name)?.emptyDir).toMatchObject({
      medium: "Memory",
    });
  });

  it("gives the CDC topics the partitions and replication of the cluster topology", () => {
    const topics = rendered.filter((r) => r.kind === "KafkaTopic").map((t) => t.spec);
    expect(topics).toContainEqual(
      expect.objectContaining({ topicName: "flashgate.sale", partitions: 6, replicas: 3 }),
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
  });
});
