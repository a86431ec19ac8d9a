import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfig } from "@flashgate/config";
import { ConnectError, connectClient, isRunning, readConnectorFile } from "@flashgate/connect";
import { appDbUser, databaseName, dbaDbUser, debeziumDbUser, maintainerDbUser, migrate } from "@flashgate/db";
import { appComponent } from "./components/app.ts";
import { connectUrl, connectWorker } from "./components/connect.ts";
import { databaseNode } from "./components/database.ts";
import { adminConnection, databaseNodes, primaryNode, replicated } from "./components/database-nodes.ts";
import { databaseProxy } from "./components/database-proxy.ts";
import { kafkaBootstrap, kafkaBroker } from "./components/kafka.ts";
import { redisNode, redisUrl } from "./components/redis.ts";
import { type StackConfig, stackConfigSchema, type Topology, topologies } from "./config.ts";
import type { Component, StackContext } from "./context.ts";
import { ensureJars } from "./jars.ts";
import { isPortOpen } from "./net.ts";
import { defaultHome, stackPaths } from "./paths.ts";
import { checkPrerequisites } from "./prerequisites.ts";
import { readPid, stopDaemon } from "./processes.ts";
import { consoleProgress, type Progress } from "./progress.ts";
import { loadSecrets } from "./secrets.ts";
import { instances } from "./topology.ts";
import { StackError } from "./wait.ts";

/**
 * The database's processes: its one server; or on a replicated stack the primary, then its replica,
 * then the endpoint that leads to the primary.
 */
export const databaseTier = (ctx: StackContext): Component[] => {
  const primary = primaryNode(ctx);
  const nodes = databaseNodes(ctx).sort((a, b) => Number(b === primary) - Number(a === primary));
  return [...nodes.map((node) => databaseNode(ctx, node)), ...(replicated(ctx) ? [databaseProxy] : [])];
};

/** The infrastructure's processes of the stack's topology, in the order they start. */
export const infrastructure = (ctx: StackContext): Component[] => [
  ...databaseTier(ctx),
  ...instances(ctx.config, "redis").map((index) => redisNode(ctx, index)),
  ...instances(ctx.config, "kafka").map((index) => kafkaBroker(ctx, index)),
  ...instances(ctx.config, "connect").map((index) => connectWorker(ctx, index)),
];

export const apps = (ctx: StackContext): Component[] => [
  ...instances(ctx.config, "cache-maintainer").map((index) =>
    appComponent(ctx, { app: "cache-maintainer", portVariable: "FLASHGATE_MAINTAINER_PORT", index }),
  ),
  ...instances(ctx.config, "purchase-api").map((index) =>
    appComponent(ctx, { app: "purchase-api", portVariable: "FLASHGATE_API_PORT", index }),
  ),
  appComponent(ctx, { app: "dashboard", portVariable: "FLASHGATE_DASHBOARD_PORT" }),
];

/** The Debezium connector for the stack's engine (connectors/). */
export const connectorFile = (ctx: StackContext) => `flashgate-${ctx.config.FLASHGATE_DB}.json`;

export interface StackOptions {
  env?: Record<string, string | undefined>;
  /** Overrides FLASHGATE_HOME; the test stack passes its own. */
  home?: string;
  progress?: Progress;
}

export function stackContext(options: StackOptions = {}): StackContext {
  const env = options.env ?? process.env;
  const config: StackConfig = parseConfig(stackConfigSchema, env);
  const paths = stackPaths(options.home ?? config.FLASHGATE_HOME ?? defaultHome, config.FLASHGATE_JARS);
  // A home made as a cluster stays one for `status`, `down` and the other commands without repeating it.
  const recorded = recordedTopology(paths.topology);
  if (recorded && !env.FLASHGATE_TOPOLOGY) config.FLASHGATE_TOPOLOGY = recorded;
  return {
    config,
    paths,
    secrets: loadSecrets(paths.secrets),
    progress: options.progress ?? consoleProgress(),
  };
}

export interface UpOptions {
  withApps?: boolean;
  /** Only these infrastructure components, no connector, no apps: the fast test tiers need Redis alone, or the database alone. */
  only?: string[];
}

/** Starts what is not running yet, in dependency order, and returns the names it started. */
export async function up(ctx: StackContext, options: UpOptions = {}): Promise<string[]> {
  checkPrerequisites(ctx.config.FLASHGATE_DB, { proxy: replicated(ctx) });
  checkEngine(ctx);
  checkTopology(ctx);
  await ensureJars(ctx.paths, ctx.progress);
  const started: string[] = [];
  const startIfNeeded = async (component: Component) => {
    const pid = readPid(ctx.paths.pids, component.name);
    if (pid !== undefined) {
      if (await component.healthy(ctx)) {
        ctx.progress.info(`  = ${component.name} already running`);
        return;
      }
      // Ours but not answering (a crashed or half-started run): replace it rather than start a twin.
      ctx.progress.info(`  ! ${component.name} (pid ${pid}) is not healthy; restarting it`);
      await stopDaemon(ctx.paths.pids, component.name);
    }
    const { port, variable } = component.port(ctx);
    if (await isPortOpen(port)) {
      throw new StackError(
        `port ${port} for ${component.name} is taken by another process — set ${variable} to move it`,
      );
    }
    started.push(component.name);
    await component.start(ctx);
  };
  const lastOfDatabase = databaseTier(ctx).at(-1)?.name;
  for (const component of infrastructure(ctx).filter((c) => options.only?.includes(c.name) ?? true)) {
    await startIfNeeded(component);
    await component.settle?.(ctx);
    if (component.name === lastOfDatabase) await runMigrations(ctx);
  }
  if (options.only) return started;
  await registerConnector(ctx);
  if (options.withApps ?? true) {
    for (const app of apps(ctx)) await startIfNeeded(app);
  }
  return started;
}

const recordedTopology = (file: string): Topology | undefined => {
  const value = existsSync(file) ? readFileSync(file, "utf8").trim() : "";
  return (topologies as readonly string[]).includes(value) ? (value as Topology) : undefined;
};

/** One home holds one topology's state: a single broker's logs are no member of a three-broker cluster. */
function checkTopology(ctx: StackContext) {
  const { paths, config } = ctx;
  const recorded = recordedTopology(paths.topology);
  if (recorded && recorded !== config.FLASHGATE_TOPOLOGY)
    throw new StackError(
      `${paths.home} holds a ${recorded} stack, not ${config.FLASHGATE_TOPOLOGY}: set FLASHGATE_TOPOLOGY=${recorded}, ` +
        "choose another FLASHGATE_HOME, or remove it with `flashgate down --purge`",
    );
  // A home from before topologies were recorded is a single stack: recording it changes nothing.
  writeFileSync(paths.topology, `${config.FLASHGATE_TOPOLOGY}\n`);
}

/**
 * One home holds one engine's state: Kafka keeps the connector's binlog offsets and the topics hold its
 * changes, which mean nothing to the other engine. A home from before the engine was recorded is MariaDB's.
 */
function checkEngine(ctx: StackContext) {
  const { paths, config } = ctx;
  const recorded = existsSync(paths.engine)
    ? readFileSync(paths.engine, "utf8").trim()
    : existsSync(join(paths.home, "mariadb"))
      ? "mariadb"
      : undefined;
  if (recorded && recorded !== config.FLASHGATE_DB)
    throw new StackError(
      `${paths.home} holds a ${recorded} stack, not ${config.FLASHGATE_DB}: set FLASHGATE_DB=${recorded}, ` +
        "choose another FLASHGATE_HOME, or remove it with `flashgate down --purge`",
    );
  mkdirSync(paths.home, { recursive: true });
  writeFileSync(paths.engine, `${config.FLASHGATE_DB}\n`);
}

/** Migrates the sale database (or `database`, a copy of its schema: the bench's baselines have one). */
export async function runMigrations(ctx: StackContext, database = databaseName) {
  const step = ctx.progress.step(
    database === databaseName ? "schema migrations" : `schema migrations of ${database}`,
  );
  const admin = await adminConnection(ctx);
  try {
    const { applied } = await migrate(admin, {
      database,
      appUser: { name: appDbUser, password: ctx.secrets.appDbPassword },
      maintainerUser: { name: maintainerDbUser, password: ctx.secrets.maintainerDbPassword },
      debeziumUser: { name: debeziumDbUser, password: ctx.secrets.debeziumDbPassword },
      dbaUser: { name: dbaDbUser, password: ctx.secrets.dbaDbPassword },
    });
    step.done(applied.length ? `applied ${applied.join(", ")}` : "up to date");
  } finally {
    await admin.end();
  }
}

export async function registerConnector(ctx: StackContext) {
  const connector = readConnectorFile(ctx.paths.connectorsDir, connectorFile(ctx));
  const step = ctx.progress.step(`connector ${connector.name}`);
  const client = connectClient(connectUrl(ctx));
  const { changed } = await client.put(connector);
  // A task that failed earlier (a config stored by an older release, a password fixed since) stays
  // FAILED until restarted: restart it and give it time, rather than report the old failure.
  const status = await client.statusIfExists(connector.name);
  const failed = [status?.connector, ...(status?.tasks ?? [])].some((part) => part?.state === "FAILED");
  if (failed) {
    step.waiting("restarting what had FAILED");
    await client.restart(connector.name, true);
  }
  // Stopped or paused is left as it stands: an operator's, or a reset or GTID trim whose maintainer died,
  // which the cache-maintainers started next finish (waiting for RUNNING here would never end).
  const held = status?.connector.state;
  if (held === "STOPPED" || held === "PAUSED") {
    step.done(
      `${changed ? "registered" : "unchanged"}, ${held}: left so for its operator or the cache-maintainers`,
    );
    return;
  }
  try {
    await client.waitUntil(connector.name, isRunning, {
      failedGraceMs: failed || changed ? 30_000 : 0,
      onWait: () => step.waiting(`connector ${connector.name} and its tasks to be RUNNING`),
    });
  } catch (error) {
    // Its stored position is not on this server (a failover lost transactions it had read, a reset
    // binlog): the cache-maintainers started next take the lost ones out of it, or reset it.
    if (!(error instanceof ConnectError) || !/no longer available on the server/.test(error.message))
      throw error;
    step.done(
      "FAILED: its stored binlog position is not on this server; the cache-maintainers reposition it",
    );
    return;
  }
  step.done(`${changed ? "registered" : "unchanged"}${failed ? ", restarted" : ""}, RUNNING`);
}

/**
 * Stops by recorded pid, apps first so nothing writes into a stopping database: one kind after another
 * (apps, Connect, Kafka, Redis, the database tier), the instances of a kind at once.
 */
export async function down(
  ctx: StackContext,
  options: { purge?: boolean; only?: string[] } = {},
): Promise<string[]> {
  const stopped: string[] = [];
  const kinds = new Map<string, Component[]>();
  for (const component of [...apps(ctx).reverse(), ...infrastructure(ctx).reverse()]) {
    if (options.only && !options.only.includes(component.name)) continue;
    const kind = component.name.replace(/-\d+$/, "");
    kinds.set(kind, [...(kinds.get(kind) ?? []), component]);
  }
  for (const components of kinds.values()) {
    await Promise.all(
      components.map(async (component) => {
        const step = ctx.progress.step(`stopping ${component.name}`);
        if (await stopDaemon(ctx.paths.pids, component.name)) {
          stopped.push(component.name);
          step.done();
        } else {
          step.done("was not running");
        }
      }),
    );
  }
  if (options.purge) {
    // State goes; the jar cache (fetched once per machine) stays.
    for (const entry of existsSync(ctx.paths.home) ? readdirSync(ctx.paths.home) : []) {
      const full = join(ctx.paths.home, entry);
      if (full !== ctx.paths.jars) rmSync(full, { recursive: true, force: true });
    }
    ctx.progress.info(`removed the local state under ${ctx.paths.home} (kept the jar cache)`);
  }
  return stopped;
}

export interface ComponentStatus {
  name: string;
  port: number;
  pid: number | null;
  running: boolean;
  healthy: boolean;
  role?: string;
}

export async function status(ctx: StackContext): Promise<ComponentStatus[]> {
  const components = [...infrastructure(ctx), ...apps(ctx)];
  return Promise.all(
    components.map(async (component) => {
      const pid = readPid(ctx.paths.pids, component.name) ?? null;
      const healthy = pid !== null && (await component.healthy(ctx));
      const role = healthy
        ? await component.describe?.(ctx).catch((error: Error) => error.message)
        : undefined;
      return {
        name: component.name,
        port: component.port(ctx).port,
        pid,
        running: pid !== null,
        healthy,
        ...(role ? { role } : {}),
      };
    }),
  );
}

export function endpoints(ctx: StackContext): Record<string, string> {
  const { config } = ctx;
  const list: Record<string, string> = {
    [config.FLASHGATE_DB]: `mysql://127.0.0.1:${config.FLASHGATE_DB_PORT}/${databaseName}`,
    // Without the password: this is printed.
    redis: redisUrl(ctx).replace(/\/\/:[^@]*@/, "//"),
    kafka: kafkaBootstrap(ctx),
    connect: connectUrl(ctx),
  };
  for (const app of apps(ctx)) list[app.name] = `http://127.0.0.1:${app.port(ctx).port}`;
  return list;
}
