import type { FlashgateRedis } from "@flashgate/cache";
import type { StackContext } from "@flashgate/stack";
import type { Pool } from "mysql2/promise";
import type { Systems } from "./systems.ts";
import type { Results } from "./tables.ts";

/** What a run is: full or quick, its rounds, each design's server processes. */
export interface RunSettings {
  quick: boolean;
  rounds: number;
  processes: number;
}

/** What every scenario of a run is given: the designs started once, and the bench stack. */
export interface Bench extends RunSettings {
  systems: Systems;
  pool: Pool;
  redis: FlashgateRedis;
  env: Record<string, string>;
  ctx: StackContext;
}

/** A figure a scenario is held to, for the report's goals table. */
export interface Goal {
  what: string;
  /** The run's figure: the median of its rounds, with their spread. */
  values: number[];
  target: number;
  /** A ceiling rather than a floor (lower is better). */
  atMost?: boolean;
}

/**
 * One scenario: its name (for `--only` and its result file), what the run's log calls it, its profile for a
 * quick and a full run, its run, which returns what its result file holds, and its section of the report.
 */
export interface Scenario<P = unknown> {
  name: string;
  title: string;
  /** Left out of a quick run unless asked for by name (a second whole stack takes minutes to start). */
  fullOnly?: boolean;
  profile(run: RunSettings): P;
  run(bench: Bench, profile: P): Promise<object>;
  /** Its part of the run's report, from the run's results (charts drawn into the run's folder). */
  section(results: Results, folder: string): string[];
  /** The goals it is held to, with this run's figures (none for a scenario that only explains). */
  goals?(results: Results): Goal[];
}
