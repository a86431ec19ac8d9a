import { type StackContext, silentProgress, stackContext } from "@flashgate/stack";
import { inject } from "vitest";

export const stackEnv = (): Record<string, string> => inject("stackEnv");

export const testContext = (): StackContext => stackContext({ env: stackEnv(), progress: silentProgress });
