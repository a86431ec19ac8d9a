import { beforeAll } from "vitest";
import { proveCdcFlows } from "./cdc-probe.ts";

// Every integration file starts by proving that CDC flows (see proveCdcFlows).
beforeAll(() => proveCdcFlows(), 90_000);
