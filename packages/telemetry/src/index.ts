export { createFastHistogram, type FastHistogram, type HistogramChild } from "./fast-histogram.ts";
export { histogramBuckets, parsePrometheus, quantileBetween, type Sample, sumOf } from "./prometheus.ts";
export { type ReadinessProbe, serviceRoutes } from "./service-routes.ts";
