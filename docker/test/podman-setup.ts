import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { repoRoot } from "@flashgate/stack";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The Docker API that podman serves for this run: docker-compose and testcontainers talk to it. */
    dockerHost: string;
  }
}

const socket = join(repoRoot, ".flashgate", "podman.sock");

/**
 * Builds the local images (docker/local/build.sh: no registry needed) and serves podman's Docker API on
 * a socket of this checkout, so that the compose file runs as a Docker user would run it.
 */
export default async function setup(project: TestProject) {
  const env = { ...process.env, CONTAINERS_CONF: join(repoRoot, "docker", "local", "containers.conf") };
  const built = spawnSync("bash", [join(repoRoot, "docker", "local", "build.sh")], { env, stdio: "inherit" });
  if (built.status !== 0) throw new Error(`docker/local/build.sh failed (exit ${built.status})`);
  rmSync(socket, { force: true });
  const service: ChildProcess = spawn("podman", ["system", "service", "--time=0", `unix://${socket}`], {
    env,
    stdio: "inherit",
  });
  const deadline = Date.now() + 30_000;
  while (!existsSync(socket)) {
    if (service.exitCode !== null) throw new Error(`podman system service exited with ${service.exitCode}`);
    if (Date.now() > deadline) throw new Error("podman system service did not open its socket");
    await sleep(100);
  }
  project.provide("dockerHost", `unix://${socket}`);
  // podman schedules healthchecks with systemd timers, and these machines run no systemd: run them here,
  // as the timers would, so that compose's depends_on conditions see services become healthy.
  const ticker = setInterval(() => {
    const listed = spawnSync(
      "podman",
      ["ps", "-q", "--filter", "health=starting", "--filter", "health=unhealthy"],
      {
        env,
        encoding: "utf8",
      },
    );
    for (const id of listed.stdout.split("\n").filter(Boolean))
      spawn("podman", ["healthcheck", "run", id], { env, stdio: "ignore" });
  }, 2000);
  return () => {
    clearInterval(ticker);
    service.kill("SIGTERM");
  };
}
