// What a platform team checks in rendered manifests before it lets them in, beyond their schemas: pods
// at the restricted Pod Security level, images pinned, every Service reachable only as a NetworkPolicy
// admits, Kafka's listeners authenticated, the database reached over TLS, replicas spread over nodes.

export interface KubernetesObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
}

interface Container {
  name: string;
  image?: string;
  securityContext?: Record<string, unknown>;
}
interface PodSpec {
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type?: string } };
  containers: Container[];
  initContainers?: Container[];
  topologySpreadConstraints?: { topologyKey: string }[];
}
interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}
interface PolicyPort {
  port?: number | string;
}

const workloadKinds = ["Deployment", "StatefulSet", "Job"];
const podOf = (o: KubernetesObject) =>
  (o.spec as { template: { spec: PodSpec; metadata?: { labels?: Record<string, string> } } }).template;

/** Whether a selector selects pods with these labels. An empty selector selects every pod. */
function selects(selector: LabelSelector, labels: Record<string, string>): boolean {
  return (
    Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value) &&
    (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) =>
      operator === "In"
        ? values.includes(labels[key])
        : operator === "NotIn"
          ? !values.includes(labels[key])
          : operator === "Exists"
            ? key in labels
            : !(key in labels),
    )
  );
}

/** An image is pinned by a digest or an exact tag: never none, never `latest`. */
const floatingImage = (image: string) =>
  !image.includes("@sha256:") && (!/:[^/]+$/.test(image) || image.endsWith(":latest"));

function podViolations(where: string, pod: PodSpec): string[] {
  const found: string[] = [];
  const context = pod.securityContext;
  if (context?.runAsNonRoot !== true || !(Number(context.runAsUser) > 0))
    found.push(`${where}: runs as root (needs runAsNonRoot and a numeric runAsUser above 0)`);
  if (context?.seccompProfile?.type !== "RuntimeDefault")
    found.push(`${where}: no RuntimeDefault seccomp profile`);
  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) found.push(`${where}: shares a host namespace`);
  for (const container of [...pod.containers, ...(pod.initContainers ?? [])]) {
    const c = container.securityContext ?? {};
    const drops = (c.capabilities as { drop?: string[] } | undefined)?.drop ?? [];
    if (
      c.allowPrivilegeEscalation !== false ||
      c.privileged ||
      c.readOnlyRootFilesystem !== true ||
      !drops.includes("ALL")
    )
      found.push(
        `${where} ${container.name}: not restricted (allowPrivilegeEscalation false, readOnlyRootFilesystem, drop ALL)`,
      );
    if (container.image && floatingImage(container.image))
      found.push(`${where} ${container.name}: floating image ${container.image}`);
  }
  return found;
}

/** Every rule broken, one line each; none for manifests a platform team would take. */
export function policyViolations(objects: KubernetesObject[]): string[] {
  const found: string[] = [];
  const policies = objects.filter((o) => o.kind === "NetworkPolicy");
  const workloads = objects.filter((o) => workloadKinds.includes(o.kind));
  for (const workload of workloads) {
    const where = `${workload.kind} ${workload.metadata.name}`;
    const { spec } = podOf(workload);
    found.push(...podViolations(where, spec));
    const replicas = Number((workload.spec as { replicas?: number }).replicas ?? 1);
    if (
      workload.kind !== "Job" &&
      replicas > 1 &&
      !spec.topologySpreadConstraints?.some((t) => t.topologyKey === "kubernetes.io/hostname")
    )
      found.push(`${where}: ${replicas} replicas not spread over nodes`);
  }
  for (const service of objects.filter((o) => o.kind === "Service")) {
    const { selector = {}, ports = [] } = service.spec as {
      selector?: Record<string, string>;
      ports?: { port: number; name?: string }[];
    };
    for (const { port, name } of ports) {
      const admitted = policies.some((policy) => {
        const { podSelector, ingress = [] } = policy.spec as {
          podSelector: LabelSelector;
          ingress?: { ports?: PolicyPort[] }[];
        };
        return (
          Object.keys(podSelector.matchLabels ?? {}).length + (podSelector.matchExpressions ?? []).length >
            0 &&
          selects(podSelector, selector) &&
          ingress.some((rule) => !rule.ports || rule.ports.some((p) => p.port === port || p.port === name))
        );
      });
      if (!admitted)
        found.push(`Service ${service.metadata.name}: port ${port} has no NetworkPolicy admitting to it`);
    }
  }
  if (!policies.some((p) => Object.keys((p.spec as { podSelector: LabelSelector }).podSelector).length === 0))
    found.push("no default NetworkPolicy denying what no other admits");
  for (const kafka of objects.filter((o) => o.kind === "Kafka")) {
    const spec = kafka.spec as {
      kafka: {
        version?: string;
        listeners: { name: string; authentication?: unknown; tls?: boolean }[];
        authorization?: unknown;
      };
    };
    for (const listener of spec.kafka.listeners)
      if (!listener.authentication || !listener.tls)
        found.push(`Kafka ${kafka.metadata.name}: listener ${listener.name} is not authenticated over TLS`);
    if (!spec.kafka.authorization)
      found.push(`Kafka ${kafka.metadata.name}: no authorization (any user may do anything)`);
    if (!spec.kafka.version)
      found.push(`Kafka ${kafka.metadata.name}: no version (an operator upgrade changes Kafka)`);
  }
  for (const connect of objects.filter((o) => o.kind === "KafkaConnect")) {
    const spec = connect.spec as {
      version?: string;
      authentication?: unknown;
      build?: { output: { image: string }; plugins: { artifacts: { type: string; sha512sum?: string }[] }[] };
    };
    if (!spec.version) found.push(`KafkaConnect ${connect.metadata.name}: no version`);
    if (!spec.authentication) found.push(`KafkaConnect ${connect.metadata.name}: not authenticated to Kafka`);
    if (spec.build && floatingImage(spec.build.output.image))
      found.push(`KafkaConnect ${connect.metadata.name}: floating image ${spec.build.output.image}`);
    for (const artifact of spec.build?.plugins.flatMap((p) => p.artifacts) ?? [])
      if (!artifact.sha512sum)
        found.push(`KafkaConnect ${connect.metadata.name}: a ${artifact.type} artifact without a checksum`);
  }
  for (const connector of objects.filter((o) => o.kind === "KafkaConnector")) {
    const mode = (connector.spec as { config: Record<string, string> }).config["database.ssl.mode"];
    if (!["required", "verify_ca", "verify_identity"].includes(mode))
      found.push(
        `KafkaConnector ${connector.metadata.name}: database.ssl.mode ${mode} may fall back to plaintext`,
      );
  }
  return found;
}
