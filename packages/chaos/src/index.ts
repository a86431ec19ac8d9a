export { faultKinds } from "./faults.ts";
export { type ChaosProfile, profiles } from "./profiles.ts";
export { type ChaosReport, runChaos } from "./run.ts";
