import type { FlashgateRedis } from "@flashgate/cache";
import type { StackContext } from "@flashgate/stack";
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
 * A scenario's result as its file holds it: what its run returned, stamped with the run, the machine and
 * how long it ran (s; absent from runs before it was kept).
 */
export type Stored<R> = R & { run: string; facts: Record<string, unknown>; tookSeconds?: number };

/**
 * One scenario, typed end to end: its name (for `--only` and its result file), what the run's log calls
 * it, its profile for a quick and a full run, its run, which returns what its result file holds, its
 * section of the report and its goals, both read from that result.
 */
export interface ScenarioSpec<P, R extends object> {
  name: string;
  title: string;
  /** Left out of a quick run unless asked for by name (a second whole stack takes minutes to start). */
  fullOnly?: boolean;
  profile(run: RunSettings): P;
  run(bench: Bench, profile: P): Promise<R>;
  /**
   * Its part of the run's report (charts drawn into the run's folder); `onEngine` reads its result on
   * another database engine of the same run, if there is one.
   */
  section(result: Stored<R>, folder: string, onEngine: (engine: string) => Stored<R> | undefined): string[];
  /** The goals it is held to, with this run's figures (none for a scenario that only explains). */
  goals?(result: Stored<R> | undefined): Goal[];
}

/** A scenario as the run and the report see it: its profile and result no longer named. */
export interface Scenario {
  name: string;
  title: string;
  fullOnly?: boolean;
  profile(run: RunSettings): unknown;
  run(bench: Bench, profile: unknown): Promise<object>;
  /** Nothing when the run has no result of it. */
  section(results: Results, folder: string): string[];
  goals(results: Results): Goal[];
}

/** The one place a result file's JSON is taken to be what the scenario's run wrote. */
export function defineScenario<P, R extends object>(spec: ScenarioSpec<P, R>): Scenario {
  const read = (results: Results, name: string) => results[name]?.data as Stored<R> | undefined;
  return {
    name: spec.name,
    title: spec.title,
    fullOnly: spec.fullOnly,
    profile: spec.profile,
    run: (bench, profile) => spec.run(bench, profile as P),
    section: (results, folder) => {
      const result = read(results, spec.name);
      return result ? spec.section(result, folder, (engine) => read(results, `${spec.name}-${engine}`)) : [];
    },
    goals: (results) => spec.goals?.(read(results, spec.name)) ?? [],
  };
}
