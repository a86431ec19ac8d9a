import { setTimeout as sleep } from "node:timers/promises";
import type { KubernetesApi } from "./kubernetes.ts";
import { type ConnectClient, ConnectError } from "./rest.ts";

/** What the supervisor does to the connector: read its state and offset, restart it, reset or rewrite its offset. */
export type ConnectorControl = Pick<
  ConnectClient,
  "statusIfExists" | "sourceOffset" | "restart" | "resetOffsets" | "alterSourceOffset"
>;

/** Strimzi's annotations on a KafkaConnector: each asks its operator for one action, and it removes the annotation once done. */
export const strimziAnnotations = {
  restart: "strimzi.io/restart",
  offsets: "strimzi.io/connector-offsets",
} as const;

/** The ConfigMap (created with the connector's resources) from which Strimzi takes the offsets to write, and its key. */
export const offsetsConfigMap = (connector: string) => `${connector}-offsets`;
export const offsetsConfigMapKey = "offsets.json";

const actedWithinMs = 120_000;

/**
 * The connector's control when Strimzi owns it (`strimzi.io/use-connector-resources`): every change goes
 * through its KafkaConnector, so the operator carries it out and never reverts it: `spec.state` stops and
 * resumes it, `strimzi.io/restart` restarts it, `strimzi.io/connector-offsets` resets or alters its offsets
 * (altered from a ConfigMap). Reads go to Connect's REST API, which only reports (a NetworkPolicy admits
 * the maintainers to it), so a FAILED task is seen at once rather than at the operator's next reconcile.
 */
export function strimziConnectorControl(deps: {
  kubernetes: KubernetesApi;
  namespace: string;
  rest: ConnectClient;
}): ConnectorControl {
  const { kubernetes, namespace, rest } = deps;
  const resourcePath = (name: string) =>
    `/apis/kafka.strimzi.io/v1/namespaces/${namespace}/kafkaconnectors/${encodeURIComponent(name)}`;
  const patch = (name: string, body: unknown) => kubernetes.mergePatch(resourcePath(name), body);
  const annotate = (name: string, annotation: string, value: string) =>
    patch(name, { metadata: { annotations: { [annotation]: value } } });

  /** Waits until the operator has taken the annotation off (done); its warning says why it has not. */
  async function acted(name: string, annotation: string): Promise<void> {
    const deadline = Date.now() + actedWithinMs;
    for (;;) {
      const resource = await kubernetes.get<StrimziConnector>(resourcePath(name));
      if (!resource) throw new ConnectError("unknown_connector", `no KafkaConnector named ${name}`);
      if (resource.metadata.annotations?.[annotation] === undefined) return;
      if (Date.now() > deadline) {
        const warnings = (resource.status?.conditions ?? [])
          .filter((condition) => condition.type === "Warning")
          .map((condition) => `${condition.reason}: ${condition.message}`);
        throw new ConnectError(
          "refused",
          `the operator has not acted on ${annotation} of ${name} within ${actedWithinMs} ms${warnings.length ? ` (${warnings.join("; ")})` : ""}`,
        );
      }
      await sleep(500);
    }
  }

  /** Stops the connector through its resource, runs `action` once it is stopped, and always asks for it running again. */
  async function whileStopped(name: string, action: () => Promise<void>): Promise<void> {
    await patch(name, { spec: { state: "stopped" } });
    try {
      await rest.stopped(name);
      await action();
    } finally {
      // Whatever failed, the connector is never left stopped: nobody else would start it again.
      await patch(name, { spec: { state: "running" } });
    }
  }

  return {
    statusIfExists: (name) => rest.statusIfExists(name),
    sourceOffset: (name) => rest.sourceOffset(name),
    // Strimzi's values: the arguments named, or "true" for the connector alone.
    restart: async (name, onlyFailed, includeTasks = true) =>
      void (await annotate(
        name,
        strimziAnnotations.restart,
        [includeTasks && "includeTasks", onlyFailed && "onlyFailed"].filter(Boolean).join(",") || "true",
      )),
    resetOffsets: (name) =>
      whileStopped(name, async () => {
        await annotate(name, strimziAnnotations.offsets, "reset");
        await acted(name, strimziAnnotations.offsets);
      }),
    alterSourceOffset: (name, change) =>
      whileStopped(name, async () => {
        const altered = await rest.alteredSourceOffset(name, change);
        await kubernetes.mergePatch(`/api/v1/namespaces/${namespace}/configmaps/${offsetsConfigMap(name)}`, {
          data: { [offsetsConfigMapKey]: JSON.stringify(altered) },
        });
        await patch(name, {
          metadata: { annotations: { [strimziAnnotations.offsets]: "alter" } },
          spec: { alterOffsets: { fromConfigMap: { name: offsetsConfigMap(name) } } },
        });
        await acted(name, strimziAnnotations.offsets);
      }),
  };
}

/** The parts of a KafkaConnector that the control and its operator read. */
export interface StrimziConnector {
  apiVersion: string;
  kind: "KafkaConnector";
  metadata: {
    name: string;
    namespace: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    generation?: number;
    resourceVersion?: string;
  };
  spec: {
    class: string;
    tasksMax?: number;
    state?: "running" | "paused" | "stopped";
    config?: Record<string, unknown>;
    listOffsets?: { toConfigMap: { name: string } };
    alterOffsets?: { fromConfigMap: { name: string } };
  };
  status?: {
    observedGeneration?: number;
    conditions?: {
      type: string;
      status: string;
      reason?: string;
      message?: string;
      lastTransitionTime?: string;
    }[];
    connectorStatus?: unknown;
  };
}
