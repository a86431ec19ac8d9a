/** Where the apps listen by default, and Kafka Connect's REST API (docs/architecture.md, Stacks and ports). */
export const defaultPorts = {
  purchaseApi: 8080,
  /** The purchase API's metrics and probes, for operators (METRICS_PORT). */
  purchaseApiMetrics: 8081,
  cacheMaintainer: 8082,
  dashboard: 8084,
  connect: 8083,
} as const;
