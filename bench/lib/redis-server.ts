import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort } from "@flashgate/testkit";
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
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on("error", () => {});
  for (const deadline = Date.now() + 10_000; ; await sleep(100)) {
    if (child.exitCode !== null)
      throw new Error(`redis-server (${appendfsync}) exited with ${child.exitCode}`);
    if (
      await client.connect().then(
        () => client.ping(),
        () => undefined,
      )
    )
      break;
    if (Date.now() > deadline) throw new Error(`redis-server (${appendfsync}) did not start`);
  }
  client.disconnect();
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
