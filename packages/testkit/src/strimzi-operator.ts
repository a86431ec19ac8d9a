// A stand-in for the Kubernetes API server and Strimzi's operator, for the connector's healing through
// its KafkaConnector: no API server runs here. The server keeps what the API server would (a bearer
// token, the caller's Role checked verb by verb and name by name, merge patches only, `status` a
// subresource, generation and resourceVersion); the operator does what Strimzi's KafkaConnector
// reconcile does, in its order, against the real Kafka Connect: spec.state (stop, pause, resume), the
// `strimzi.io/connector-offsets` annotation (list, alter from a ConfigMap, reset; alter and reset only on
// a STOPPED connector), `strimzi.io/restart` and `strimzi.io/restart-task`, each annotation removed once
// done, a failure left as a Warning condition with the annotation kept for the next reconcile, and the
// connector's status copied into the resource. It leaves out what flashgate does not use: creating the
// connector, reconciling its config, autoRestart.
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ConnectClient,
  offsetsConfigMapKey,
  type StrimziConnector,
  strimziAnnotations,
} from "@flashgate/connect";

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** Either kind as a patch leaves it, before it is checked. */
interface PatchedObject {
  metadata: { resourceVersion?: string; generation?: number; annotations?: Record<string, unknown> };
  spec?: { state?: unknown };
  data?: Record<string, unknown>;
}

export interface ConfigMapObject {
  apiVersion: "v1";
  kind: "ConfigMap";
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  data?: Record<string, string>;
}

/** Strimzi's rule for `strimzi.io/restart`: `true`, or includeTasks and/or onlyFailed, never both kinds. */
export function restartAnnotation(value: string | undefined) {
  if (value === undefined || !value.trim() || value.includes("false")) return undefined;
  const parts = value.split(",").map((part) => part.trim().toLowerCase());
  const flag = parts.some((part) => part === "true");
  const args = parts.some((part) => part === "includetasks" || part === "onlyfailed");
  const valid = parts.every((part) => ["true", "includetasks", "onlyfailed"].includes(part)) && flag !== args;
  return {
    valid,
    includeTasks: value.includes("includeTasks"),
    onlyFailed: value.includes("onlyFailed"),
  };
}

/** RFC 7386: null removes a member, an object merges into an object, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    typeof target === "object" && target !== null && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/** Whether a Role's rules let the caller do `verb` to the named object. */
export function allowed(
  rules: PolicyRule[],
  request: { verb: string; apiGroup: string; resource: string; name: string },
) {
  const has = (list: string[] | undefined, value: string) => list?.includes("*") || list?.includes(value);
  return rules.some(
    (rule) =>
      has(rule.apiGroups, request.apiGroup) &&
      has(rule.resources, request.resource) &&
      has(rule.verbs, request.verb) &&
      (!rule.resourceNames?.length || rule.resourceNames.includes(request.name)),
  );
}

const verbs: Record<string, string> = {
  GET: "get",
  PATCH: "patch",
  PUT: "update",
  POST: "create",
  DELETE: "delete",
};

const routes = [
  {
    pattern: /^\/apis\/kafka\.strimzi\.io\/v1\/namespaces\/([^/]+)\/kafkaconnectors\/([^/]+)$/,
    apiGroup: "kafka.strimzi.io",
    resource: "kafkaconnectors",
  },
  { pattern: /^\/api\/v1\/namespaces\/([^/]+)\/configmaps\/([^/]+)$/, apiGroup: "", resource: "configmaps" },
];

export interface StrimziOperatorFake {
  url: string;
  /** The caller's service-account token, in a file (as a pod has it). */
  tokenFile: string;
  namespace: string;
  connector(): StrimziConnector;
  configMap(name: string): ConfigMapObject | undefined;
  /** What the operator did to Connect, in order ("stop", "resume", "reset offsets", "restart includeTasks onlyFailed", …). */
  actions: string[];
  /** Every request the API server refused: "METHOD path status". */
  refused: string[];
  close(): Promise<void>;
}

export async function startStrimziOperator(options: {
  /** The real Kafka Connect, which the operator drives. */
  connect: ConnectClient;
  namespace: string;
  connector: StrimziConnector;
  configMaps: ConfigMapObject[];
  /** The caller's Role (the one deploy/kubernetes binds to the maintainer's service account). */
  rules: PolicyRule[];
  /** The operator's periodic reconcile besides the one on each change (Strimzi's default: 2 minutes). */
  resyncMs?: number;
}): Promise<StrimziOperatorFake> {
  const { connect, namespace, rules } = options;
  const token = randomBytes(24).toString("base64url");
  const tokenFile = join(mkdtempSync(join(tmpdir(), "flashgate-sa-")), "token");
  writeFileSync(tokenFile, token);
  let version = 1;
  let connector: StrimziConnector = structuredClone({
    ...options.connector,
    metadata: { ...options.connector.metadata, namespace, generation: 1, resourceVersion: String(version) },
  });
  const configMaps = new Map<string, ConfigMapObject>(
    options.configMaps.map((map) => [
      map.metadata.name,
      { ...map, metadata: { ...map.metadata, namespace, resourceVersion: String(version) } },
    ]),
  );
  const actions: string[] = [];
  const refused: string[] = [];
  const name = connector.metadata.name;

  function status(response: ServerResponse, code: number, reason: string, message: string) {
    response.writeHead(code, { "content-type": "application/json" });
    response.end(
      JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", message, reason, code }),
    );
  }

  async function body(request: IncomingMessage): Promise<string> {
    let text = "";
    for await (const chunk of request) text += chunk;
    return text;
  }

  const lookup = (resource: string, objectName: string) =>
    resource === "configmaps" ? configMaps.get(objectName) : objectName === name ? connector : undefined;

  // ── the API server ──
  const server = createServer(async (request, response) => {
    const method = request.method ?? "GET";
    const path = new URL(request.url ?? "/", "http://fake").pathname;
    const refuse = (code: number, reason: string, message: string) => {
      refused.push(`${method} ${path} ${code}`);
      status(response, code, reason, message);
    };
    if (request.headers.authorization !== `Bearer ${token}`)
      return refuse(401, "Unauthorized", "Unauthorized");
    const route = routes.find((r) => r.pattern.test(path));
    if (!route) return refuse(404, "NotFound", "the server could not find the requested resource");
    const [, objectNamespace, objectName] = route.pattern.exec(path) as RegExpExecArray;
    const verb = verbs[method] ?? method.toLowerCase();
    const kind = route.apiGroup ? `${route.resource}.${route.apiGroup}` : route.resource;
    if (!allowed(rules, { verb, apiGroup: route.apiGroup, resource: route.resource, name: objectName }))
      return refuse(
        403,
        "Forbidden",
        `${kind} "${objectName}" is forbidden: User "system:serviceaccount:${namespace}:cache-maintainer" cannot ${verb} resource "${route.resource}" in API group "${route.apiGroup}" in the namespace "${objectNamespace}"`,
      );
    const current = objectNamespace === namespace ? lookup(route.resource, objectName) : undefined;
    if (!current) return refuse(404, "NotFound", `${kind} "${objectName}" not found`);
    if (method === "GET") {
      response.writeHead(200, { "content-type": "application/json" });
      return response.end(JSON.stringify(current));
    }
    if (method !== "PATCH") return refuse(405, "MethodNotAllowed", `${method} is not supported here`);
    if (request.headers["content-type"] !== "application/merge-patch+json")
      return refuse(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
      );
    let patch: Record<string, unknown>;
    try {
      patch = JSON.parse(await body(request));
    } catch (error) {
      return refuse(400, "BadRequest", `error decoding patch: ${(error as Error).message}`);
    }
    const metadata = patch.metadata as { resourceVersion?: string } | undefined;
    if (metadata?.resourceVersion && metadata.resourceVersion !== current.metadata.resourceVersion)
      return refuse(
        409,
        "Conflict",
        `Operation cannot be fulfilled on ${kind} "${objectName}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    // `status` is a subresource: a patch of the object leaves it as it is.
    const { status: _ignored, ...changes } = patch;
    const next = mergePatch(current, changes) as PatchedObject;
    const invalid = invalidity(route.resource, next);
    if (invalid) return refuse(422, "Invalid", `${kind} "${objectName}" is invalid: ${invalid}`);
    version += 1;
    next.metadata.resourceVersion = String(version);
    if (route.resource === "configmaps") configMaps.set(objectName, next as unknown as ConfigMapObject);
    else {
      if (JSON.stringify(next.spec) !== JSON.stringify(connector.spec))
        next.metadata.generation = (connector.metadata.generation ?? 1) + 1;
      connector = { ...(next as unknown as StrimziConnector), status: connector.status };
      reconcileSoon();
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(route.resource === "configmaps" ? next : connector));
  });

  // ── the operator ──
  let running: Promise<void> | undefined;
  let again = false;
  function reconcileSoon() {
    if (running) {
      again = true;
      return;
    }
    running = reconcile()
      .catch((error) => setCondition([warning("Reconcile", (error as Error).message)]))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          reconcileSoon();
        }
      });
  }
  const resync = setInterval(reconcileSoon, options.resyncMs ?? 120_000);

  const warning = (reason: string, message: string) => ({
    type: "Warning",
    status: "True",
    reason,
    message,
    lastTransitionTime: new Date().toISOString(),
  });

  function removeAnnotation(annotation: string) {
    const annotations = { ...connector.metadata.annotations };
    delete annotations[annotation];
    version += 1;
    connector = {
      ...connector,
      metadata: { ...connector.metadata, annotations, resourceVersion: String(version) },
    };
  }

  function setCondition(
    warnings: ReturnType<typeof warning>[],
    connectorStatus?: Awaited<ReturnType<ConnectClient["statusIfExists"]>>,
  ) {
    const failed =
      connectorStatus?.connector.state === "FAILED" ||
      connectorStatus?.tasks.some((t) => t.state === "FAILED");
    connector = {
      ...connector,
      status: {
        observedGeneration: connector.metadata.generation,
        conditions: [
          {
            type: connectorStatus && !failed ? "Ready" : "NotReady",
            status: "True",
            lastTransitionTime: new Date().toISOString(),
          },
          ...warnings,
        ],
        ...(connectorStatus ? { connectorStatus } : {}),
      },
    };
  }

  async function verifyStopped() {
    const state = (await connect.status(name)).connector.state;
    if (state !== "STOPPED") throw new Error("Connector is not in STOPPED state");
  }

  async function reconcile(): Promise<void> {
    const warnings: ReturnType<typeof warning>[] = [];
    const before = await connect.statusIfExists(name);
    if (!before) return setCondition([warning("Reconcile", `connector ${name} does not exist in Connect`)]);
    // spec.state, as Strimzi's updateState: transient states (UNASSIGNED, RESTARTING) are left alone.
    const target = (connector.spec.state ?? "running").toUpperCase();
    const transitions: Record<string, Record<string, "pause" | "stop" | "resume">> = {
      RUNNING: { PAUSED: "pause", STOPPED: "stop" },
      PAUSED: { RUNNING: "resume", STOPPED: "stop" },
      STOPPED: { RUNNING: "resume", PAUSED: "pause" },
      FAILED: { STOPPED: "stop" },
    };
    const transition = transitions[before.connector.state]?.[target];
    if (before.connector.state === "FAILED" && target === "PAUSED")
      return setCondition(
        [warning("Reconcile", `Connector ${name} cannot be paused since it is in failed state.`)],
        before,
      );
    if (transition) {
      await connect[transition](name);
      actions.push(transition);
    }
    // strimzi.io/connector-offsets
    const offsets = connector.metadata.annotations?.[strimziAnnotations.offsets];
    try {
      if (offsets === "list") {
        const map = connector.spec.listOffsets?.toConfigMap.name;
        if (!map) throw new Error("missing property listOffsets in KafkaConnector CR");
        const listed = JSON.stringify(await connect.offsets(name));
        const existing = configMaps.get(map);
        version += 1;
        configMaps.set(map, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: map, namespace, resourceVersion: String(version) },
          data: { ...existing?.data, [offsetsConfigMapKey]: listed },
        });
        actions.push("list offsets");
        removeAnnotation(strimziAnnotations.offsets);
      } else if (offsets === "alter") {
        const map = connector.spec.alterOffsets?.fromConfigMap.name;
        if (!map) throw new Error("missing property alterOffsets in KafkaConnector CR");
        await verifyStopped();
        const stored = configMaps.get(map)?.data?.[offsetsConfigMapKey];
        if (stored === undefined)
          throw new Error(`ConfigMap ${namespace}/${map} or its ${offsetsConfigMapKey} is missing`);
        await connect.writeOffsets(name, JSON.parse(stored));
        actions.push("alter offsets");
        removeAnnotation(strimziAnnotations.offsets);
      } else if (offsets === "reset") {
        await verifyStopped();
        await connect.deleteOffsets(name);
        actions.push("reset offsets");
        removeAnnotation(strimziAnnotations.offsets);
      } else if (offsets !== undefined && offsets !== "none")
        throw new Error(`unknown value ${offsets} of ${strimziAnnotations.offsets}`);
    } catch (error) {
      warnings.push(
        warning("ManageOffsets", `Encountered error managing connector offsets. ${(error as Error).message}`),
      );
    }
    // strimzi.io/restart, then strimzi.io/restart-task
    const restart = restartAnnotation(connector.metadata.annotations?.[strimziAnnotations.restart]);
    if (restart && !restart.valid) warnings.push(warning("RestartConnector", "Invalid annotation format"));
    else if (restart) {
      try {
        await connect.restart(name, restart.onlyFailed, restart.includeTasks);
        actions.push(
          `restart${restart.includeTasks ? " includeTasks" : ""}${restart.onlyFailed ? " onlyFailed" : ""}`,
        );
        removeAnnotation(strimziAnnotations.restart);
      } catch (error) {
        warnings.push(
          warning("RestartConnector", `Failed to restart connector ${name}. ${(error as Error).message}`),
        );
      }
    }
    setCondition(warnings, await connect.statusIfExists(name));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  reconcileSoon();
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tokenFile,
    namespace,
    connector: () => structuredClone(connector),
    configMap: (map) => structuredClone(configMaps.get(map)),
    actions,
    refused,
    async close() {
      clearInterval(resync);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await running;
    },
  };
}

/** What the API server refuses of these two kinds (the fields flashgate writes): a message, or undefined. */
function invalidity(resource: string, object: PatchedObject): string | undefined {
  for (const [key, value] of Object.entries(object.metadata.annotations ?? {}))
    if (typeof value !== "string") return `metadata.annotations[${key}]: Invalid value: must be a string`;
  if (resource === "configmaps") {
    for (const [key, value] of Object.entries(object.data ?? {}))
      if (typeof value !== "string") return `data[${key}]: Invalid value: must be a string`;
    return undefined;
  }
  const state = object.spec?.state;
  if (state !== undefined && !["running", "paused", "stopped"].includes(String(state)))
    return `spec.state: Unsupported value: "${state}": supported values: "running", "paused", "stopped"`;
  return undefined;
}
