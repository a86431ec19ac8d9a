import type { Scenario } from "../lib/scenario.ts";
import { bigStockScenario } from "./bigstock.ts";
import { botsScenario } from "./bots.ts";
import { catalogueScenario } from "./catalogue.ts";
import { cdcBurstScenario } from "./cdc.ts";
import { cdcSteadyScenario } from "./cdc-steady.ts";
import { deadlineScenario } from "./deadline.ts";
import { driftBenchScenario } from "./drift.ts";
import { firstSecondScenario } from "./first-second.ts";
import { floodBenchScenario } from "./flood.ts";
import { cdcLagScenario } from "./lag.ts";
import { microCeilingsScenario } from "./micro.ts";
import { openLoopScenario } from "./open-loop.ts";
import { queuedAdmissionScenario } from "./queued.ts";
import { stormScenario } from "./storm.ts";
import { topologyBenchScenario } from "./topology.ts";

/** The scenarios on the bench stack, in the report's order. */
export const scenarios: Scenario[] = [
  openLoopScenario,
  stormScenario,
  firstSecondScenario,
  botsScenario,
  queuedAdmissionScenario,
  bigStockScenario,
  catalogueScenario,
  driftBenchScenario,
  microCeilingsScenario,
  floodBenchScenario,
  cdcBurstScenario,
  cdcSteadyScenario,
  deadlineScenario,
  cdcLagScenario,
  topologyBenchScenario,
];
