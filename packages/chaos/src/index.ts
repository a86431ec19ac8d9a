export { faultKinds } from "./faults.ts";
export { type ChaosProfile, profiles } from "./profiles.ts";
export type { ChaosReport } from "./report.ts";
export { runChaos } from "./run.ts";
