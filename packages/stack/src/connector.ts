import { readFileSync } from "node:fs";
import { join } from "node:path";
import { httpJson } from "./net.ts";
import type { StepProgress } from "./progress.ts";
import { StackError, waitFor } from "./wait.ts";

export interface ConnectorFile {
  name: string;
  config: Record<string, string>;
}

export interface ConnectorStatus {
  name: string;
  connector: { state: string; worker_id: string; trace?: string };
  tasks: { id: number; state: string; worker_id: string; trace?: string }[];
}

export function readConnectorFile(connectorsDir: string, file: string): ConnectorFile {
  const parsed = JSON.parse(readFileSync(join(connectorsDir, file), "utf8")) as ConnectorFile;
  if (typeof parsed.name !== "string" || typeof parsed.config !== "object")
    throw new StackError(`${file}: needs "name" and "config"`);
  return parsed;
}

export async function connectorStatus(
  connectUrl: string,
  name: string,
): Promise<ConnectorStatus | undefined> {
  const { status, body } = await httpJson(`${connectUrl}/connectors/${encodeURIComponent(name)}/status`);
  if (status === 404) return undefined;
  if (status !== 200) throw new StackError(`Connect answered ${status} for ${name}: ${JSON.stringify(body)}`);
  return body as ConnectorStatus;
}

export const isRunning = (status: ConnectorStatus | undefined) =>
  status?.connector.state === "RUNNING" &&
  status.tasks.length > 0 &&
  status.tasks.every((task) => task.state === "RUNNING");

/** Creates or updates the connector (PUT is idempotent) and reports whether its config changed. */
export async function putConnector(
  connectUrl: string,
  connector: ConnectorFile,
): Promise<{ changed: boolean }> {
  const current = await httpJson(`${connectUrl}/connectors/${encodeURIComponent(connector.name)}/config`);
  const wanted = { ...connector.config, name: connector.name };
  if (current.status === 200 && sameConfig(current.body as Record<string, string>, wanted))
    return { changed: false };
  const { status, body } = await httpJson(
    `${connectUrl}/connectors/${encodeURIComponent(connector.name)}/config`,
    {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(wanted),
      timeoutMs: 30_000,
    },
  );
  if (status !== 200 && status !== 201)
    throw new StackError(`Connect refused ${connector.name} (${status}): ${JSON.stringify(body)}`);
  return { changed: true };
}

const sameConfig = (a: Record<string, string>, b: Record<string, string>) => {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) if (a[key] !== b[key]) return false;
  return true;
};

export async function waitUntilRunning(
  connectUrl: string,
  name: string,
  progress?: StepProgress,
  timeoutMs = 120_000,
) {
  return waitFor(
    `connector ${name} and its tasks to be RUNNING`,
    async () => {
      const status = await connectorStatus(connectUrl, name);
      const failed = status?.tasks.find((task) => task.state === "FAILED");
      if (failed)
        throw new StackError(`task ${failed.id} FAILED: ${failed.trace?.split("\n").slice(0, 3).join(" ")}`);
      return isRunning(status) ? status : undefined;
    },
    { timeoutMs, intervalMs: 500, progress },
  );
}
