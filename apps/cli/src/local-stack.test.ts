import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const cli = fileURLToPath(new URL("../bin/flashgate.js", import.meta.url));
// Says on stderr when anything resolves the local stack's package, before the command runs.
const watchStack = `data:text/javascript,${encodeURIComponent(
  `import { registerHooks } from "node:module";
   registerHooks({ resolve(specifier, context, next) {
     if (specifier === "@flashgate/stack") process.stderr.write("LOADED @flashgate/stack\\n");
     return next(specifier, context);
   } });`,
)}`;

const flashgate = (env: Record<string, string>, ...args: string[]) =>
  new Promise<{ code: number; stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      ["--import", watchStack, cli, ...args],
      { env: { ...process.env, FLASHGATE_HOME: mkdtempSync(join(tmpdir(), "fg-cli-")), ...env } },
      (error, _stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
    ),
  );

// Nothing listens on port 1: each command fails at its first connection, having loaded what it loads.
// Each is a Node process of its own: seconds on a loaded machine.
describe("the operator's commands on their own servers", { timeout: 60_000 }, () => {
  it("migrate, connectors, the drift check and the lost commits never load the local stack", async () => {
    const migrate = await flashgate(
      {
        MIGRATE_ADMIN_URL: "mysql://root@127.0.0.1:1/",
        APP_DB_PASSWORD: "a".repeat(32),
        MAINTAINER_DB_PASSWORD: "c".repeat(32),
        DEBEZIUM_DB_PASSWORD: "b".repeat(32),
      },
      "migrate",
    );
    expect(migrate.stderr).toMatch(/MIGRATE_ADMIN_URL: cannot connect/);
    const connectors = await flashgate({}, "connectors", "--connect-url", "http://127.0.0.1:1", "list");
    expect(connectors.code).toBe(3);
    const drift = await flashgate(
      { DATABASE_URL: "mysql://u:p@127.0.0.1:1/flashgate", REDIS_URL: "redis://127.0.0.1:1" },
      "drift",
      "check",
    );
    expect(drift.code).not.toBe(0);
    const lost = await flashgate({ DATABASE_URL: "mysql://u:p@127.0.0.1:1/flashgate" }, "db", "lost-commits");
    expect(lost.code).not.toBe(0);
    for (const run of [migrate, connectors, drift, lost])
      expect(run.stderr).not.toMatch(/LOADED @flashgate\/stack/);
  });

  it("a command of the local stack loads it", async () => {
    const token = await flashgate({}, "token", "--user", "1");
    expect(token.code).toBe(0);
    expect(token.stderr).toMatch(/LOADED @flashgate\/stack/);
  });
});
