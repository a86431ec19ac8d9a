import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { eventually, freePort } from "@flashgate/testkit";
import { Redis } from "ioredis";

/**
 * A Redis of a baseline's own, persisting as that design deploys it (append-only file, synced once a
 * second or at every write), on the disk of the bench stack's MySQL, so that durabilities compare.
 */
export async function startRedisServer(home: string, appendfsync: "everysec" | "always") {
  const port = await freePort();
  const dir = join(home, `redis-as-truth-${appendfsync}`);
  mkdirSync(dir, { recursive: true });
  const child = spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--appendonly",
      "yes",
      "--appendfsync",
      appendfsync,
      "--save",
      "",
    ],
    { stdio: "ignore" },
  );
  const url = `redis://127.0.0.1:${port}`;
  await eventually(
    async () => {
      if (child.exitCode !== null)
        throw new Error(`redis-server (${appendfsync}) exited with ${child.exitCode}`);
      const client = new Redis(url, {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      client.on("error", () => {});
      try {
        await client.connect();
        await client.ping();
      } finally {
        client.disconnect();
      }
    },
    { timeoutMs: 10_000 },
  );
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
