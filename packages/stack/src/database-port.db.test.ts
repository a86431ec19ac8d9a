import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "@flashgate/testkit";
import mysql from "mysql2/promise";
import { afterAll, describe, expect, it } from "vitest";
import { appEnv } from "./components/app.ts";
import type { StackContext } from "./context.ts";
import { repoRoot } from "./paths.ts";
import { silentProgress } from "./progress.ts";
import { down, stackContext, up } from "./stack.ts";

const homes = join(repoRoot, ".flashgate-test");
const contexts: StackContext[] = [];
const onPort = async (home: string, port: number) => {
  const ctx = stackContext({
    env: { ...process.env, FLASHGATE_HOME: home, FLASHGATE_DB_PORT: String(port) },
    progress: silentProgress,
  });
  contexts.push(ctx);
  await up(ctx, { only: ["database"] });
  return ctx;
};
afterAll(async () => {
  for (const ctx of contexts) await down(ctx, { only: ["database"] });
  for (const ctx of contexts) rmSync(ctx.paths.home, { recursive: true, force: true });
});

describe("a database left running by an interrupted run", () => {
  it("is not reused when it listens on another port than the one asked for: the server answers on the new port", async () => {
    mkdirSync(homes, { recursive: true });
    const home = mkdtempSync(join(homes, "port-"));
    await onPort(home, await freePort());
    // A run killed before its teardown leaves its server; the next run of the same home picks a new free port.
    const port = await freePort();
    const ctx = await onPort(home, port);
    const connection = await mysql.createConnection(appEnv(ctx).DATABASE_URL);
    const [rows] = await connection.query<mysql.RowDataPacket[]>("SELECT @@port AS port");
    await connection.end();
    expect(Number(rows[0].port)).toBe(port);
  }, 120_000);
});
