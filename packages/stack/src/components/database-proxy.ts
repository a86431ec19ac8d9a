import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { dirname } from "node:path";
import type { Component, StackContext } from "../context.ts";
import { isPortOpen } from "../net.ts";
import { sbinPath } from "../prerequisites.ts";
import { startDaemon, tailLog } from "../processes.ts";
import { StackError, waitFor } from "../wait.ts";
import { databaseNodeName, databaseNodePort, databaseNodes, primaryNode } from "./database-nodes.ts";

/**
 * The database's one endpoint on a replicated stack (HAProxy, on FLASHGATE_DB_PORT): the apps and the
 * connector dial it and reach whichever node is primary, the way a managed database's endpoint or a
 * proxy in front of orchestrator moves with a failover. Nothing here decides who is primary: the
 * switchover and failover commands say so through its runtime socket, and record it for its restarts.
 */
export const databaseProxy: Component = {
  name: "database-proxy",
  port: (ctx) => ({ port: ctx.config.FLASHGATE_DB_PORT, variable: "FLASHGATE_DB_PORT" }),
  async start(ctx) {
    const step = ctx.progress.step(
      `database endpoint (HAProxy) on 127.0.0.1:${ctx.config.FLASHGATE_DB_PORT}`,
    );
    writeProxyConfig(ctx, primaryNode(ctx));
    const daemon = startDaemon(
      {
        name: "database-proxy",
        command: "haproxy",
        args: ["-f", ctx.paths.databaseProxyConfig],
        env: { PATH: sbinPath() },
      },
      ctx.paths,
    );
    await waitFor(
      `the database endpoint on ${ctx.config.FLASHGATE_DB_PORT}`,
      () => databaseProxy.healthy(ctx),
      {
        timeoutMs: 20_000,
        progress: step,
        failFast: () =>
          daemon.exited() !== null ? `haproxy exited:\n${tailLog(daemon.logFile)}` : undefined,
      },
    );
    step.done(`to ${databaseNodeName(ctx, primaryNode(ctx))}`);
  },
  describe: async (ctx) => `to ${databaseNodeName(ctx, primaryNode(ctx))}`,
  async healthy(ctx) {
    return (
      existsSync(ctx.paths.databaseProxySocket) &&
      (await isPortOpen(ctx.config.FLASHGATE_DB_PORT)) &&
      (await proxyCommand(ctx, "show info").then(
        (answer) => answer.includes("Name: HAProxy"),
        () => false,
      ))
    );
  },
};

const backend = "database";

/** Only the primary takes connections; the other node stands in maintenance. */
function writeProxyConfig(ctx: StackContext, primary: number) {
  const servers = databaseNodes(ctx).map(
    (node) =>
      `  server ${databaseNodeName(ctx, node)} 127.0.0.1:${databaseNodePort(ctx, node)}${node === primary ? "" : " disabled"}`,
  );
  mkdirSync(dirname(ctx.paths.databaseProxyConfig), { recursive: true });
  writeFileSync(
    ctx.paths.databaseProxyConfig,
    [
      "global",
      `  stats socket ${ctx.paths.databaseProxySocket} mode 600 level admin`,
      "  maxconn 4000",
      "defaults",
      "  mode tcp",
      "  timeout connect 2s",
      // A pooled connection or Debezium's binlog stream may idle for long: the database's own timeouts rule.
      "  timeout client 8h",
      "  timeout server 8h",
      `listen ${backend}`,
      `  bind 127.0.0.1:${ctx.config.FLASHGATE_DB_PORT}`,
      ...servers,
      "",
    ].join("\n"),
  );
}

/**
 * Sends the endpoint to `primary`: new connections go there, and every connection still open to the
 * other node is cut, so that pools and the connector reconnect to the new primary rather than write to
 * (or read the binlog of) the old one. Recorded in the configuration for the proxy's next start.
 */
export async function routeTo(ctx: StackContext, primary: number): Promise<void> {
  writeProxyConfig(ctx, primary);
  await proxyCommand(ctx, `set server ${backend}/${databaseNodeName(ctx, primary)} state ready`);
  for (const node of databaseNodes(ctx).filter((n) => n !== primary)) {
    const server = `${backend}/${databaseNodeName(ctx, node)}`;
    await proxyCommand(ctx, `set server ${server} state maint`);
    await proxyCommand(ctx, `shutdown sessions server ${server}`);
  }
}

/** Stops all traffic to a node (fencing a failed primary before anything is promoted). */
export async function fence(ctx: StackContext, node: number): Promise<void> {
  const server = `${backend}/${databaseNodeName(ctx, node)}`;
  await proxyCommand(ctx, `set server ${server} state maint`);
  await proxyCommand(ctx, `shutdown sessions server ${server}`);
}

/** One command on HAProxy's runtime socket; its answer. */
function proxyCommand(ctx: StackContext, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(ctx.paths.databaseProxySocket);
    let answer = "";
    socket.setTimeout(2000, () => socket.destroy(new StackError(`HAProxy did not answer "${command}"`)));
    socket.on("data", (chunk) => {
      answer += chunk;
    });
    socket.on("error", reject);
    socket.on("end", () => {
      const text = answer.trim();
      // Commands that change state answer nothing on success, and a sentence on failure.
      if (!command.startsWith("show ") && text)
        reject(new StackError(`HAProxy refused "${command}": ${text}`));
      else resolve(answer);
    });
    socket.end(`${command}\n`);
  });
}
