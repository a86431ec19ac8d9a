export { histogramBuckets, parsePrometheus, quantileBetween, type Sample, sumOf } from "./prometheus.ts";
