import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  consoleProgress,
  defaultHome,
  ensureMysqlServer,
  parseEnvFile,
  repoRoot,
  stackPaths,
} from "@flashgate/stack";

/** podman's settings for these machines (docker/local/containers.conf): runc and explicit ulimits. */
export const podmanEnv = { CONTAINERS_CONF: join(repoRoot, "docker", "local", "containers.conf") };

/** The image names docker/local/build.sh wrote, by compose variable (MYSQL_IMAGE, FLASHGATE_KAFKA_IMAGE, …). */
export const localImages = (): Record<string, string> =>
  parseEnvFile(readFileSync(join(repoRoot, "docker", "local", "images.env"), "utf8"));

/**
 * Builds the local images (docker/local/build.sh: no registry needed) and serves podman's Docker API on a
 * socket of this checkout, for docker-compose and testcontainers. podman times healthchecks with systemd,
 * which these machines do not run: they are run here every 2 s instead. Returns the DOCKER_HOST and a stop.
 */
export async function servePodman(): Promise<{ dockerHost: string; stop: () => void }> {
  const env = { ...process.env, ...podmanEnv };
  // The MySQL image is built from the server the native stack fetches from Maven Central.
  await ensureMysqlServer(stackPaths(defaultHome), consoleProgress());
  const built = spawnSync("bash", [join(repoRoot, "docker", "local", "build.sh")], { env, stdio: "inherit" });
  if (built.status !== 0) throw new Error(`docker/local/build.sh failed (exit ${built.status})`);
  const socket = join(repoRoot, ".flashgate", "podman.sock");
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
  return {
    dockerHost: `unix://${socket}`,
    stop: () => {
      clearInterval(ticker);
      service.kill("SIGTERM");
    },
  };
}
