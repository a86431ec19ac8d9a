export { stackEnv, testContext } from "./env.ts";
export { eventually } from "./eventually.ts";
export { freshIds } from "./ids.ts";
export { testStackEnv } from "./test-stack.ts";
