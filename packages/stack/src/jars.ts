import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withJarsLock } from "./jars-lock.ts";
import type { StackPaths } from "./paths.ts";
import type { Progress, StepProgress } from "./progress.ts";
import { StackError } from "./wait.ts";

function pomFingerprint(paths: StackPaths): string {
  const hash = createHash("sha256");
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const full = join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== "target") walk(full);
      else if (entry.name === "pom.xml") hash.update(readFileSync(full));
    }
  };
  walk(paths.connectorsDir);
  return hash.digest("hex");
}

/** Kafka, Connect and Debezium jars come from Maven Central once per machine; a changed pom fetches again. */
export async function ensureJars(paths: StackPaths, progress: Progress): Promise<void> {
  const fingerprint = pomFingerprint(paths);
  const fetched = () =>
    existsSync(paths.jarsStamp) && readFileSync(paths.jarsStamp, "utf8").trim() === fingerprint;
  if (fetched()) return;
  const step = progress.step(`fetching Kafka, Kafka Connect and Debezium jars with Maven into ${paths.jars}`);
  await withJarsLock(paths.jars, step, async () => {
    // Another process may have fetched them while this one waited for the lock.
    if (!fetched()) await fetchJars(paths, step, fingerprint);
  });
  step.done();
}

async function fetchJars(paths: StackPaths, step: StepProgress, fingerprint: string): Promise<void> {
  // A jar the new pom no longer names must not stay on the classpath beside its replacement.
  for (const dir of [paths.kafkaJars, paths.pluginPath]) rmSync(dir, { recursive: true, force: true });
  const args = ["-B", "-f", paths.pom, `-Dflashgate.jars=${paths.jars}`, "dependency:copy-dependencies"];
  await new Promise<void>((resolve, reject) => {
    const child = spawn("mvn", args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    let artifacts = 0;
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      output = (output + text).slice(-20000);
      artifacts += (text.match(/Downloaded from|Copying /g) ?? []).length;
      step.waiting(`mvn dependency:copy-dependencies, ${artifacts} artifacts so far`);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("error", (error) => reject(new StackError(`could not run mvn: ${error.message}`)));
    child.once("exit", (code) => {
      if (code === 0) return resolve();
      const errors = output
        .split("\n")
        .filter((line) => line.includes("[ERROR]"))
        .slice(0, 5)
        .join("\n");
      reject(new StackError(`mvn failed to fetch the jars (exit ${code}):\n${errors}`));
    });
  });
  writeFileSync(paths.jarsStamp, fingerprint);
}
