import { rmSync } from "node:fs";
import { appEnv, consoleProgress, down, stackContext, up } from "@flashgate/stack";
import type { TestProject } from "vitest/node";
import { unmendedMarker } from "./cdc-probe.ts";
import { startContainerStack } from "./container-stack.ts";
import { localImages, servePodman } from "./podman.ts";
import type {} from "./provided.ts";
import { testStackEnv } from "./test-stack.ts";

/**
 * Starts (or reuses) the real test stack once per run and hands its connection settings to every test
 * file: native processes, or with FLASHGATE_TEST_STACK=containers the same parts in containers, started
 * by testcontainers under podman with the images docker/local/build.sh makes.
 */
export default async function setup(project: TestProject) {
  const ctx = stackContext({ env: { ...process.env, ...testStackEnv }, progress: consoleProgress() });
  rmSync(unmendedMarker(ctx.paths.home), { force: true });
  if (process.env.FLASHGATE_TEST_STACK === "containers") {
    const podman = await servePodman();
    process.env.DOCKER_HOST = podman.dockerHost;
    // Ryuk, testcontainers' reaper, is an image from a registry: the teardown below removes what started.
    process.env.TESTCONTAINERS_RYUK_DISABLED = "true";
    const stack = await startContainerStack(ctx, localImages());
    project.provide("stackEnv", {
      ...testStackEnv,
      ...appEnv(ctx),
      FLASHGATE_TEST_STACK: "containers",
      DOCKER_HOST: podman.dockerHost,
    });
    return async () => {
      await stack.stop();
      podman.stop();
    };
  }
  const started = await up(ctx, { withApps: false });
  project.provide("stackEnv", { ...testStackEnv, ...appEnv(ctx) });
  return async () => {
    if (process.env.FLASHGATE_KEEP_TEST_STACK === "1") return;
    await down(ctx, { only: started });
  };
}
