import type { StackConfig } from "./config.ts";
import type { StackPaths } from "./paths.ts";
import type { Progress } from "./progress.ts";
import type { StackSecrets } from "./secrets.ts";

export interface StackContext {
  config: StackConfig;
  paths: StackPaths;
  secrets: StackSecrets;
  progress: Progress;
}

/** One process of the local stack. */
export interface Component {
  name: string;
  /** The port it serves and the variable that moves it, for status and "port taken" messages. */
  port: (ctx: StackContext) => { port: number; variable: string };
  start: (ctx: StackContext) => Promise<void>;
  healthy: (ctx: StackContext) => Promise<boolean>;
  /** Runs once this component is up, whether started now or found running (joins a cluster, waits for a quorum). */
  settle?: (ctx: StackContext) => Promise<void>;
  /** Its role where it has one (a database node: primary, or a replica and how far behind). */
  describe?: (ctx: StackContext) => Promise<string | undefined>;
}
