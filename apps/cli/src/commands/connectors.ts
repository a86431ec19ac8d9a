import { basename, dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type ConnectClient,
  ConnectError,
  closedSnapshotWindows,
  connectClient,
  connectorsDir,
  describeStatus,
  firstLines,
  isRunning,
  missingEnvPlaceholders,
  readConnectorFile,
  requestIncrementalSnapshot,
} from "@flashgate/connect";
import { databaseName } from "@flashgate/db";
import type { Command } from "commander";
import mysql from "mysql2/promise";
import { localStack } from "../local-stack.ts";

interface Common {
  connectUrl?: string;
  json?: boolean;
}

const out = (options: Common, human: string, json: unknown) =>
  process.stdout.write(options.json ? `${JSON.stringify(json, null, 2)}\n` : `${human}\n`);

async function client(options: Common): Promise<ConnectClient> {
  const url = options.connectUrl ?? process.env.KAFKA_CONNECT_URL;
  if (url) return connectClient(url);
  const { connectUrl, stackContext } = await localStack();
  return connectClient(connectUrl(stackContext()));
}

/**
 * The ${env:…} placeholders set nowhere: placeholders resolve in the Connect worker, so those this
 * environment lacks are looked up in what the local stack's worker gets (its connector environment).
 */
async function unsetPlaceholders(config: Record<string, string>) {
  const missing = missingEnvPlaceholders(config, process.env);
  if (!missing.length) return missing;
  const { connectorEnv, stackContext } = await localStack();
  return missingEnvPlaceholders(config, { ...connectorEnv(stackContext()), ...process.env });
}

/** A connector name means connectors/NAME.json (the local stack's engine's by default); a path to a .json file is read as it is. */
async function fileFor(name: string | undefined) {
  if (name?.includes("/")) return readConnectorFile(dirname(name), basename(name));
  if (name) return readConnectorFile(connectorsDir, name);
  const { connectorFile, stackContext } = await localStack();
  return readConnectorFile(connectorsDir, connectorFile(stackContext()));
}

function statusLines(status: Awaited<ReturnType<ConnectClient["status"]>>): string {
  const lines = [`${status.name}: connector ${status.connector.state} on ${status.connector.worker_id}`];
  for (const task of status.tasks) {
    lines.push(`  task ${task.id}: ${task.state} on ${task.worker_id}`);
    if (task.trace) lines.push(`    ${firstLines(task.trace, 4)}`);
  }
  if (status.connector.trace) lines.push(`  ${firstLines(status.connector.trace, 4)}`);
  return lines.join("\n");
}

/** Placeholders set, then Connect's own validation; prints each refused property. Undefined when invalid. */
async function validated(name: string | undefined, verb: "valid" | "applied", common: Common) {
  const connector = await fileFor(name);
  const missing = await unsetPlaceholders(connector.config);
  if (missing.length)
    throw new ConnectError("invalid_config", `unset \${env:…} placeholders: ${missing.join(", ")}`);
  const c = await client(common);
  const issues = await c.validate(connector);
  if (!issues.length) return { connector, c };
  out(common, issues.map((i) => `✗ ${i.name}: ${i.errors.join("; ")}`).join("\n"), {
    [verb]: false,
    issues,
  });
  process.exitCode = 5;
  return undefined;
}

/** Validates, then creates or updates the connector and waits until it and its tasks are RUNNING. */
async function applyConnector(name: string | undefined, common: Common) {
  const ok = await validated(name, "applied", common);
  if (!ok) return;
  const { connector, c } = ok;
  const { changed } = await c.put(connector);
  const started = Date.now();
  const status = await c.waitUntil(connector.name, isRunning, {
    onWait: (s) =>
      process.stderr.write(
        `  … waiting for ${connector.name} to be RUNNING: ${describeStatus(s)} (${((Date.now() - started) / 1000).toFixed(1)}s)\n`,
      ),
  });
  out(
    common,
    changed
      ? `✓ ${connector.name} applied and RUNNING`
      : `= ${connector.name} unchanged (already applied), RUNNING`,
    { changed, status },
  );
}

/** How long a restarted connector must stay RUNNING before `restart` says it is. */
const restartSettleMs = 3000;

export function registerConnectorCommands(program: Command) {
  const connectors = program
    .command("connectors")
    .description("manage Debezium connectors through the Kafka Connect REST API")
    .option("--connect-url <url>", "Kafka Connect REST URL (default: KAFKA_CONNECT_URL or the local stack)")
    .option("--json", "machine-readable output");
  const common = (): Common => connectors.opts<Common>();

  connectors.command("list").action(async () => {
    const c = await client(common());
    const names = await c.list();
    const statuses = await Promise.all(names.map((name) => c.status(name)));
    out(
      common(),
      statuses.map((s) => `${s.name.padEnd(24)} ${describeStatus(s)}`).join("\n") || "(no connectors)",
      statuses,
    );
  });

  connectors
    .command("validate [name]")
    .description("check placeholders and let Connect validate connectors/NAME.json")
    .action(async (name?: string) => {
      const ok = await validated(name, "valid", common());
      if (ok) out(common(), `✓ ${ok.connector.name} is valid`, { valid: true, issues: [] });
    });

  connectors
    .command("apply [name]")
    .description("validate, then create or update connectors/NAME.json and wait until RUNNING")
    .action((name?: string) => applyConnector(name, common()));

  connectors
    .command("status [name]")
    .description("connector and task states; exits 1 unless everything is RUNNING")
    .action(async (name?: string) => {
      const c = await client(common());
      const names = name ? [name] : await c.list();
      const statuses = await Promise.all(names.map((n) => c.status(n)));
      out(common(), statuses.map(statusLines).join("\n") || "(no connectors)", statuses);
      if (!statuses.every(isRunning)) process.exitCode = 1;
    });

  for (const verb of ["pause", "resume", "delete"] as const) {
    connectors.command(`${verb} <name>`).action(async (name: string) => {
      const c = await client(common());
      if (verb === "pause") await c.pause(name);
      if (verb === "resume") await c.resume(name);
      if (verb === "delete") await c.remove(name);
      out(common(), `✓ ${verb} ${name}`, { name, action: verb });
    });
  }

  connectors
    .command("restart <name>")
    .option("--failed-only", "restart only the connector or tasks that FAILED")
    .action(async (name: string, options: { failedOnly?: boolean }) => {
      const c = await client(common());
      await c.restart(name, Boolean(options.failedOnly));
      // Connect takes a restart up asynchronously: for a moment it may still report the old state, FAILED
      // or RUNNING. So the old FAILED is forgiven for a while, and RUNNING counts once it has held for a few
      // seconds — a task restarted into a refusal (a wrong password) fails well within them.
      await c.waitUntil(name, isRunning, { failedGraceMs: 15_000 });
      const status = await c.runningFor(name, restartSettleMs);
      out(common(), `✓ restarted ${name}: ${describeStatus(status)}`, status);
    });

  connectors.command("offsets <name>").action(async (name: string) => {
    const offsets = await (await client(common())).offsets(name);
    out(common(), JSON.stringify(offsets, null, 2), offsets);
  });

  connectors
    .command("snapshot <table>")
    .description("incremental snapshot of a captured table through the Debezium signal table")
    .option("--where <sql>", 'only rows matching this condition, e.g. "activity_id = 42"')
    .option("--follow", "report closed snapshot windows until the snapshot goes quiet")
    .action((table: string, options: SnapshotOptions) => snapshotTable(table, options, common()));
}

interface SnapshotOptions {
  where?: string;
  follow?: boolean;
}

/** Sends the signal; with --follow, reports closed snapshot windows until none closes for 5 s. */
async function snapshotTable(table: string, options: SnapshotOptions, common: Common) {
  // An operator's account (OPS_DATABASE_URL), or the local stack's admin: the app's user may not signal.
  const db = process.env.OPS_DATABASE_URL
    ? await mysql.createConnection({ uri: process.env.OPS_DATABASE_URL, database: databaseName })
    : await localStack().then(({ adminConnection, stackContext }) => adminConnection(stackContext()));
  try {
    await db.query(`USE \`${databaseName}\``);
    const before = await closedSnapshotWindows(db);
    const id = await requestIncrementalSnapshot(db, {
      database: databaseName,
      table,
      where: options.where,
    });
    process.stderr.write(
      `signal ${id} sent: incremental snapshot of ${table}${options.where ? ` where ${options.where}` : ""}\n`,
    );
    if (options.follow) {
      let seen = before;
      let quietSince = Date.now();
      while (Date.now() - quietSince < 5000) {
        await sleep(500);
        const now = await closedSnapshotWindows(db);
        if (now !== seen) {
          seen = now;
          quietSince = Date.now();
          process.stderr.write(`  … ${now - before} chunk(s) snapshotted\n`);
        }
      }
    }
    out(common, `✓ snapshot requested (${id})`, { signal: id, table, where: options.where ?? null });
  } finally {
    await db.end();
  }
}
