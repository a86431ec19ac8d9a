import { readPid, up } from "@flashgate/stack";
import { containerNames, containerPart } from "./container-stack.ts";
import { stackEnv, testContext } from "./env.ts";

/**
 * A part of the test stack that a recovery test kills at once (SIGKILL) and brings back: the native
 * process, or its container when the stack runs in containers (FLASHGATE_TEST_STACK=containers).
 */
export async function stackPart(name: keyof typeof containerNames) {
  const env = stackEnv();
  if (env.FLASHGATE_TEST_STACK === "containers") {
    process.env.DOCKER_HOST ??= env.DOCKER_HOST;
    const part = await containerPart(containerNames[name]);
    return { kill: part.kill, restore: part.start };
  }
  const ctx = testContext();
  return {
    kill: async () => {
      const pid = readPid(ctx.paths.pids, name);
      if (pid === undefined) throw new Error(`${name} is not running`);
      process.kill(-pid, "SIGKILL");
    },
    restore: async () => {
      await up(ctx, { withApps: false });
    },
  };
}
