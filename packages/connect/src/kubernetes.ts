import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

/** An answer of the Kubernetes API that is not a success: its HTTP status and the Status object's message. */
export class KubernetesError extends Error {
  override name = "KubernetesError";
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** The few calls the connector's healing makes: read an object, and change it by a JSON merge patch. */
export interface KubernetesApi {
  /** The object at `path`, or undefined if there is none. */
  get<T = Record<string, unknown>>(path: string): Promise<T | undefined>;
  mergePatch<T = Record<string, unknown>>(path: string, patch: unknown): Promise<T>;
}

/** Where a pod finds its service account: the token (rotated by the kubelet), the API server's CA, its namespace. */
export const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

export interface KubernetesAccess {
  url: string;
  tokenFile: string;
  /** The CA that signed the API server's certificate (https only). */
  caFile?: string;
}

/** The API server as a pod sees it (its Service's address in the environment, its service account's files). */
export function inClusterAccess(env: Record<string, string | undefined>): KubernetesAccess {
  const host = env.KUBERNETES_SERVICE_HOST;
  if (!host) throw new Error("not in a Kubernetes pod: KUBERNETES_SERVICE_HOST is not set");
  const port = env.KUBERNETES_SERVICE_PORT ?? "443";
  return {
    url: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
    tokenFile: `${serviceAccountDir}/token`,
    caFile: `${serviceAccountDir}/ca.crt`,
  };
}

/** node:https rather than fetch: the API server's certificate is checked against the service account's CA, which fetch takes no option for. */
export function kubernetesApi(access: KubernetesAccess, timeoutMs = 10_000): KubernetesApi {
  const base = new URL(access.url);
  const ca = access.caFile ? readFileSync(access.caFile) : undefined;
  const send = base.protocol === "https:" ? httpsRequest : httpRequest;

  function call(method: string, path: string, body?: unknown, contentType?: string) {
    // Read at every call: a projected token is replaced while the pod runs.
    const token = readFileSync(access.tokenFile, "utf8").trim();
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise<{ status: number; body: Record<string, unknown> | undefined }>((resolve, reject) => {
      const request = send(
        new URL(path, base),
        {
          method,
          ca,
          timeout: timeoutMs,
          headers: {
            accept: "application/json",
            authorization: `Bearer ${token}`,
            ...(payload === undefined
              ? {}
              : { "content-type": contentType, "content-length": Buffer.byteLength(payload) }),
          },
        },
        (response) => {
          let text = "";
          response.setEncoding("utf8");
          response.on("data", (chunk) => {
            text += chunk;
          });
          response.on("end", () => {
            let parsed: Record<string, unknown> | undefined;
            try {
              parsed = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
            } catch {
              parsed = { message: text };
            }
            resolve({ status: response.statusCode ?? 0, body: parsed });
          });
        },
      );
      request.on("timeout", () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      request.on("error", (error) =>
        reject(
          new KubernetesError(0, `the Kubernetes API at ${base.origin} is unreachable (${error.message})`),
        ),
      );
      request.end(payload);
    });
  }

  const refused = (
    method: string,
    path: string,
    result: { status: number; body?: Record<string, unknown> },
  ) =>
    new KubernetesError(
      result.status,
      `${method} ${path}: ${result.status} ${String(result.body?.message ?? result.body?.reason ?? "")}`.trim(),
    );

  return {
    async get<T>(path: string) {
      const result = await call("GET", path);
      if (result.status === 404) return undefined;
      if (result.status >= 300) throw refused("GET", path, result);
      return result.body as T;
    },
    async mergePatch<T>(path: string, patch: unknown) {
      const result = await call("PATCH", path, patch, "application/merge-patch+json");
      if (result.status >= 300) throw refused("PATCH", path, result);
      return (result.body ?? {}) as T;
    },
  };
}
