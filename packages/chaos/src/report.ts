import type { KeyRecord } from "./buyers.ts";
import type { CheckResult } from "./checks.ts";
import type { FaultKind } from "./faults.ts";

export interface FaultRun {
  kind: FaultKind;
  injectedAt: number;
  healedAt: number;
  /** From the fault until the last 503 or lost connection it caused: how long buyers could not be served. */
  unavailableMs: number;
}

export interface ChaosReport extends CheckResult {
  seed: number;
  profile: string;
  activityId: number;
  durationMs: number;
  requests: number;
  keys: number;
  answers: Record<string, number>;
  faults: FaultRun[];
  faultsByKind: Record<string, { count: number; unavailableMsP50: number; unavailableMsMax: number }>;
  dbaActions: { restocks: number; closures: number };
  unsold: number;
  convergeMs: number | null;
}

const percentile = (values: number[], p: number) => {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
};

/** The run's figures, each fault's unavailability, and every violation in one list. */
export function summarise(run: {
  seed: number;
  profile: string;
  activityId: number;
  durationMs: number;
  requests: number;
  keys: Map<string, KeyRecord>;
  faultRuns: Omit<FaultRun, "unavailableMs">[];
  dbaActions: ChaosReport["dbaActions"];
  unsold: number;
  convergeMs: number | null;
  checked: CheckResult;
  convergeWithinMs: number;
}): ChaosReport {
  const answers: Record<string, number> = {};
  const unavailable: { at: number; told: string }[] = [];
  for (const record of run.keys.values())
    for (const answer of record.answers) {
      const label =
        answer.status === "network" ? "network" : `${answer.status}${answer.code ? ` ${answer.code}` : ""}`;
      answers[label] = (answers[label] ?? 0) + 1;
      if (answer.status === 503 || answer.status === "network")
        unavailable.push({ at: answer.at, told: answer.detail ?? label });
    }
  const unavailableAt = unavailable.map((answer) => answer.at);
  const faultRuns: FaultRun[] = run.faultRuns.map((fault, i) => {
    const windowEnd = run.faultRuns[i + 1]?.injectedAt ?? Number.POSITIVE_INFINITY;
    const last = Math.max(
      fault.injectedAt,
      ...unavailableAt.filter((at) => at >= fault.injectedAt && at < windowEnd),
    );
    return { ...fault, unavailableMs: last - fault.injectedAt };
  });
  const faultsByKind: ChaosReport["faultsByKind"] = {};
  for (const kind of new Set(faultRuns.map((fault) => fault.kind))) {
    const times = faultRuns.filter((fault) => fault.kind === kind).map((fault) => fault.unavailableMs);
    faultsByKind[kind] = {
      count: times.length,
      unavailableMsP50: percentile(times, 0.5),
      unavailableMsMax: Math.max(...times),
    };
  }
  const violations = [...run.checked.violations];
  // Before the first fault every part is up: nothing may be refused as unavailable then.
  const firstFault = Math.min(...run.faultRuns.map((fault) => fault.injectedAt));
  const beforeFaults = unavailable.filter((answer) => answer.at < firstFault);
  if (beforeFaults.length > 0)
    violations.push(
      `${beforeFaults.length} answers were 503 or lost before any fault was injected: ${[...new Set(beforeFaults.map((answer) => answer.told))].join("; ")}`,
    );
  if (run.checked.serverErrors > 0) violations.push(`${run.checked.serverErrors} answers were 500`);
  if (run.checked.unavailableLeft > 0)
    violations.push(`${run.checked.unavailableLeft} keys were still answered 503 when their retries ran out`);
  if (run.unsold > 0) violations.push(`${run.unsold} units left unsold while new buyers asked for them`);
  if (run.convergeMs === null)
    violations.push(`the drift check did not say in-sync within ${run.convergeWithinMs} ms of the last heal`);
  return {
    seed: run.seed,
    profile: run.profile,
    activityId: run.activityId,
    durationMs: run.durationMs,
    requests: run.requests,
    keys: run.keys.size,
    answers,
    faults: faultRuns,
    faultsByKind,
    dbaActions: run.dbaActions,
    ...run.checked,
    unsold: run.unsold,
    convergeMs: run.convergeMs,
    violations,
  };
}
