import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

/** The connector configs the repository ships (connectors/NAME.json), one per database engine. */
export const connectorsDir = fileURLToPath(new URL("../../../connectors", import.meta.url));

/** Distinct failures, so scripts can tell them apart by exit code. */
export class ConnectError extends Error {
  override name = "ConnectError";
  readonly kind: "unreachable" | "unknown_connector" | "invalid_file" | "invalid_config" | "refused";
  constructor(kind: ConnectError["kind"], message: string) {
    super(message);
    this.kind = kind;
  }
}

export interface ConnectorFile {
  name: string;
  config: Record<string, string>;
}

export interface TaskStatus {
  id: number;
  state: string;
  worker_id: string;
  trace?: string;
}

export interface ConnectorStatus {
  name: string;
  connector: { state: string; worker_id: string; trace?: string };
  tasks: TaskStatus[];
}

/** A connector's offsets as Connect's REST API lists and takes them. */
interface SourceOffsets {
  offsets: { partition: Record<string, unknown>; offset: Record<string, unknown> }[];
}

export interface ValidationIssue {
  name: string;
  errors: string[];
}

export function readConnectorFile(connectorsDir: string, name: string): ConnectorFile {
  const file = name.endsWith(".json") ? name : `${name}.json`;
  let parsed: ConnectorFile;
  try {
    parsed = JSON.parse(readFileSync(join(connectorsDir, file), "utf8")) as ConnectorFile;
  } catch (error) {
    throw new ConnectError("invalid_file", `${file}: ${(error as Error).message}`);
  }
  if (typeof parsed.name !== "string" || typeof parsed.config !== "object" || parsed.config === null) {
    throw new ConnectError("invalid_file", `${file}: needs "name" and "config"`);
  }
  return parsed;
}

/** The ${env:NAME} placeholders of a config that the given environment does not set. */
export function missingEnvPlaceholders(
  config: Record<string, string>,
  env: Record<string, string | undefined>,
): string[] {
  const missing = new Set<string>();
  for (const value of Object.values(config)) {
    for (const match of String(value).matchAll(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g))
      if (!env[match[1]]) missing.add(match[1]);
  }
  return [...missing].sort();
}

export const isRunning = (status: ConnectorStatus | undefined) =>
  status?.connector.state === "RUNNING" &&
  status.tasks.length > 0 &&
  status.tasks.every((task) => task.state === "RUNNING");

/**
 * A small client for the Kafka Connect REST API. A URL with a user and password
 * (`http://flashgate:…@connect:8083`) sends them as HTTP basic authentication and is named without them.
 */
export function connectClient(url: string) {
  const parsed = new URL(url);
  const authorization = parsed.username
    ? `Basic ${Buffer.from(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`).toString("base64")}`
    : undefined;
  parsed.username = "";
  parsed.password = "";
  const baseUrl = parsed.href.replace(/\/$/, "");
  async function call(
    method: string,
    path: string,
    body?: unknown,
    timeoutMs = 15_000,
  ): Promise<{ status: number; body: unknown }> {
    let response: Response;
    try {
      response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(authorization ? { authorization } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new ConnectError(
        "unreachable",
        `Kafka Connect at ${baseUrl} is unreachable (${(error as Error).cause ?? (error as Error).message})`,
      );
    }
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // keep text
    }
    return { status: response.status, body: parsed };
  }
  const named = (name: string) => `/connectors/${encodeURIComponent(name)}`;
  const expectOk = (result: { status: number; body: unknown }, name: string) => {
    if (result.status === 404) throw new ConnectError("unknown_connector", `no connector named ${name}`);
    if (result.status >= 300)
      throw new ConnectError("refused", `Connect answered ${result.status}: ${JSON.stringify(result.body)}`);
    return result.body;
  };

  return {
    baseUrl,
    async list(): Promise<string[]> {
      return expectOk(await call("GET", "/connectors"), "") as string[];
    },
    async status(name: string): Promise<ConnectorStatus> {
      return expectOk(await call("GET", `${named(name)}/status`), name) as ConnectorStatus;
    },
    async statusIfExists(name: string): Promise<ConnectorStatus | undefined> {
      const result = await call("GET", `${named(name)}/status`);
      return result.status === 404 ? undefined : (expectOk(result, name) as ConnectorStatus);
    },
    async config(name: string): Promise<Record<string, string> | undefined> {
      const result = await call("GET", `${named(name)}/config`);
      return result.status === 404 ? undefined : (expectOk(result, name) as Record<string, string>);
    },
    /** Connect's own validation, resolved by the plugin: the properties it refuses and why. */
    async validate(connector: ConnectorFile): Promise<ValidationIssue[]> {
      const plugin = connector.config["connector.class"]?.split(".").pop() ?? "";
      const result = await call(
        "PUT",
        `/connector-plugins/${encodeURIComponent(plugin)}/config/validate`,
        { ...connector.config, name: connector.name },
        60_000,
      );
      if (result.status >= 300)
        throw new ConnectError(
          "invalid_config",
          `validation refused (${result.status}): ${JSON.stringify(result.body)}`,
        );
      // An internal property may come back without a value (MySQL connector 3.6: internal.legacy.snapshot.max.threads).
      const configs = (result.body as { configs: { value: { name: string; errors: string[] } | null }[] })
        .configs;
      return configs.flatMap(({ value }) =>
        value && value.errors.length > 0 ? [{ name: value.name, errors: value.errors }] : [],
      );
    },
    /** Creates or updates (PUT is idempotent); reports whether anything changed. */
    async put(connector: ConnectorFile): Promise<{ changed: boolean }> {
      const wanted = { ...connector.config, name: connector.name };
      const current = await this.config(connector.name);
      if (current && sameConfig(current, wanted)) return { changed: false };
      const result = await call("PUT", `${named(connector.name)}/config`, wanted, 60_000);
      if (result.status >= 300)
        throw new ConnectError(
          "invalid_config",
          `Connect refused ${connector.name} (${result.status}): ${JSON.stringify(result.body)}`,
        );
      return { changed: true };
    },
    stop: async (name: string) => void expectOk(await call("PUT", `${named(name)}/stop`), name),
    pause: async (name: string) => void expectOk(await call("PUT", `${named(name)}/pause`), name),
    resume: async (name: string) => void expectOk(await call("PUT", `${named(name)}/resume`), name),
    restart: async (name: string, onlyFailed: boolean, includeTasks = true) =>
      void expectOk(
        await call("POST", `${named(name)}/restart?includeTasks=${includeTasks}&onlyFailed=${onlyFailed}`),
        name,
      ),
    remove: async (name: string) => void expectOk(await call("DELETE", named(name)), name),
    offsets: async (name: string) => expectOk(await call("GET", `${named(name)}/offsets`), name),
    /** Connect refuses both unless the connector is STOPPED. */
    deleteOffsets: async (name: string) =>
      void expectOk(await call("DELETE", `${named(name)}/offsets`, undefined, 60_000), name),
    writeOffsets: async (name: string, offsets: unknown) =>
      void expectOk(await call("PATCH", `${named(name)}/offsets`, offsets, 60_000), name),
    /** The connector's one source offset (Debezium keeps one per server), or undefined before its first. */
    async sourceOffset(name: string): Promise<Record<string, unknown> | undefined> {
      const body = (await this.offsets(name)) as { offsets?: { offset?: Record<string, unknown> }[] };
      return body.offsets?.[0]?.offset ?? undefined;
    },
    /**
     * Forgets where the connector has read to (stopped first, as Connect requires) and starts it again: a
     * Debezium connector then takes a fresh snapshot and streams on from the server's position now.
     */
    async resetOffsets(name: string): Promise<void> {
      await this.stop(name);
      try {
        await this.stopped(name);
        await this.deleteOffsets(name);
      } finally {
        // Whatever failed, the connector is never left stopped: nobody else would start it again.
        await this.resume(name);
      }
    },
    /**
     * Waits until a stop has taken: the connector STOPPED and no task left, so that none flushes its
     * offsets over the ones about to be written.
     */
    async stopped(name: string): Promise<void> {
      await this.waitUntil(
        name,
        (status) => status?.connector.state === "STOPPED" && status.tasks.length === 0,
        { timeoutMs: 60_000, failedGraceMs: 60_000 },
      );
    },
    /**
     * Rewrites the connector's one source offset (stopped first, as Connect requires) and starts it
     * again: it resumes from the offset so changed.
     */
    async alterSourceOffset(
      name: string,
      change: (offset: Record<string, unknown>) => Record<string, unknown>,
    ): Promise<void> {
      await this.stop(name);
      try {
        await this.stopped(name);
        await this.writeOffsets(name, await this.alteredSourceOffset(name, change));
      } finally {
        // Whatever failed, the connector is never left stopped: nobody else would start it again.
        await this.resume(name);
      }
    },
    /** The body of an offsets PATCH that sets the connector's one source offset to `change` of the stored one. */
    async alteredSourceOffset(
      name: string,
      change: (offset: Record<string, unknown>) => Record<string, unknown>,
    ): Promise<SourceOffsets> {
      const body = (await this.offsets(name)) as Partial<SourceOffsets>;
      const [stored] = body.offsets ?? [];
      if (!stored) throw new ConnectError("refused", `${name} has no offset to alter`);
      return { offsets: [{ partition: stored.partition, offset: change(stored.offset) }] };
    },
    /**
     * Polls until the connector and its tasks have been RUNNING for `ms` in a row; passing states
     * (RESTARTING, UNASSIGNED) start the count again, a FAILED connector or task is refused.
     */
    async runningFor(name: string, ms: number, timeoutMs = 60_000): Promise<ConnectorStatus | undefined> {
      const deadline = Date.now() + timeoutMs;
      let runningSince: number | undefined;
      for (;;) {
        const status = await this.statusIfExists(name);
        if (status?.connector.state === "FAILED" || status?.tasks.some((task) => task.state === "FAILED"))
          throw new ConnectError("refused", `${name} FAILED: ${describeStatus(status)}`);
        if (!isRunning(status)) runningSince = undefined;
        else {
          runningSince ??= Date.now();
          if (Date.now() - runningSince >= ms) return status;
        }
        if (Date.now() > deadline)
          throw new ConnectError(
            "refused",
            `timed out waiting for ${name} to stay RUNNING; last state ${describeStatus(status)}`,
          );
        await sleep(500);
      }
    },
    /** Polls until `predicate` holds. A FAILED task ends the wait, except during `failedGraceMs` (a restart just asked for). */
    async waitUntil(
      name: string,
      predicate: (status: ConnectorStatus | undefined) => boolean,
      options: {
        timeoutMs?: number;
        failedGraceMs?: number;
        onWait?: (status: ConnectorStatus | undefined) => void;
      } = {},
    ) {
      const started = Date.now();
      const deadline = started + (options.timeoutMs ?? 120_000);
      for (;;) {
        const status = await this.statusIfExists(name);
        if (predicate(status)) return status;
        const failed = status?.tasks.find((task) => task.state === "FAILED");
        if (failed && Date.now() > started + (options.failedGraceMs ?? 0)) {
          throw new ConnectError("refused", `task ${failed.id} FAILED: ${firstLines(failed.trace)}`);
        }
        if (Date.now() > deadline)
          throw new ConnectError(
            "refused",
            `timed out waiting for ${name}; last state ${describeStatus(status)}`,
          );
        options.onWait?.(status);
        await sleep(500);
      }
    },
  };
}

export type ConnectClient = ReturnType<typeof connectClient>;

const sameConfig = (a: Record<string, string>, b: Record<string, string>) => {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) if (a[key] !== b[key]) return false;
  return true;
};

/**
 * What a task's trace may show in a log: the exception's own line, without
 * the stack and with any password-like value masked (Connect's traces can quote connector settings).
 */
export const redactedTrace = (trace: string | undefined): string | undefined =>
  trace === undefined
    ? undefined
    : (trace.split("\n")[0] ?? "")
        .replace(/((?:password|secret|token)[\w.]*\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s,;)]+)/gi, "$1***")
        .slice(0, 300);

export const firstLines = (trace: string | undefined, lines = 3) =>
  (trace ?? "").split("\n").slice(0, lines).join(" | ");

export const describeStatus = (status: ConnectorStatus | undefined) =>
  status
    ? `${status.connector.state}; tasks ${status.tasks.map((t) => `${t.id}:${t.state}`).join(", ") || "none"}`
    : "absent";
