// What a service exposes. Reading another service's metrics is @flashgate/telemetry/scrape.
export { createFastHistogram, type FastHistogram, type HistogramChild } from "./fast-histogram.ts";
export { operationalRoutes, type ReadinessProbe, serviceRoutes } from "./service-routes.ts";
